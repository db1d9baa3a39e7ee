/**
 * What RFC 7523 client authentication trusts and remembers (issue 29, DESIGN.md section 11):
 *
 * - `client_keys`: a client's own public keys for `private_key_jwt`, one row per registration,
 *   either an inline JWK Set (`jwks`, public keys only, checked when added) or a `jwks_uri`.
 * - `client_federations`: an external issuer a team-bound client trusts (Entra workload identity
 *   federation): the assertion's `iss`, `sub` and `aud` it expects, and where its keys are.
 * - `used_assertions`: the `jti` (or Entra's `uti`) of every accepted assertion, keyed by a hash
 *   of (issuer, id), kept until the assertion's `exp`, so that a replay is refused by the primary
 *   key on every instance sharing the database (RFC 7523 3, item 7).
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration021(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('client_keys')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('client_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('team_id', 'varchar(20)')
        .addColumn('jwks', 'text')
        .addColumn('jwks_uri', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('client_keys_client').on('client_keys').columns(['client_id', 'created_at']).execute();
      await db.schema
        .createTable('client_federations')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('client_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('audience', 'text', (c) => c.notNull())
        .addColumn('jwks_uri', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('client_federations_trust').on('client_federations').columns(['client_id', 'issuer', 'subject']).unique().execute();
      await db.schema.createIndex('client_federations_team').on('client_federations').column('team_id').execute();
      await db.schema
        .createTable('used_assertions')
        .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('used_assertions_expiry').on('used_assertions').column('expires_at').execute();
    },
  };
}
