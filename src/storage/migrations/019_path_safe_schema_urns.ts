/**
 * No schema extension keeps a URN that a JSON path cannot name. Registration now
 * refuses URNs holding `"` or `\` (schema/extensions.ts; RFC 8141 allows neither), and the
 * dialect refuses to build a path from such a key (dialect.ts), so a stored extension with one
 * could be read by nobody: its team's resource types, and the expression indexes of every team
 * (team-schemas.ts reads all teams' extensions to keep them), would fail on it. Each such
 * extension is marked removed as `rollcall schema remove` does (its values stay in the
 * documents, hidden, and its declared types are kept), its team's schema version moves so every
 * app rebuilds the team's types, and the team's audit trail says why. The team registers its
 * extension again under a URN of RFC 8141's syntax.
 *
 * The expression indexes that read such a URN (on SQLite they named another path, and failed on
 * every row of every team holding the enterprise extension) are derived state, and are dropped
 * by the server at start, which makes the indexes those of the stored extensions
 * (index-builder.ts `buildExtensionIndexes`).
 *
 * The rows are few (extensions, not resources) and are filtered here rather than in SQL, so both
 * engines apply one rule with no LIKE escaping.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { newId } from '../../ids.ts';
import type { Database } from '../types.ts';

const PATH_BREAKING = /["\\]/;

export function migration019(): Migration {
  return {
    async up(untyped: Kysely<unknown>) {
      const db = untyped as unknown as Kysely<Database>;
      const active = await db.selectFrom('schema_extensions').select(['team_id', 'schema_key', 'schema_id', 'resource_type']).where('removed_at', 'is', null).execute();
      const retired = active.filter((row) => PATH_BREAKING.test(row.schema_id));
      if (retired.length === 0) return;
      const at = new Date().toISOString();
      for (const row of retired) {
        await db.updateTable('schema_extensions').set({ removed_at: at, updated_at: at }).where('team_id', '=', row.team_id).where('schema_key', '=', row.schema_key).execute();
        await db
          .insertInto('audit_events')
          .values({
            id: newId(),
            team_id: row.team_id,
            at,
            actor: JSON.stringify({ via: 'cli', clientId: null, userId: null }),
            request_id: null,
            action: 'schema_removed',
            resource_type: 'Schema',
            resource_id: null,
            detail: JSON.stringify({ schema: row.schema_id, resourceType: row.resource_type, reason: 'the URN holds " or \\, which RFC 8141 and JSON paths do not allow; register the extension again under another URN' }),
          })
          .execute();
      }
      for (const team of new Set(retired.map((row) => row.team_id))) {
        await db.updateTable('teams').set((eb) => ({ schema_version: eb('schema_version', '+', 1) })).where('id', '=', team).execute();
      }
    },
  };
}
