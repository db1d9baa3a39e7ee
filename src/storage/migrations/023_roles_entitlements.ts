/**
 * Roles and entitlements (issue 31, DESIGN.md section 12).
 *
 * - `catalog_types`: a team's entitlement types (`License`, `Permission set`): the SCIM resource
 *   type name and its endpoint (`/Licenses`), both unique per team case-insensitively (`*_key`
 *   are lower-cased), whether a user must hold one (`required`) and may hold several
 *   (`multi_valued`).
 * - `catalog_entries`: the team's roles (`kind` 'role', `type_key` '') and the entitlements of
 *   each type (`kind` 'entitlement', `type_key` the type's `name_key`). `value` is the entry's
 *   SCIM `id`, compared exactly, unique per team and kind (an entitlement's value names one
 *   entitlement whatever its type, so a value sent without a type resolves).
 * - `user_grants`: what a user's SCIM `roles` and `entitlements` hold (what the identity provider
 *   assigned), one row per (kind, value, type), written in each user write's transaction like the
 *   extension claims; its primary key makes "who holds this role" a range read, and
 *   `user_grants_user` gives a user's own.
 * - `access_mappings`: a group mapped to a role or an entitlement (`type_key` '' for a role): the
 *   group's members hold it. Keyed for "which groups map to this entry"; `access_mappings_group`
 *   gives a group's mappings.
 * - `teams.catalog_schemas`: which schemas discovery shows for the catalog: `okta` (Okta's
 *   `urn:okta:scim:schemas:core:1.0:Role` / `Entitlement`, the default) or `ietf` (the draft's).
 *
 * A change of the catalog bumps `teams.schema_version` (like an extension change), so every
 * instance reloads the team's types, which carry the catalog.
 *
 * Users stored before this migration keep their `roles` and `entitlements`: their grants rows are
 * filled here from the documents.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration023(engine: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('catalog_types')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('name_key', 'varchar(128)', (c) => c.notNull())
        .addColumn('endpoint', 'varchar(130)', (c) => c.notNull())
        .addColumn('endpoint_key', 'varchar(130)', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('required', 'integer', (c) => c.notNull())
        .addColumn('multi_valued', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('catalog_types_pk', ['team_id', 'name_key'])
        .addUniqueConstraint('catalog_types_endpoint', ['team_id', 'endpoint_key'])
        .execute();
      await db.schema
        .createTable('catalog_entries')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('kind', 'varchar(12)', (c) => c.notNull())
        .addColumn('type_key', 'varchar(128)', (c) => c.notNull())
        .addColumn('value', 'varchar(256)', (c) => c.notNull())
        .addColumn('display_name', 'varchar(256)', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('catalog_entries_pk', ['team_id', 'kind', 'value'])
        .execute();
      await db.schema
        .createTable('user_grants')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('kind', 'varchar(12)', (c) => c.notNull())
        .addColumn('value', 'varchar(1024)', (c) => c.notNull())
        .addColumn('type', 'varchar(256)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('is_primary', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('user_grants_pk', ['team_id', 'kind', 'value', 'type', 'user_id'])
        .execute();
      await db.schema.createIndex('user_grants_user').on('user_grants').columns(['user_id']).execute();
      await db.schema
        .createTable('access_mappings')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('kind', 'varchar(12)', (c) => c.notNull())
        .addColumn('type_key', 'varchar(128)', (c) => c.notNull())
        .addColumn('value', 'varchar(256)', (c) => c.notNull())
        .addColumn('group_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('access_mappings_pk', ['team_id', 'kind', 'value', 'group_id'])
        .execute();
      await db.schema.createIndex('access_mappings_group').on('access_mappings').columns(['group_id']).execute();
      await db.schema.alterTable('teams').addColumn('catalog_schemas', 'varchar(8)', (c) => c.notNull().defaultTo('okta')).execute();
      await backfillGrants(db, engine);
    },
  };
}

/**
 * The grants of the users stored before this migration, read from their documents: each element
 * of `roles` / `entitlements` with a string `value` (at most 1,024 characters), its `type` ('' when
 * absent), primary when `primary` is true. Deleted users hold nothing. Duplicates collapse.
 */
async function backfillGrants(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  for (const [kind, attribute] of [['role', 'roles'], ['entitlement', 'entitlements']] as const) {
    if (engine === 'postgres') {
      await sql`
        INSERT INTO user_grants (team_id, kind, value, type, user_id, is_primary)
        SELECT u.team_id, ${kind}, e->>'value', COALESCE(e->>'type', ''), u.id,
               MAX(CASE WHEN e->'primary' = 'true'::jsonb THEN 1 ELSE 0 END)
        FROM users u, jsonb_array_elements(CASE WHEN jsonb_typeof(u.data->${attribute}) = 'array' THEN u.data->${attribute} ELSE '[]'::jsonb END) e
        WHERE u.deleted_at IS NULL AND jsonb_typeof(e) = 'object' AND jsonb_typeof(e->'value') = 'string'
          AND length(e->>'value') BETWEEN 1 AND 1024 AND length(COALESCE(e->>'type', '')) <= 256
          AND (e->'type' IS NULL OR jsonb_typeof(e->'type') = 'string')
        GROUP BY u.team_id, e->>'value', COALESCE(e->>'type', ''), u.id
        ON CONFLICT DO NOTHING`.execute(db);
    } else {
      await sql`
        INSERT OR IGNORE INTO user_grants (team_id, kind, value, type, user_id, is_primary)
        SELECT u.team_id, ${kind}, json_extract(e.value, '$.value'), COALESCE(json_extract(e.value, '$.type'), ''), u.id,
               MAX(CASE WHEN json_type(e.value, '$.primary') = 'true' THEN 1 ELSE 0 END)
        FROM users u, json_each(CASE WHEN json_type(u.data, ${`$.${attribute}`}) = 'array' THEN json_extract(u.data, ${`$.${attribute}`}) ELSE '[]' END) e
        WHERE u.deleted_at IS NULL AND e.type = 'object' AND json_type(e.value, '$.value') = 'text'
          AND length(json_extract(e.value, '$.value')) BETWEEN 1 AND 1024
          AND (json_type(e.value, '$.type') IS NULL OR json_type(e.value, '$.type') = 'text')
          AND length(COALESCE(json_extract(e.value, '$.type'), '')) <= 256
        GROUP BY u.team_id, json_extract(e.value, '$.value'), COALESCE(json_extract(e.value, '$.type'), ''), u.id`.execute(db);
    }
  }
}
