/**
 * The list planner: which way a page of Users or Groups is found, decided from the request alone
 * (`planList`, pure: no database, no clock; the one dialect fact it needs comes in the window as
 * data). Each plan names a strategy, which lives in its own module of this folder and is run by
 * repos/paging.ts `runPlan`. Every plan returns exactly the rows, order, total and positions of
 * the plain query (`offsetQuery` or `seekQuery`): a plan changes only how they are found
 * (test/unit/list-plan.test.ts states which window takes which plan; the property tests
 * compare each plan with the plain query).
 *
 * Some plans go on in steps whose choice depends on the data (how many rows match, where they
 * lie in the order): those steps belong to the strategy, and the limits they use are part of the
 * plan, so a test can make them small enough for every step to answer.
 */
import type { Predicate } from '../../predicate.ts';
import type { ResourceTable } from '../../predicate-sql.ts';
import { mayMatchMany, ORDER_INDEXED } from './indexed.ts';
import type { EngineFacts } from './indexed.ts';
import type { ListWindow, Position } from './window.ts';

/** Offsets below this are walked from the start whatever the list's length (a short walk; no counters read). */
export const FROM_END_AFTER = 1000;

/** The most matches read whole and sorted (matchSteps' first step, byKeyPrefix's merge). */
export const FEW_MATCHES = 500;
/** The most rows of the list's order a walk reads for a filtered page (matchSteps' probe, byKeyPrefix's walk). */
export const PROBE_ROWS = 5_000;
/**
 * Rows per query of a walk in userName order (byKeyPrefix): a page of 51 where one row in twenty
 * matches, in one query; sparser matches take more, up to PROBE_ROWS.
 */
export const WALK_CHUNK = 1_000;

/** The match steps' limits: how many matches are read whole (`few`), how many rows the probe walks (`probe`). */
export interface MatchStepLimits {
  readonly few: number;
  readonly probe: number;
}

/** How many rest matches make a merge (`few`); how many listed rows a walk reads at most (`walk`), `chunk` rows per query. */
export interface KeyPrefixLimits {
  readonly few: number;
  readonly walk: number;
  readonly chunk: number;
}

/** The plain query: the filtered rows ordered, then an offset counted off (index paging). */
export interface OffsetQuery {
  readonly kind: 'offsetQuery';
}
/** The plain query: the filtered rows ordered, sought past a position (cursor paging). */
export interface SeekQuery {
  readonly kind: 'seekQuery';
}
export type PlainPlan = OffsetQuery | SeekQuery;

export type ListPlan =
  /** A limit of 0 asks for the total alone (RFC 7644 3.4.2.4): only the count runs. */
  | { readonly kind: 'countOnly' }
  /**
   * Unsorted, filtered by a test a broad value fills from an index (`sw`, `ew`, `co`; indexed.ts
   * mayMatchMany): every match when there are few, else the first rows of the creation order
   * when they hold the page, else every match sorted (list/match-steps.ts).
   */
  | { readonly kind: 'matchSteps'; readonly limits: MatchStepLimits }
  /**
   * Sorted by a key an index reads in order, filtered by an OR holding a prefix test of that key
   * (the console's word search): the page from the key's index ranges, merged with the other
   * disjuncts' matches or walked (list/by-key-prefix.ts); `otherwise` when neither holds it.
   */
  | { readonly kind: 'byKeyPrefix'; readonly prefixes: readonly string[]; readonly rest: Predicate | undefined; readonly limits: KeyPrefixLimits; readonly otherwise: PlainPlan }
  /** A later slice of an index page in creation order: sought after the previous slice's last row, `after` (list/resumed.ts). */
  | { readonly kind: 'resumedSlice'; readonly after: Position }
  /** Unfiltered users in ascending creation order, deep in the list: found through the creation-time counters (list/offset-by-buckets.ts). */
  | { readonly kind: 'offsetByBuckets' }
  /**
   * Unfiltered, in creation order, past the first row: the offset walked in the covering index
   * alone; from the list's end when `fromEndPastHalf` and the page lies in its second half, which
   * the team's counters tell (list/offset-by-index.ts).
   */
  | { readonly kind: 'offsetByIndex'; readonly fromEndPastHalf: boolean }
  | OffsetQuery
  | SeekQuery;

export type ListPlanKind = ListPlan['kind'];

/** What decides the plan: the list's window, the table listed, and the engine's facts. */
export interface PlanWindow extends ListWindow {
  readonly table: ResourceTable;
  readonly engine: EngineFacts;
}

const disjuncts = (p: Predicate): Predicate[] => (p.kind === 'or' ? [...disjuncts(p.left), ...disjuncts(p.right)] : [p]);

/**
 * The key prefixes of a byKeyPrefix page: sorted by an ORDER_INDEXED key (case-insensitively,
 * as userName always is), filtered by an OR of which some disjunct is a `sw` on that very key.
 * Undefined for any other window.
 */
function keyPrefixesOf(w: PlanWindow): { prefixes: string[]; rest: Predicate | undefined } | undefined {
  const { sort, where } = w;
  if (!sort || !where || sort.kind !== 'scalar' || sort.as !== 'text' || !sort.folded || sort.scalar.at !== 'column') return undefined;
  const { column, folded } = sort.scalar;
  if (!ORDER_INDEXED[w.table].some((i) => i.column === column && i.folded === folded)) return undefined;
  const prefixes: string[] = [];
  let rest: Predicate | undefined;
  for (const d of disjuncts(where)) {
    if (d.kind === 'text' && d.op === 'sw' && d.folded && d.scalar.at === 'column' && d.scalar.column === column && d.scalar.folded === folded) prefixes.push(d.value);
    else rest = rest ? { kind: 'or', left: rest, right: d } : d;
  }
  return prefixes.length === 0 ? undefined : { prefixes, rest };
}

/** The plan of an index page (an offset) that no filter or sort key plans otherwise. */
function offsetPlan(w: PlanWindow): ListPlan {
  const offset = w.offset ?? 0;
  const inCreationOrder = w.sort === undefined;
  if (!inCreationOrder) return { kind: 'offsetQuery' };
  if (w.resumeAfter) return { kind: 'resumedSlice', after: w.resumeAfter };
  if (w.where) return { kind: 'offsetQuery' };
  if (w.table === 'users' && !w.descending && offset >= FROM_END_AFTER) return { kind: 'offsetByBuckets' };
  if (offset > 0) return { kind: 'offsetByIndex', fromEndPastHalf: offset >= FROM_END_AFTER };
  return { kind: 'offsetQuery' };
}

/**
 * The plan that finds `w`'s page, the first of these that fits:
 *
 * 1. a limit of 0: `countOnly`;
 * 2. unsorted, filtered by a test whose index range a broad value fills (mayMatchMany): `matchSteps`;
 * 3. sorted by an index-ordered key, filtered by an OR holding a prefix of it: `byKeyPrefix`;
 * 4. a cursor: `seekQuery`;
 * 5. an offset (offsetPlan): sorted, the plain `offsetQuery`; else a later slice after a known
 *    row, `resumedSlice`; else filtered, `offsetQuery`; else deep in ascending users,
 *    `offsetByBuckets`; else past the first row, `offsetByIndex`; else `offsetQuery`.
 */
export function planList(w: PlanWindow): ListPlan {
  if (w.limit === 0) return { kind: 'countOnly' };
  if (w.where && !w.sort && mayMatchMany(w.where, w.table, w.engine)) return { kind: 'matchSteps', limits: { few: FEW_MATCHES, probe: PROBE_ROWS } };
  const plain: PlainPlan = w.seek ? { kind: 'seekQuery' } : { kind: 'offsetQuery' };
  const keyPrefixes = keyPrefixesOf(w);
  if (keyPrefixes) return { kind: 'byKeyPrefix', ...keyPrefixes, limits: { few: FEW_MATCHES, walk: PROBE_ROWS, chunk: WALK_CHUNK }, otherwise: plain };
  return w.seek ? plain : offsetPlan(w);
}
