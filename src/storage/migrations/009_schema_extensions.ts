/**
 * Custom schema extensions per team (RFC 7643 section 7 schemas a team registers for
 * Users or Groups).
 *
 * - `schema_extensions`: one row per (team, schema URN): the resource type it extends, whether
 *   resources must carry it (`required`, RFC 7643 section 6 `schemaExtensions`), its current
 *   definition (`definition`, the section 7 JSON as accepted), every attribute it ever declared
 *   with its type (`declared`: a removed attribute's data stays in the documents, hidden, and may
 *   not come back with another type), and `removed_at` once the extension itself is removed
 *   (its data stays, hidden; adding it again shows it again).
 * - `extension_unique_values`: the values of `uniqueness: server` string attributes, one row per
 *   (team, schema, attribute, folded value), written in each write's transaction: the primary
 *   key makes two concurrent creates with one value a unique violation (409 uniqueness).
 * - `teams.schema_version`: bumped by every change of a team's extensions; the bearer check reads
 *   it with the team, so each app rebuilds a team's resource types only when it changed.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration009(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('schema_extensions')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('schema_id', 'varchar(300)', (c) => c.notNull())
        .addColumn('schema_key', 'varchar(300)', (c) => c.notNull())
        .addColumn('resource_type', 'varchar(16)', (c) => c.notNull())
        .addColumn('required', 'integer', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('declared', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('removed_at', 'text')
        .addPrimaryKeyConstraint('schema_extensions_pk', ['team_id', 'schema_key'])
        .execute();
      await db.schema
        .createTable('extension_unique_values')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('resource_type', 'varchar(16)', (c) => c.notNull())
        .addColumn('attribute', 'varchar(400)', (c) => c.notNull())
        .addColumn('value_key', 'varchar(2100)', (c) => c.notNull())
        .addColumn('resource_id', 'varchar(20)', (c) => c.notNull())
        .addPrimaryKeyConstraint('extension_unique_values_pk', ['team_id', 'resource_type', 'attribute', 'value_key'])
        .execute();
      await db.schema.createIndex('extension_unique_values_resource').on('extension_unique_values').columns(['resource_id']).execute();
      await db.schema.alterTable('teams').addColumn('schema_version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
