/**
 * The audit trail (DESIGN.md section 3): append-only events, each written in the transaction of
 * the change it records, listed per team in time order.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration003(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('audit_events')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('resource_type', 'text', (c) => c.notNull())
        .addColumn('resource_id', 'text')
        .addColumn('detail', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_events_team_at').on('audit_events').columns(['team_id', 'at', 'id']).execute();
      await db.schema.createIndex('audit_events_resource').on('audit_events').columns(['resource_id']).execute();
    },
  };
}
