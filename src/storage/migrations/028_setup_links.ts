/**
 * One-time setup links (issue 30, item 6): a team admin sends a colleague without an account a
 * link that opens only the connection wizard for that team. `setup_links` keeps each link's
 * SHA-256 (never the link), who made it and for whom, when it expires, when it was used, and the
 * restricted session it opened (its secret's SHA-256 and expiry) with the one connection made
 * through it. A link is consumed by one conditional UPDATE, so two clicks cannot both open it.
 *
 * `request_log.detail` keeps the `detail` of a SCIM error answer (bounded), so the wizard's Test
 * state and the request log can say why a provider's request failed, not only its status.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration028(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('setup_links')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('link_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .addColumn('revoked_at', 'text')
        .addColumn('session_hash', 'varchar(64)', (c) => c.unique())
        .addColumn('session_expires_at', 'text')
        .addColumn('connection_id', 'varchar(20)')
        .execute();
      await db.schema.createIndex('setup_links_team').on('setup_links').columns(['team_id', 'created_at']).execute();
      await db.schema.alterTable('request_log').addColumn('detail', 'text').execute();
    },
  };
}
