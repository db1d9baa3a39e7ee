/**
 * The Bulk planner (src/scim/bulk/plan.ts), against a brute-force oracle on random requests:
 * the plan is a permutation of the request's operations; each operation comes after every POST
 * whose bulkId it references unless that POST reaches it back (a cycle); an operation fails as
 * circular (409, RFC 7644 3.7.1) exactly when its references lead back to it, and with 400 when
 * it references a bulkId no POST declares; the same body always gives the same plan.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { orderOperations, parseBulk, planBulk, referencesOf } from '../../src/scim/bulk/index.ts';

const BULK = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';

interface Spec {
  readonly post: boolean;
  /** Indices of operations whose bulkId this one references (only POSTs declare one). */
  readonly refs: readonly number[];
  readonly unknownRef: boolean;
  readonly inPath: boolean;
}

const specs = fc.array(
  fc.record({ post: fc.boolean(), refs: fc.array(fc.nat({ max: 24 }), { maxLength: 3 }), unknownRef: fc.boolean(), inPath: fc.boolean() }),
  { maxLength: 25 },
);

/** A BulkRequest for the specs: POST i declares b<i>; references go in data (members) and, for non-POSTs, the path. */
function requestOf(list: readonly Spec[]): { body: unknown; edges: number[][]; unknown: boolean[] } {
  const edges = list.map((s) => [...new Set(s.refs.filter((r) => r < list.length && list[r]!.post))]);
  const unknown = list.map((s) => s.unknownRef || s.refs.some((r) => r >= list.length || !list[r]!.post));
  const Operations = list.map((s, i) => {
    const values = s.refs.map((r) => `bulkId:b${r}`);
    if (s.unknownRef) values.push('bulkId:nowhere');
    const members = values.map((value) => ({ value }));
    if (s.post) return { method: 'POST', path: '/Groups', bulkId: `b${i}`, data: { displayName: `g${i}`, members } };
    const [first, ...rest] = values;
    const target = s.inPath && first !== undefined ? first : `plain${i}`;
    const memberValues = s.inPath ? rest : values;
    return { method: 'PATCH', path: `/Groups/${target}`, data: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: memberValues.map((value) => ({ value })) }] } };
  });
  return { body: { schemas: [BULK], Operations }, edges, unknown };
}

/** Whether `to` is reachable from `from` by one or more edges. */
function reaches(edges: readonly number[][], from: number, to: number): boolean {
  const seen = new Set<number>();
  const queue = [...(edges[from] ?? [])];
  while (queue.length > 0) {
    const v = queue.pop() as number;
    if (v === to) return true;
    if (seen.has(v)) continue;
    seen.add(v);
    queue.push(...(edges[v] ?? []));
  }
  return false;
}

describe('Bulk planner', () => {
  it('the plan is a permutation in dependency order, cycles and unknown references are detected, and it is deterministic', () => {
    fc.assert(
      fc.property(specs, (list) => {
        const { body, edges, unknown } = requestOf(list);
        const plan = planBulk(body);
        const order = plan.steps.map((s) => s.index);
        assert.deepEqual([...order].sort((a, b) => a - b), list.map((_, i) => i), 'a permutation of the operations');
        const position = new Map(order.map((index, at) => [index, at]));
        for (const step of plan.steps) {
          const i = step.index;
          for (const d of edges[i]!) {
            if (d !== i && !reaches(edges, d, i)) assert.ok(position.get(d)! < position.get(i)!, `operation ${i} runs after the POST ${d} it references`);
          }
          const circular = reaches(edges, i, i);
          const expected = unknown[i] ? 400 : circular ? 409 : undefined;
          assert.equal(step.failure?.status, expected, `operation ${i}: ${step.failure?.message ?? 'no failure'}`);
        }
        assert.deepEqual(planBulk(body).steps.map((s) => s.index), order, 'the same body gives the same plan');
      }),
      { numRuns: 300, seed: 3207 },
    );
  });

  it('without references the plan is the request order', () => {
    const Operations = Array.from({ length: 5 }, (_, i) => ({ method: 'POST', path: '/Users', bulkId: `u${i}`, data: { userName: `u${i}` } }));
    assert.deepEqual(planBulk({ schemas: [BULK], Operations }).steps.map((s) => s.index), [0, 1, 2, 3, 4]);
  });

  it('RFC 7644 3.7.1: the example\'s two groups referencing each other are both circular (409); a self-reference is too', () => {
    const plan = planBulk({
      schemas: [BULK],
      Operations: [
        { method: 'POST', path: '/Groups', bulkId: 'qwerty', data: { displayName: 'Group A', members: [{ type: 'Group', value: 'bulkId:ytrewq' }] } },
        { method: 'POST', path: '/Groups', bulkId: 'ytrewq', data: { displayName: 'Group B', members: [{ type: 'Group', value: 'bulkId:qwerty' }] } },
        { method: 'POST', path: '/Groups', bulkId: 'self', data: { displayName: 'Self', members: [{ value: 'bulkId:self' }] } },
      ],
    });
    assert.deepEqual(plan.steps.map((s) => s.failure?.status), [409, 409, 409]);
    assert.match(plan.steps[0]!.failure!.message, /qwerty, ytrewq/);
  });

  it('references are whole `value` sub-attributes at any depth below the top level, and path segments; top-level strings, passwords and text that merely contains one are not', () => {
    assert.deepEqual(
      referencesOf({
        path: '/Users/bulkId:p',
        data: { a: 'bulkId:x', nested: [{ deep: { value: 'bulkId:y' } }], prose: 'see bulkId:z', bare: 'bulkId:', n: 3, password: 'bulkId:pw', members: [{ value: 'bulkId:m', display: 'bulkId:d' }] },
      }),
      ['p', 'y', 'm'],
    );
    assert.deepEqual(
      referencesOf({ method: 'POST', path: '/Users', data: { 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: 'bulkId:e', manager: { value: 'bulkId:boss' } } } }),
      ['boss'],
      "an extension's top-level strings are not references, its complex attributes' values are",
    );
    assert.deepEqual(
      referencesOf({
        method: 'PATCH',
        path: '/Users/u',
        data: {
          schemas: [],
          Operations: [
            { op: 'replace', path: 'title', value: 'bulkId:t' },
            { op: 'replace', path: 'password', value: 'bulkId:pw' },
            { op: 'replace', path: 'manager.value', value: 'bulkId:a' },
            { op: 'add', path: 'members', value: [{ value: 'bulkId:b' }] },
            { op: 'replace', value: { title: 'bulkId:t2', password: 'bulkId:pw2', manager: { value: 'bulkId:c' } } },
          ],
        },
      }),
      ['a', 'b', 'c'],
      'a PATCH value is a reference only where its path names a value sub-attribute or it holds value sub-attributes',
    );
    assert.deepEqual(
      referencesOf({ method: 'PATCH', path: '/Groups/g', data: { schemas: [], Operations: [{ op: 'remove', path: 'members[value eq "bulkId:m"]' }] } }),
      ['m'],
      'a quoted reference in a PATCH path filter',
    );
  });

  it('1,000 operations all referencing each other are planned in work linear in operations and references (one cycle detail for the whole component)', () => {
    const n = 1000;
    const fanOut = 178;
    const Operations = Array.from({ length: n }, (_, i) => ({
      method: 'POST',
      path: '/Groups',
      bulkId: String(i),
      data: { displayName: `g${i}`, members: Array.from({ length: fanOut }, (_, k) => ({ value: `bulkId:${(i + 1 + k) % n}` })) },
    }));
    const work = { edges: 0, named: 0 };
    const steps = orderOperations(parseBulk({ schemas: [BULK], Operations }).operations, work);
    assert.equal(steps.length, n);
    assert.ok(steps.every((s) => s.failure?.status === 409));
    assert.match(steps[500]!.failure!.message, /\(0, 1, 2, 3, 4\)/, 'the detail names the first bulkIds of the cycle');
    assert.equal(work.named, 1, 'the component is named once, not once per member');
    // Each reference is followed once by the cycle search and once by the ordering walk.
    assert.ok(work.edges <= 2 * n * fanOut, `edges followed: ${work.edges} for ${n * fanOut} references`);
  });

  it('a chain of 1000 operations in reverse order is planned dependencies first', () => {
    const Operations = Array.from({ length: 1000 }, (_, i) => ({
      method: 'POST',
      path: '/Groups',
      bulkId: `c${i}`,
      data: { displayName: `c${i}`, ...(i < 999 ? { members: [{ value: `bulkId:c${i + 1}` }] } : {}) },
    }));
    const plan = planBulk({ schemas: [BULK], Operations });
    assert.deepEqual(plan.steps.map((s) => s.index), Array.from({ length: 1000 }, (_, i) => 999 - i));
    assert.ok(plan.steps.every((s) => s.failure === undefined));
  });
});
