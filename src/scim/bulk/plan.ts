/**
 * A Bulk request's plan: its operations in the order they run. RFC 7644 3.7 lets the server
 * reorder operations as long as the client's intent is kept; 3.7.2 has a later operation name a
 * resource an earlier POST creates by `bulkId:<id>`. Here an operation runs after every POST whose
 * bulkId it references, wherever it sits in the request: the order is the request's, with each
 * operation's prerequisites pulled in just before it (a depth-first walk in request order), so
 * the same body always gives the same plan.
 *
 * A reference is a string value that is exactly `bulkId:<id>`, anywhere in `data` (a group's
 * `members[].value`, an extension's `manager.value`, a PATCH operation's value), a path segment
 * (`/Groups/bulkId:<id>`), or a quoted value in a PATCH operation's path filter
 * (`members[value eq "bulkId:<id>"]`). A reference to a bulkId no POST of the request declares fails
 * its operation with 400 invalidValue. Operations whose references form a cycle (3.7.1) fail with
 * 409: none of them can be created first with its references resolved, and this server does not
 * split a create into a create and a later PATCH. Both failures are per operation; the rest of the
 * request runs.
 */
import { badRequest, ScimError } from '../errors.ts';
import { parseBulk } from './parse.ts';
import type { BulkOperation } from './parse.ts';

export const BULK_REF_PREFIX = 'bulkId:';

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

const refOf = (value: string): string | undefined =>
  value.startsWith(BULK_REF_PREFIX) && value.length > BULK_REF_PREFIX.length ? value.slice(BULK_REF_PREFIX.length) : undefined;

function collect(value: unknown, out: Set<string>): void {
  if (typeof value === 'string') {
    const ref = refOf(value);
    if (ref !== undefined) out.add(ref);
  } else if (Array.isArray(value)) {
    for (const v of value) collect(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) collect(v, out);
  }
}

/** A quoted reference inside a PATCH operation's path filter: members[value eq "bulkId:x"]. */
export const QUOTED_REF = /"bulkId:([^"\\]+)"/g;

const keyed = (object: Record<string, unknown>, name: string): unknown => {
  const key = Object.keys(object).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : object[key];
};

/** The `path` strings of a PatchOp's operations (where a value filter may name a bulkId). */
export function patchPaths(data: unknown): string[] {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return [];
  const operations = keyed(data as Record<string, unknown>, 'Operations');
  if (!Array.isArray(operations)) return [];
  return operations.flatMap((op) => {
    const path = op !== null && typeof op === 'object' && !Array.isArray(op) ? keyed(op as Record<string, unknown>, 'path') : undefined;
    return typeof path === 'string' ? [path] : [];
  });
}

/** The bulkIds an operation references: its path's segments, its data's string values, and quoted ones in a PATCH's path filters. */
export function referencesOf(op: Pick<BulkOperation, 'path' | 'data'> & { readonly method?: string }): string[] {
  const out = new Set<string>();
  for (const segment of op.path.split('/')) {
    const ref = refOf(segment);
    if (ref !== undefined) out.add(ref);
  }
  collect(op.data, out);
  if (op.method === undefined || op.method === 'PATCH') {
    for (const path of patchPaths(op.data)) for (const match of path.matchAll(QUOTED_REF)) if (match[1]) out.add(match[1]);
  }
  return [...out];
}

/** The operations in a nontrivial strongly connected component or referencing themselves (Tarjan). */
function cyclic(edges: readonly (readonly number[])[]): Set<number> {
  const n = edges.length;
  const order = new Array<number>(n).fill(-1);
  const low = new Array<number>(n).fill(0);
  const onStack = new Array<boolean>(n).fill(false);
  const stack: number[] = [];
  const out = new Set<number>();
  let counter = 0;
  const visit = (v: number): void => {
    order[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = true;
    for (const w of edges[v] ?? []) {
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
    if (component.length > 1 || (edges[v] ?? []).includes(v)) for (const w of component) out.add(w);
  };
  for (let v = 0; v < n; v++) if (order[v] === -1) visit(v);
  return out;
}

/**
 * Orders checked operations: each after the POSTs it references (unless they form a cycle),
 * otherwise in request order. Exported for the planner's property test.
 */
export function orderOperations(operations: readonly BulkOperation[]): PlannedOperation[] {
  const declared = new Map<string, number>();
  for (const op of operations) if (op.method === 'POST' && op.bulkId !== undefined) declared.set(op.bulkId, op.index);
  const references = operations.map((op) => referencesOf(op));
  // edges[i]: the operations i must run after (the POSTs declaring the bulkIds it references).
  const edges = references.map((refs) => refs.flatMap((r) => (declared.has(r) ? [declared.get(r) as number] : [])));
  const circular = cyclic(edges);
  const planned = operations.map((op, i): PlannedOperation => {
    const refs = references[i] ?? [];
    const unknown = refs.find((r) => !declared.has(r));
    const failure =
      unknown !== undefined
        ? badRequest('invalidValue', `Operations[${op.index}] references bulkId:${unknown}, which no POST of this bulk request declares`)
        : circular.has(i)
          ? new ScimError(409, `Operations[${op.index}] is part of a circular reference between bulkIds (${cycleNames(i, edges, operations, circular)}); create one of them without the reference and add it with a later PATCH`)
          : undefined;
    return { ...op, references: refs, ...(failure ? { failure } : {}) };
  });
  const placed = new Array<boolean>(operations.length).fill(false);
  const steps: PlannedOperation[] = [];
  const place = (i: number): void => {
    if (placed[i]) return;
    placed[i] = true;
    for (const j of edges[i] ?? []) place(j);
    steps.push(planned[i] as PlannedOperation);
  };
  for (let i = 0; i < operations.length; i++) place(i);
  return steps;
}

/** The bulkIds of the cycle members `i` reaches, for the error's detail. */
function cycleNames(i: number, edges: readonly (readonly number[])[], operations: readonly BulkOperation[], circular: Set<number>): string {
  const seen = new Set<number>([i]);
  const queue = [i];
  while (queue.length > 0) {
    const v = queue.shift() as number;
    for (const w of edges[v] ?? []) {
      if (circular.has(w) && !seen.has(w)) {
        seen.add(w);
        queue.push(w);
      }
    }
  }
  return [...seen]
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
