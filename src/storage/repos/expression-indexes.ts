/**
 * Expression indexes over values inside the resource documents, so that a filter `eq` on a team's
 * extension attribute stays fast however many users the team has. The SCIM side names the values
 * that deserve one as sort-key shapes (scim/filter/lower.ts `indexedKeys`), per team; this module
 * compiles each into the very expression predicate-sql.ts writes for an `eq` on it (folded or not,
 * the JSON path as a literal), says what it takes to make the indexes those wanted, and builds or
 * drops one index at a time, each statement on its own, never inside a request's transaction (a
 * build inside a registration would hold every team's writes).
 *
 * How an index is built is the dialect's (dialect.ts `createExpressionIndex`). On PostgreSQL one
 * index serves every team that wants the same expression (a name derived from its definition),
 * covers `(team_id, expression)` and is built CONCURRENTLY. It is not partial: PostgreSQL keeps
 * statistics of an index expression only for indexes without a predicate, and without them it
 * guesses a fixed share of the rows for an `eq`, and for a page of 50 walks the team in
 * creation order instead. On SQLite, where a build holds the write lock, each team has its own
 * index, partial on its `team_id`: no team's expression is evaluated on another team's rows.
 * Until an index exists, the query it would serve runs without it and answers the same rows.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { OrderKey } from '../predicate.ts';
import { indexedExpressionSql } from '../predicate-sql.ts';
import type { ResourceTable } from '../predicate-sql.ts';
import { withoutStatementDeadline as withoutDeadline } from '../deadline.ts';
import { hooksOf } from '../statements.ts';
import type { Db, Executor } from '../types.ts';

/** A text value of the document to index (an `eq` on it is what the index answers). */
export type IndexedKey = OrderKey & { readonly kind: 'scalar' };

/** A team's extension attribute that wants an index. */
export interface WantedIndex {
  readonly teamId: string;
  readonly key: IndexedKey;
}

const PREFIX = 'rc_x_';

function compiledSql(ex: Executor, expression: { compile(ex: Executor): { sql: string; parameters: readonly unknown[] } }): string {
  const compiled = expression.compile(ex);
  if (compiled.parameters.length > 0) throw new Error('an indexed expression must be written without parameters');
  return compiled.sql;
}

/** The index of `wanted` on `table`: its name, columns and (SQLite) the team's predicate. */
function plan(ex: Executor, table: ResourceTable, wanted: WantedIndex) {
  const hooks = hooksOf(ex);
  const expression = indexedExpressionSql(hooks, table, wanted.key);
  const where = hooks.expressionIndexScope(wanted.teamId);
  // The definition's shape is part of the name, so a changed definition replaces the old index.
  const definition = `(team_id, ${compiledSql(ex, expression)})${where ? ` where ${compiledSql(ex, where)}` : ''}`;
  const name = `${PREFIX}${table}_${createHash('sha256').update(definition).digest('hex').slice(0, 24)}`;
  return { name, columns: sql`team_id, ${expression}`, where };
}

/** The name of the index `wanted` gets on `table`. */
export const indexNameOf = (ex: Executor, table: ResourceTable, wanted: WantedIndex): string => plan(ex, table, wanted).name;

/** What makes the expression indexes of `table` those of `wanted`: indexes to drop, then to build. */
export interface IndexWork {
  readonly drop: readonly string[];
  readonly build: readonly WantedIndex[];
}

/**
 * The work that makes the expression indexes of `table` exactly those of `wanted` (every team's,
 * together). An invalid index (a failed CONCURRENTLY build) is dropped and built again; one whose
 * build is under way (another instance's builder) is left to it.
 */
export async function indexWork(ex: Executor, table: ResourceTable, wanted: readonly WantedIndex[]): Promise<IndexWork> {
  const planned = new Map<string, WantedIndex>();
  for (const w of wanted) planned.set(indexNameOf(ex, table, w), w);
  const existing = (await hooksOf(ex).indexStates(ex, table)).filter((i) => i.name.startsWith(`${PREFIX}${table}_`));
  const settled = new Set(existing.filter((i) => i.valid || i.building).map((i) => i.name));
  return {
    drop: existing.filter((i) => !planned.has(i.name) || (!i.valid && !i.building)).map((i) => i.name),
    build: [...planned].filter(([name]) => !settled.has(name)).map(([, w]) => w),
  };
}

/** Which of `wanted` have no usable index on `table` yet. */
export async function pendingIndexes(ex: Executor, table: ResourceTable, wanted: readonly WantedIndex[]): Promise<WantedIndex[]> {
  const valid = new Set((await hooksOf(ex).indexStates(ex, table)).filter((i) => i.valid).map((i) => i.name));
  return wanted.filter((w) => !valid.has(indexNameOf(ex, table, w)));
}

/** Drops one expression index (its own statement, outside any transaction). */
export async function dropExpressionIndex(db: Db, name: string): Promise<void> {
  await withoutDeadline(db, (ex) => hooksOf(ex).dropExpressionIndex(name).execute(ex));
}

/**
 * Builds the index `wanted` wants on `table` (its own statement, outside any transaction), then
 * the table's statistics, which PostgreSQL needs to see that an `eq` on the new expression
 * matches one row (both engines keep statistics of expression indexes; SQLite samples them,
 * analysis_limit). Answers the index's name.
 */
export async function buildExpressionIndex(db: Db, table: ResourceTable, wanted: WantedIndex): Promise<string> {
  const { name, columns, where } = plan(db, table, wanted);
  await withoutDeadline(db, async (ex) => {
    await hooksOf(ex).createExpressionIndex(name, table, columns, where).execute(ex);
    await sql`analyze ${sql.table(table)}`.execute(ex);
  });
  return name;
}
