/**
 * A Bulk request's plan: its operations in the order they run. RFC 7644 3.7 lets the server
 * reorder operations as long as the client's intent is kept; 3.7.2 has a later operation name a
 * resource an earlier POST creates by `bulkId:<id>`. Here an operation runs after every POST whose
 * bulkId it references, wherever it sits in the request: the order is the request's, with each
 * operation's prerequisites pulled in just before it (a depth-first walk in request order), so
 * the same body always gives the same plan.
 *
 * A reference is a string value that is exactly `bulkId:<id>` in a reference value of `data` (a
 * group's `members[].value`, an extension's `manager.value`, a PATCH operation's value for such a
 * path: references.ts lists the places), a path segment (`/Groups/bulkId:<id>`), or a quoted value
 * in a PATCH operation's path filter (`members[value eq "bulkId:<id>"]`). A reference to a bulkId no POST of the request declares fails
 * its operation with 400 invalidValue. Operations whose references form a cycle (3.7.1) fail with
 * 409: none of them can be created first with its references resolved, and this server does not
 * split a create into a create and a later PATCH. Both failures are per operation; the rest of the
 * request runs.
 */
import { badRequest, ScimError } from '../errors.ts';
import { parseBulk } from './parse.ts';
import type { BulkOperation } from './parse.ts';
import { mapReferences, refOf } from './references.ts';

export { BULK_REF_PREFIX, QUOTED_REF } from './references.ts';

export interface PlannedOperation extends BulkOperation {
  /** The bulkIds it references, each once, in the order they first appear (path first, then data). */
  readonly references: readonly string[];
  /** Known before it runs: an unknown bulkId (400) or a circular reference (409). */
  readonly failure?: ScimError;
}

export interface BulkPlan {
  readonly failOnErrors?: number;
  /** Execution order. */
  readonly steps: readonly PlannedOperation[];
  /** How many operations the request holds (the steps are all of them, reordered). */
  readonly size: number;
}

/** The bulkIds an operation references: its path's segments, then the reference values of its data (references.ts), each once. */
export function referencesOf(op: Pick<BulkOperation, 'path' | 'data'> & { readonly method?: string }): string[] {
  const out = new Set<string>();
  for (const segment of op.path.split('/')) {
    const ref = refOf(segment);
    if (ref !== undefined) out.add(ref);
  }
  mapReferences(op.method ?? 'POST', op.data, (ref) => {
    out.add(ref);
    return undefined;
  });
  return [...out];
}

/** Work counters of the planner, for its tests (a linear bound on a worst case, not a timing). */
export interface PlanWork {
  /** Edges followed by the cycle search and the ordering walk. */
  edges: number;
  /** Operations whose failure detail named a cycle. */
  named: number;
}

/** The operations in a nontrivial strongly connected component or referencing themselves (Tarjan), each mapped to its component: linear in operations and references. */
function cyclic(edges: readonly (readonly number[])[], work: PlanWork): Map<number, readonly number[]> {
  const n = edges.length;
  const order = new Array<number>(n).fill(-1);
  const low = new Array<number>(n).fill(0);
  const onStack = new Array<boolean>(n).fill(false);
  const stack: number[] = [];
  const out = new Map<number, readonly number[]>();
  let counter = 0;
  const visit = (v: number): void => {
    order[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = true;
    for (const w of edges[v] ?? []) {
      work.edges++;
      if (order[w] === -1) {
        visit(w);
        low[v] = Math.min(low[v] ?? 0, low[w] ?? 0);
      } else if (onStack[w]) {
        low[v] = Math.min(low[v] ?? 0, order[w] ?? 0);
      }
    }
    if (low[v] !== order[v]) return;
    const component: number[] = [];
    for (;;) {
      const w = stack.pop() as number;
      onStack[w] = false;
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (edges[v] ?? []).includes(v)) for (const w of component) out.set(w, component);
  };
  for (let v = 0; v < n; v++) if (order[v] === -1) visit(v);
  return out;
}

/**
 * Orders checked operations: each after the POSTs it references (unless they form a cycle),
 * otherwise in request order. Exported for the planner's property test.
 */
export function orderOperations(operations: readonly BulkOperation[], work: PlanWork = { edges: 0, named: 0 }): PlannedOperation[] {
  const declared = new Map<string, number>();
  for (const op of operations) if (op.method === 'POST' && op.bulkId !== undefined) declared.set(op.bulkId, op.index);
  const references = operations.map((op) => referencesOf(op));
  // edges[i]: the operations i must run after (the POSTs declaring the bulkIds it references).
  const edges = references.map((refs) => refs.flatMap((r) => (declared.has(r) ? [declared.get(r) as number] : [])));
  const circular = cyclic(edges, work);
  // A component's detail is built once and shared by its members.
  const names = new Map<readonly number[], string>();
  const nameOf = (component: readonly number[]): string => {
    let name = names.get(component);
    if (name === undefined) {
      work.named++;
      name = cycleNames(component, operations);
      names.set(component, name);
    }
    return name;
  };
  const planned = operations.map((op, i): PlannedOperation => {
    const refs = references[i] ?? [];
    const unknown = refs.find((r) => !declared.has(r));
    const failure =
      unknown !== undefined
        ? badRequest('invalidValue', `Operations[${op.index}] references bulkId:${unknown}, which no POST of this bulk request declares`)
        : circular.has(i)
          ? new ScimError(409, `Operations[${op.index}] is part of a circular reference between bulkIds (${nameOf(circular.get(i) as readonly number[])}); create one of them without the reference and add it with a later PATCH`)
          : undefined;
    return { ...op, references: refs, ...(failure ? { failure } : {}) };
  });
  const placed = new Array<boolean>(operations.length).fill(false);
  const steps: PlannedOperation[] = [];
  const place = (i: number): void => {
    if (placed[i]) return;
    placed[i] = true;
    for (const j of edges[i] ?? []) {
      work.edges++;
      place(j);
    }
    steps.push(planned[i] as PlannedOperation);
  };
  for (let i = 0; i < operations.length; i++) place(i);
  return steps;
}

/** The first bulkIds (in request order) of a cycle's members, for the error's detail. */
function cycleNames(component: readonly number[], operations: readonly BulkOperation[]): string {
  return [...component]
    .sort((a, b) => a - b)
    .slice(0, 5)
    .map((v) => operations[v]?.bulkId ?? `Operations[${v}]`)
    .join(', ');
}

/** Validates a BulkRequest body and orders it (dependency order); 400 invalidSyntax for a malformed request; 413 over maxOperations. Deterministic: the same body always gives the same plan. */
export function planBulk(body: unknown): BulkPlan {
  const parsed = parseBulk(body);
  return {
    ...(parsed.failOnErrors !== undefined ? { failOnErrors: parsed.failOnErrors } : {}),
    steps: orderOperations(parsed.operations),
    size: parsed.operations.length,
  };
}
