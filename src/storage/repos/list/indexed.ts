/**
 * Which tests of a list filter an index answers, on both engines, as the list planner
 * (plan.ts) and the filter cost estimate (scan-cost.ts) read it: the key columns (an equality
 * reads one index range), the text columns with prefix and suffix ranges, and the sort key an
 * index reads in order. Facts about the migrations' indexes, as data; no query is built here.
 */
import type { Predicate } from '../../predicate.ts';
import type { ResourceTable } from '../../predicate-sql.ts';

/**
 * The text columns an index answers a prefix test on, on both engines (migrations 006 and 012:
 * the folded userName and displayName, the folded given and family names; 032: their
 * accent-folded copies, which the console's word search compares), and among them those
 * whose suffix and substring tests are indexed on both (on SQLite the reversed folded keys for a
 * suffix, a scan of the folded keys' index for a substring; trigrams serve every one of them on
 * PostgreSQL).
 */
export const PREFIX_INDEXED: Record<ResourceTable, ReadonlySet<string>> = {
  users: new Set(['user_name', 'given_name', 'family_name']),
  groups: new Set(['display_name']),
};
export const SUFFIX_INDEXED: Record<ResourceTable, ReadonlySet<string>> = { users: new Set(['user_name']), groups: new Set(['display_name']) };

/**
 * The columns that find a resource by its key, each indexed (the id by its primary key; the
 * folded userName and displayName and externalId by indexes led by the team, migrations 001 and
 * 006): an equality on one of them reads a few rows from one index range, quick whatever the
 * team's size.
 */
export const KEY_COLUMNS: Record<ResourceTable, ReadonlySet<string>> = {
  users: new Set(['id', 'user_name_key', 'external_id']),
  groups: new Set(['id', 'display_name_key', 'external_id']),
};

/**
 * The flags a partial index holds the rows of, by column and value: the deactivated users,
 * `users_team_deactivated (team_id, created_at, id) where active = 0` (migration 033). A test of
 * such a flag reads that index's range of the team, in creation order; its SQL compares the
 * column with a literal (predicate-sql.ts), which both engines need to choose a partial index.
 */
export const PARTIAL_INDEXED_FLAGS: Record<ResourceTable, readonly { readonly column: string; readonly value: boolean }[]> = {
  users: [{ column: 'active', value: false }],
  groups: [],
};

/** Whether `p` is a flag test a partial index holds the rows of (PARTIAL_INDEXED_FLAGS). */
export const partialIndexAnswers = (p: Predicate & { kind: 'flag' }, table: ResourceTable): boolean =>
  p.scalar.at === 'column' && PARTIAL_INDEXED_FLAGS[table].some((f) => p.scalar.at === 'column' && f.column === p.scalar.column && f.value === p.value);

/**
 * The sort keys an index reads in order on both engines, by their column and its folded twin:
 * the folded userName, `(team_id, user_name_key)` on SQLite (binary order, code points) and
 * `(team_id, user_name_key collate "C")` on PostgreSQL (migration 014), and so the accent-folded
 * one, `user_name_search` (migration 032). Each is NOT NULL, so its
 * ranges are read in plain ascending or descending order, whatever NULLS FIRST/LAST the list's
 * order names (no row has a NULL key).
 */
export const ORDER_INDEXED: Record<ResourceTable, readonly { readonly column: string; readonly folded: string }[]> = {
  users: [
    { column: 'user_name', folded: 'user_name_key' },
    // The accent-folded userName the console's word search lists by (migration 032, scim/word-search.ts).
    { column: 'user_name', folded: 'user_name_search' },
  ],
  groups: [],
};

/** The one dialect fact the plan depends on (DialectHooks `substringIndexed`), as data. */
export interface EngineFacts {
  /** Whether an index answers `ew` and `co` on every prefix-indexed column (PostgreSQL's trigrams). */
  readonly substringIndexed: boolean;
}

/**
 * Whether `where` is one equality on a key's column as the SQL compares it: the folded copy when
 * the test folds (a test that folds a column without one compares `lower(column)`, which no key
 * index answers; predicate-sql.ts `folded`).
 */
export function readsByKey(where: Predicate, table: ResourceTable): boolean {
  if (where.kind !== 'text' || where.op !== 'eq' || where.scalar.at !== 'column') return false;
  const column = where.folded ? where.scalar.folded : where.scalar.column;
  return column !== undefined && KEY_COLUMNS[table].has(column);
}

/**
 * Whether the planners may answer `p` with an index range that a broad value fills: a `sw`, an
 * `ew` or a `co` on a column an index answers it for (B-tree ranges on SQLite, trigram bitmaps on
 * PostgreSQL, `substringIndexed`). An `eq`, a flag or a presence test never is (an equality
 * lookup, or no index at all), so those lists never pay for the match steps; neither does a test
 * that is a scan anyway, which the list's own order serves best (it stops at the page's last
 * match, and reads the rows in the order they were written).
 */
export function mayMatchMany(p: Predicate, table: ResourceTable, engine: EngineFacts): boolean {
  switch (p.kind) {
    case 'text': {
      if (p.scalar.at !== 'column' || !PREFIX_INDEXED[table].has(p.scalar.column)) return false;
      if (p.op === 'sw') return true;
      if (p.op === 'ew') return engine.substringIndexed || SUFFIX_INDEXED[table].has(p.scalar.column);
      // co: trigram bitmaps on PostgreSQL; on SQLite a scan of the folded key's index (dialect.ts contains).
      return p.op === 'co' && (engine.substringIndexed || (p.folded && SUFFIX_INDEXED[table].has(p.scalar.column)));
    }
    case 'and':
    case 'or':
      return mayMatchMany(p.left, table, engine) || mayMatchMany(p.right, table, engine);
    case 'not':
      return mayMatchMany(p.predicate, table, engine);
    default:
      return false;
  }
}
