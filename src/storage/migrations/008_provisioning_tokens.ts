/**
 * Provisioning tokens, the named, expiring access tokens an operator issues for an
 * identity provider (CLI `rollcall token issue`, the console's Connections page). The token
 * itself stays an `oauth_tokens` row (the bearer check is unchanged); `provisioning_tokens`
 * gives it an id to list and revoke it by, a name, who issued it, and when it was last used
 * (written at most once a minute per token, off the request path: http/last-used.ts).
 *
 * `request_log`: the last SCIM requests of each team, one row per request, with
 * the connection (client id, or the hash naming a provisioning token), status, scimType, latency
 * and a redacted, bounded body; written in batches off the request path and pruned to 7 days or
 * 10,000 rows per team (http/request-journal.ts).
 *
 * Access tokens issued by the CLI before this migration (no client) get a row each, named
 * "issued before names", with an id taken from their hash, so they can be listed and revoked too.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration008(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('provisioning_tokens')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('issued_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema.createIndex('provisioning_tokens_team').on('provisioning_tokens').columns(['team_id', 'created_at']).execute();
      await db.schema
        .createTable('request_log')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('method', 'varchar(10)', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('scim_type', 'text')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('client_id', 'varchar(20)')
        .addColumn('token_hash', 'varchar(64)')
        .addColumn('request_id', 'text')
        .addColumn('body', 'text')
        .execute();
      await db.schema.createIndex('request_log_team_at').on('request_log').columns(['team_id', 'at', 'id']).execute();
      await sql`insert into provisioning_tokens (id, team_id, token_hash, name, user_id, issued_by, created_at, expires_at, last_used_at)
        select upper(substr(hash, 1, 20)), team_id, hash, 'issued before names', user_id, 'cli', created_at, expires_at, null
        from oauth_tokens where kind = 'access' and client_id is null and user_id is not null`.execute(db);
    },
  };
}
