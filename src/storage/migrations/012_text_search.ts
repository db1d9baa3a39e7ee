/**
 * Search: indexes that answer `co`, `sw` and `ew` on userName (and a group's
 * displayName) at a million users, for the predicates dialect.ts writes.
 *
 * - PostgreSQL: GIN indexes with pg_trgm's `gin_trgm_ops` on the folded columns, which answer
 *   `LIKE '%v%'`, `'v%'` and `'%v'` (the extension is database-wide; it is created in `public`
 *   when it is not there yet, so that no Rollcall schema owns it and dropping one never drops
 *   another's indexes). Where the extension cannot be created (no `pg_trgm` package, no right to
 *   create it), the migration logs one line and goes on: the filters still answer, by scanning.
 * - PostgreSQL also: B-trees with text_pattern_ops on (team_id, user_name_key) and on the reverse()
 *   of the folded keys: `sw` and `ew` on userName as ranges (a trigram common to many rows makes
 *   a GIN scan read them all).
 * - SQLite: `sw` is a range of the existing (team_id, user_name_key) index; `ew` is a range of the
 *   reversed key under the expression indexes created here (`rc_reverse`, registered on every
 *   connection by sqlite-adapter.ts). `co` has no index on SQLite (docs/STORAGE.md "Text search and expression indexes").
 * - Both: the case-folded given and family names are indexed for the console's word search
 *   (src/console/directory.ts: a prefix of the userName or of a name part, or the externalId).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

const TRIGRAM_INDEXES = [
  { name: 'users_user_name_trgm', table: 'users', expression: sql`user_name_key` },
  { name: 'groups_display_name_trgm', table: 'groups', expression: sql`display_name_key` },
  // The console's word search (src/console/directory.ts): name parts, case-folded as
  // dialect.ts lower() folds them.
  { name: 'users_given_name_trgm', table: 'users', expression: sql`(lower(given_name collate "und-x-icu"))` },
  { name: 'users_family_name_trgm', table: 'users', expression: sql`(lower(family_name collate "und-x-icu"))` },
] as const;

async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const row = (await sql<{ schema: string }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db)).rows[0];
  return row?.schema;
}

/** The schema pg_trgm lives in, created there if need be; undefined when it cannot be had. */
async function ensureTrigrams(db: Kysely<unknown>, warn: (line: string) => void): Promise<string | undefined> {
  const found = await trigramSchema(db);
  if (found !== undefined) return found;
  // A savepoint: the migrations run in one transaction, which a failed CREATE EXTENSION aborts.
  await sql`savepoint rc_pg_trgm`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    await sql`release savepoint rc_pg_trgm`.execute(db);
  } catch (error) {
    await sql`rollback to savepoint rc_pg_trgm`.execute(db);
    // Another migration may have created it meanwhile (its commit made ours fail).
    const raced = await trigramSchema(db);
    if (raced !== undefined) return raced;
    warn(`rollcall: pg_trgm is not available (${error instanceof Error ? error.message : String(error)}); userName co/sw/ew filters will scan instead of using a trigram index`);
    return undefined;
  }
  return trigramSchema(db);
}

export function migration012(engine: EngineName, warn: (line: string) => void): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine === 'sqlite') {
        await sql`create index users_team_user_name_rev on users (team_id, rc_reverse(user_name_key))`.execute(db);
        await sql`create index groups_team_display_name_rev on groups (team_id, rc_reverse(display_name_key))`.execute(db);
        await sql`create index users_team_given_name_folded on users (team_id, rc_lower(given_name))`.execute(db);
        await sql`create index users_team_family_name_folded on users (team_id, rc_lower(family_name))`.execute(db);
        return;
      }
      // Prefix ranges whatever the trigrams: LIKE 'v%' on a text_pattern_ops B-tree, and `ew` on a
      // folded key as a prefix of its reverse() (dialect.ts).
      await sql`create index users_team_user_name_pattern on users (team_id, user_name_key text_pattern_ops)`.execute(db);
      await sql`create index users_team_user_name_reverse on users (team_id, reverse(user_name_key) text_pattern_ops)`.execute(db);
      await sql`create index groups_team_display_name_reverse on groups (team_id, reverse(display_name_key) text_pattern_ops)`.execute(db);
      const schema = await ensureTrigrams(db, warn);
      if (schema === undefined) return;
      for (const index of TRIGRAM_INDEXES) {
        await sql`create index ${sql.id(index.name)} on ${sql.table(index.table)} using gin (${index.expression} ${sql.id(schema, 'gin_trgm_ops')})`.execute(db);
      }
    },
  };
}
