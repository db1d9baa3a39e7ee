/**
 * Second factors of the admins who sign in (issue 30 item 7; src/oauth/factors.ts):
 *
 * - `passkeys`: an admin's WebAuthn credentials (credential id and COSE public key, base64url;
 *   the signature counter; the transports the browser reported; a name the admin chose).
 * - `totp_factors`: one authenticator-app secret per admin (RFC 6238), sealed at rest with the
 *   key store's SecretBox bound to the user, unconfirmed until a code proves the app has it;
 *   `last_step` is the last time step a code was accepted for, so no code is used twice.
 * - `recovery_codes`: single-use codes, stored as SHA-256 digests; `used_at` marks one spent.
 * - `webauthn_challenges`: the challenge of each ceremony, by digest, for one purpose (and one
 *   user when known), short-lived and consumed once.
 * - `teams.require_second_factor`: 1 when every admin of the team must pass a second factor.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration029(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('teams').addColumn('require_second_factor', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema
        .createTable('passkeys')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('credential_id', 'varchar(1400)', (c) => c.notNull().unique())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull())
        .addColumn('transports', 'text')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema.createIndex('passkeys_user').on('passkeys').columns(['user_id', 'created_at']).execute();
      await db.schema
        .createTable('totp_factors')
        .addColumn('user_id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('confirmed_at', 'text')
        .addColumn('last_step', 'bigint')
        .execute();
      await db.schema
        .createTable('recovery_codes')
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('code_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .addPrimaryKeyConstraint('recovery_codes_pk', ['user_id', 'code_hash'])
        .execute();
      await db.schema
        .createTable('webauthn_challenges')
        .addColumn('challenge_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('purpose', 'varchar(16)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(20)')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webauthn_challenges_expires').on('webauthn_challenges').column('expires_at').execute();
    },
  };
}
