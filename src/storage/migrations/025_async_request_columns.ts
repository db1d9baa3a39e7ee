/**
 * Asynchronous requests, narrower reads and safer keeping (issue 32):
 *
 * - `method`, `path`: the request's method and path under the SCIM base, in columns of their own,
 *   so the status URL and `wait` read them without the request text (up to 4 MiB), and so the
 *   request text can be cleared when the request is done (it may hold passwords).
 * - `token_hash`: the hash of the access token that queued the request (never the token): the
 *   worker runs the request only while that token is still live.
 * - `failures`: failures that were not the request's own (the database, a temporary refusal) since
 *   its last recorded step; claims do not count. After a bound the failure becomes the answer.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration025(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('async_requests').addColumn('method', 'varchar(8)', (c) => c.notNull().defaultTo('')).execute();
      await db.schema.alterTable('async_requests').addColumn('path', 'varchar(512)', (c) => c.notNull().defaultTo('')).execute();
      await db.schema.alterTable('async_requests').addColumn('token_hash', 'varchar(128)').execute();
      await db.schema.alterTable('async_requests').addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
