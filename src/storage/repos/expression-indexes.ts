/**
 * Expression indexes over values inside the resource documents (issue 11 item 4: a filter `eq`
 * on a team's extension attribute at a million users). The SCIM side names the values that
 * deserve one as sort-key shapes (scim/filter/lower.ts `indexedKeys`); this module compiles each
 * into the very expression predicate-sql.ts writes for an `eq` on it (folded or not, the JSON
 * path as a literal), and keeps the set of indexes equal to the wanted set: creates what is
 * missing, drops what nobody wants any more. Indexes are shared by every team that wants the
 * same expression (a name derived from the index's definition), and cover `(team_id,
 * expression)`. They are not partial: PostgreSQL keeps statistics of an index expression only for
 * indexes without a predicate, and without them it guesses that an `eq` matches 0.5% of the
 * rows, and for a page of 50 walks a million users by creation order instead (5 s at 1M).
 * So an index evaluates its expression on every team's rows, and that expression must be total
 * over any document: the dialect's reads give NULL for a value absent or of another JSON type,
 * cast nothing that could fail, and name exactly the keys given (dialect.ts refuses a key a path
 * could misread), so no team's values, of whatever type, can make another team's index fail.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { indexNames } from '../dialect.ts';
import type { OrderKey } from '../predicate.ts';
import { indexedExpressionSql } from '../predicate-sql.ts';
import type { ResourceTable } from '../predicate-sql.ts';
import { hooksOf } from '../statements.ts';
import type { Executor } from '../types.ts';

/** A text value of the document to index (an `eq` on it is what the index answers). */
export type IndexedKey = OrderKey & { readonly kind: 'scalar' };

const PREFIX = 'rc_x_';

interface Planned {
  readonly name: string;
  readonly expression: ReturnType<typeof indexedExpressionSql>;
}

function plan(ex: Executor, table: ResourceTable, key: IndexedKey): Planned {
  const expression = indexedExpressionSql(hooksOf(ex), table, key);
  const compiled = expression.compile(ex);
  if (compiled.parameters.length > 0) throw new Error('an indexed expression must be written without parameters');
  // The definition's shape is part of the name, so a changed definition replaces the old index.
  return { name: `${PREFIX}${table}_${createHash('sha256').update(`(team_id, ${compiled.sql})`).digest('hex').slice(0, 24)}`, expression };
}

/**
 * Makes the expression indexes of `table` exactly those of `wanted` (every team's, together).
 * Runs in the caller's transaction: a schema change and its indexes commit together. Returns
 * the names created and dropped.
 */
export async function syncExpressionIndexes(ex: Executor, table: ResourceTable, wanted: readonly IndexedKey[]): Promise<{ created: string[]; dropped: string[] }> {
  const planned = new Map(wanted.map((key) => plan(ex, table, key)).map((p) => [p.name, p]));
  const existing = new Set((await indexNames(ex, hooksOf(ex).name, table)).filter((n) => n.startsWith(`${PREFIX}${table}_`)));
  const created: string[] = [];
  const dropped: string[] = [];
  for (const name of existing) {
    if (planned.has(name)) continue;
    await sql`drop index if exists ${sql.id(name)}`.execute(ex);
    dropped.push(name);
  }
  for (const [name, p] of planned) {
    if (existing.has(name)) continue;
    await sql`create index if not exists ${sql.id(name)} on ${sql.table(table)} (team_id, ${p.expression})`.execute(ex);
    created.push(name);
  }
  // Statistics of the new expressions (both engines keep them for expression indexes), which
  // PostgreSQL needs to see that an `eq` matches one row. SQLite samples (analysis_limit).
  if (created.length > 0) await sql`analyze ${sql.table(table)}`.execute(ex);
  return { created, dropped };
}
