/**
 * The console's word search, listed by userName: on PostgreSQL, the folded
 * userName indexed in the order every userName sort compares it, code point by code point
 * (dialect.ts `ordered`: COLLATE "C"): `(team_id, user_name_key collate "C")`. A page sorted by
 * userName then reads the index range in order (repos/list/by-key-prefix.ts) where it sorted every
 * match, or the whole team. A B-tree under the "C" collation also answers LIKE 'v%' as a range
 * (PostgreSQL derives the bounds from the pattern for an index whose collation is C), which is
 * what 012's `users_team_user_name_pattern` (text_pattern_ops) was for, so that one goes: the
 * users table keeps as many indexes as it had. SQLite's `(team_id, user_name_key)` already is in
 * this order (the binary collation compares UTF-8 bytes, so code points): nothing to do there.
 *
 * Numbered 014: 013 is left to the change feed's migration being written beside this one.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

export function migration014(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine === 'sqlite') return;
      await sql`create index users_team_user_name_ordered on users (team_id, user_name_key collate "C")`.execute(db);
      await sql`drop index users_team_user_name_pattern`.execute(db);
    },
  };
}
