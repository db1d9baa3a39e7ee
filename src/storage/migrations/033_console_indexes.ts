/**
 * Indexes the console's audit pages read at a million users (issue 30, item 10; bench:console):
 * the audit log filtered by resource (a user's or a group's history, the resource filter), by
 * action, by the connection that acted, and by the user or client that acted (expressions over
 * the actor's JSON text, as repos/console.ts reads them). Each is a walk of (team, value, at, id)
 * newest first, so a page reads its 50 rows however rare the value is in the trail. And the
 * users a console hides or lists apart: the deactivated ones by a partial (team, created_at, id)
 * (the "deactivated" filter of the users list, in creation order, when a few of a million are),
 * the deleted ones by a partial index; a groups list finds them to leave them out of its member
 * counts without reading each member (repos/groups.ts memberCountsUpTo).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

/** The acting user's or client's id inside the audit row's actor JSON text, as an index and a query write it. */
export function actorIdSql(engine: EngineName, key: 'userId' | 'clientId'): string {
  return engine === 'postgres' ? `((actor::jsonb) ->> '${key}')` : `json_extract(actor, '$.${key}')`;
}

export function migration033(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('audit_events_team_resource').on('audit_events').columns(['team_id', 'resource_id', 'at', 'id']).execute();
      await db.schema.createIndex('audit_events_team_action').on('audit_events').columns(['team_id', 'action', 'at', 'id']).execute();
      await db.schema.createIndex('audit_events_team_connection').on('audit_events').columns(['team_id', 'actor_connection_id', 'at', 'id']).execute();
      for (const [name, key] of [['audit_events_team_actor_user', 'userId'], ['audit_events_team_actor_client', 'clientId']] as const) {
        await sql.raw(`create index ${name} on audit_events (team_id, ${actorIdSql(engine, key)}, at, id)`).execute(db);
      }
      // Partial: a plain (team_id, active, ...) index would look selective to SQLite's planner for
      // every `active = 1` read of a team (all of its users).
      await sql`create index users_team_deactivated on users (team_id, created_at, id) where active = 0`.execute(db);
      await sql`create index users_team_deleted on users (team_id, id) where deleted_at is not null`.execute(db);
      // The planners' statistics for the new indexes: SQLite's planner, holding statistics for
      // the older indexes only, would take a new one for any (team_id = ?) read (sorting the
      // team's audit trail to show its newest page). A bounded sample on SQLite (analysis_limit).
      if (engine === 'sqlite') await sql`PRAGMA analysis_limit = 400`.execute(db);
      await sql`analyze audit_events`.execute(db);
      await sql`analyze users`.execute(db);
    },
  };
}
