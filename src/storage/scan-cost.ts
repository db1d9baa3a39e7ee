/**
 * What a list or search filter will cost before it runs,
 * in row evaluations: how many of its tests the statement evaluates, times the rows it evaluates
 * them on. Storage owns the estimate because it alone knows which tests an index answers (the
 * key columns, the prefix and suffix ranges of repos/list/indexed.ts) and which are evaluated row by
 * row (a JSON read, a case fold, a pattern, an element or membership subquery). The SCIM side
 * compares the estimate with the team's `filter.cost` and refuses over it (scim/scans.ts); this
 * module refuses nothing and runs no filter.
 *
 * The model, deliberately simple and conservative:
 * - a test an index answers (an equality on a key column, a prefix or suffix range on an
 *   indexed column, a substring test PostgreSQL's trigrams answer, a flag a partial index holds
 *   the rows of) is read from the index; it is
 *   rechecked on its matches, at most the rows of the walk the planner may take for it
 *   (repos/list/plan.ts PROBE_ROWS) or the team's rows when fewer;
 * - every other test is evaluated on every listed row of the team (a scan), once per row, and a
 *   test of a JSON array's elements or of a resource's memberships once per element or
 *   membership, taken as NESTED_ROWS per row;
 * - under `not` no test is answered by an index (its complement is a scan);
 * - a filter that is a conjunction with an equality on a key column reads one row;
 * - a filter of index ranges alone is bounded without reading the team's count (PROBE_ROWS
 *   rows each), so that estimating it runs no statement.
 */
import type { DialectHooks } from './dialect.ts';
import type { OrderKey, Predicate } from './predicate.ts';
import type { ResourceTable } from './predicate-sql.ts';
import { KEY_COLUMNS, partialIndexAnswers, PREFIX_INDEXED, SUFFIX_INDEXED } from './repos/list/indexed.ts';
import { PROBE_ROWS } from './repos/list/plan.ts';
import { listedCount } from './repos/paging.ts';
import type { Executor } from './types.ts';

/** The folded keys whose indexes order by code point on both engines, as ranges compare (migrations 014 and 032). */
const ORDERED_KEYS: Record<ResourceTable, ReadonlySet<string>> = { users: new Set(['user_name_key', 'user_name_search']), groups: new Set() };

/** The rows an element or membership test reads per resource row, as the estimate takes it. */
export const NESTED_ROWS = 4;

/** A filter's tests by how they are evaluated. */
export interface FilterTerms {
  /** Evaluations per listed row of the team: the tests no index answers. */
  readonly scanned: number;
  /** Tests an index range answers: rechecked on at most PROBE_ROWS rows each. */
  readonly ranged: number;
  /** Whether the filter reads one row by a key (a conjunction holding a key equality). */
  readonly byKey: boolean;
  /**
   * Whether the list is sorted by a key no index gives (`sortScans`): every row the filter lets
   * through is read and sorted. Not in the cost (a sort is what a client asks of a list, and a
   * team's own console offers several), but the list is a scan (`scans`).
   */
  readonly sorted?: boolean;
  /**
   * Whether a test may walk a set of rows no bound keeps small: who holds a role or entitlement
   * (`holds`: its holders may be the whole team, and an index page counts them all). Not in the
   * cost (an index answers each probe, and an ordinary `access=` list must not be refused), but
   * the list is a scan (`scans`): it takes a scan place and runs under the statement deadline.
   */
  readonly walks?: boolean;
}

/** Whether `p` (outside any `not`) is answered by an index of `table`, as the SQL compares it. */
function indexAnswers(p: Predicate & { kind: 'text' }, table: ResourceTable, hooks: DialectHooks): boolean {
  if (p.scalar.at !== 'column') return false;
  const compared = p.folded ? p.scalar.folded : p.scalar.column;
  if (p.op === 'eq') return compared !== undefined && KEY_COLUMNS[table].has(compared);
  // A range of the folded userName: its code-point ordered index (migration 014).
  if (p.op === 'gt' || p.op === 'ge' || p.op === 'lt' || p.op === 'le') return compared !== undefined && ORDERED_KEYS[table].has(compared);
  if (!PREFIX_INDEXED[table].has(p.scalar.column)) return false;
  if (p.op === 'sw') return true;
  if (p.op === 'ew') return hooks.substringIndexed || SUFFIX_INDEXED[table].has(p.scalar.column);
  // co: trigrams on PostgreSQL; on SQLite a test of every key of the index (dialect.ts contains).
  return p.op === 'co' && hooks.substringIndexed;
}

/** Whether `p` holds, in a conjunction outside any `not`, an exact equality on a grants row's value. */
function pinsGrantValue(p: Predicate): boolean {
  if (p.kind === 'and') return pinsGrantValue(p.left) || pinsGrantValue(p.right);
  return p.kind === 'text' && p.op === 'eq' && !p.folded && p.scalar.at === 'grant' && p.scalar.field === 'value';
}

const sum = (a: FilterTerms, b: FilterTerms, byKey: boolean): FilterTerms => ({
  scanned: a.scanned + b.scanned,
  ranged: a.ranged + b.ranged,
  byKey,
  ...(a.walks || b.walks ? { walks: true } : {}),
});

const SCANNED: FilterTerms = { scanned: 1, ranged: 0, byKey: false };
const NOTHING: FilterTerms = { scanned: 0, ranged: 0, byKey: false };

/**
 * The tests of `p` by how they are evaluated; `negated` under a `not`. `inCreationOrder`: the list
 * is in creation order, the order of the partial indexes of flags (PARTIAL_INDEXED_FLAGS); in
 * another indexed order (the folded userName) a walk of that order would test the flag on every
 * row it passes, so there the flag is a scanned test.
 */
export function filterTerms(p: Predicate, table: ResourceTable, hooks: DialectHooks, negated = false, inCreationOrder = true): FilterTerms {
  switch (p.kind) {
    case 'always':
    case 'deadline':
      return NOTHING;
    case 'and': {
      const left = filterTerms(p.left, table, hooks, negated, inCreationOrder);
      const right = filterTerms(p.right, table, hooks, negated, inCreationOrder);
      return sum(left, right, !negated && (left.byKey || right.byKey));
    }
    case 'or': {
      const left = filterTerms(p.left, table, hooks, negated, inCreationOrder);
      const right = filterTerms(p.right, table, hooks, negated, inCreationOrder);
      return sum(left, right, !negated && left.byKey && right.byKey);
    }
    case 'not':
      return filterTerms(p.predicate, table, hooks, true, inCreationOrder);
    case 'text':
      if (!negated && indexAnswers(p, table, hooks)) return { scanned: 0, ranged: 1, byKey: p.op === 'eq' };
      return SCANNED;
    case 'flag':
      // A flag a partial index holds (the deactivated users): that index's range of the team.
      if (!negated && inCreationOrder && partialIndexAnswers(p, table)) return { scanned: 0, ranged: 1, byKey: false };
      return SCANNED;
    case 'known':
    case 'number':
      return SCANNED;
    case 'granted':
      // An equality on the entry's value reads its holders from the grants key: a range.
      if (!negated && pinsGrantValue(p.where)) return { scanned: 0, ranged: 1, byKey: false };
      return { scanned: NESTED_ROWS * Math.max(1, filterTerms(p.where, table, hooks, true).scanned), ranged: 0, byKey: false };
    case 'holds':
      // Index probes (user_grants by user or entry, the entry's mapped groups' member keys), but
      // over holders that may be the whole team: it walks (a scan place, the deadline). Under
      // `not` its complement is a scan.
      return negated ? { scanned: NESTED_ROWS, ranged: 0, byKey: false } : { scanned: 0, ranged: 1, byKey: false, walks: true };
    case 'anyElement':
    case 'related': {
      // The element's or membership's tests are evaluated in a subquery per row, indexed or not.
      const inner = filterTerms(p.where, table, hooks, true);
      return { scanned: NESTED_ROWS * Math.max(1, inner.scanned), ranged: 0, byKey: false };
    }
  }
}

/** A filter's estimated cost and what it is made of. */
export interface FilterCost extends FilterTerms {
  /** The rows a scan of the filter evaluates its scanned tests on. */
  readonly rows: number;
  /** Row evaluations: scanned tests times rows, plus each ranged test's recheck. */
  readonly cost: number;
}

/** Whether the filter's statement evaluates tests on every listed row (the scan gate's concern, scim/scans.ts). */
export const scans = (terms: FilterTerms): boolean => (terms.scanned > 0 || terms.sorted === true || terms.walks === true) && !terms.byKey;

/** The cost of `terms` over a team of `listed` rows. */
export function costOf(terms: FilterTerms, listed: number): FilterCost {
  const rows = terms.byKey ? Math.min(1, listed) : listed;
  return { ...terms, rows, cost: terms.scanned * rows + terms.ranged * Math.min(rows, PROBE_ROWS) };
}

/**
 * Whether a list sorted by `sort` reads and sorts every row its filter lets through: any key but
 * the folded userName, whose index is ordered by code point as sorts compare (migration 014).
 */
export function sortScans(sort: OrderKey, table: ResourceTable): boolean {
  if (sort.kind !== 'scalar' || sort.scalar.at !== 'column' || !sort.folded) return true;
  return sort.scalar.folded === undefined || !ORDERED_KEYS[table].has(sort.scalar.folded);
}

/**
 * The estimated cost of listing `table`'s rows of a team that satisfy `where` (and whether its
 * order `sort` makes it a scan); the team's row count comes from its counters (one read by key),
 * read only when the filter is not free.
 */
export async function filterCost(ex: Executor, hooks: DialectHooks, table: ResourceTable, teamId: string, where: Predicate | undefined, onlyActive: boolean, sort?: OrderKey): Promise<FilterCost> {
  const filtered = where ? filterTerms(where, table, hooks, false, sort === undefined) : NOTHING;
  const terms = sort && sortScans(sort, table) ? { ...filtered, sorted: true } : filtered;
  if (terms.scanned === 0 && terms.ranged === 0) return costOf(terms, 0);
  if (terms.byKey) return costOf(terms, 1);
  // Index ranges alone: their bound, with no statement (estimating a list of index ranges runs
  // no statement).
  if (terms.scanned === 0) return costOf(terms, PROBE_ROWS);
  return costOf(terms, await listedCount(ex, table, teamId, onlyActive));
}
