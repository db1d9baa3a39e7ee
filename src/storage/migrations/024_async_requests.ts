/**
 * Asynchronous requests (issue 32, DESIGN.md section 13; RFC 9967's asynchronous requests with
 * RFC 7240 `Prefer: respond-async`).
 *
 * - `async_requests`: one row per accepted request, a single write or a Bulk, kept until its
 *   outcome has been kept for the feed's retention. `position` orders a team's requests (a
 *   time-ordered id, `ids.ts` `timeOrderedId`, made when the request is accepted): a team's
 *   requests run one at a time, oldest first. `state` is `queued`, `running` or `done`; a worker
 *   holds `lease_owner` until `lease_until`, renewed as it goes; a lease whose instance died
 *   expires and another worker takes the request over where it stopped. `steps_done` counts the
 *   operations committed (a single write has one); each step's commit advances it in the step's
 *   own transaction, conditionally on the lease and the count (the fence that makes a step run
 *   once). `request` is what the worker replays (method, path, query, If-Match, body, as JSON
 *   text), cleared when the request is done (it may hold passwords); `method` and `path` are
 *   kept in columns of their own, so the status URL and `wait` never read the request text (up
 *   to 4 MiB). `outcome` is the answer once done (status and body, or the BulkResponse), as JSON
 *   text. `token_hash` is the hash of the access token that queued the request (never the
 *   token): the worker runs the request only while that token is not revoked. `failures`
 *   counts failures that were not the request's own (the database, a temporary refusal) since
 *   its last recorded step; claims do not count; past a bound the failure becomes the answer.
 * - `async_request_steps`: each committed operation's BulkResponse entry (method, bulkId,
 *   version, location, status, response), keyed by the request and the operation's place in
 *   the execution order, written in that operation's transaction; a request taken over resumes
 *   after the last one and resolves `bulkId` references from them.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration024(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('async_requests')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('position', 'varchar(20)', (c) => c.notNull())
        .addColumn('kind', 'varchar(8)', (c) => c.notNull())
        .addColumn('method', 'varchar(8)', (c) => c.notNull())
        .addColumn('path', 'varchar(512)', (c) => c.notNull())
        .addColumn('state', 'varchar(8)', (c) => c.notNull())
        .addColumn('txn', 'varchar(128)', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'varchar(128)')
        .addColumn('request', 'text', (c) => c.notNull())
        .addColumn('bytes', 'integer', (c) => c.notNull())
        .addColumn('operations', 'integer', (c) => c.notNull())
        .addColumn('steps_done', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('errors', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'varchar(64)')
        .addColumn('lease_until', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('outcome', 'text')
        .addColumn('status', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .execute();
      // A team's queue in order (the worker's head read, the per-team cap's count).
      await db.schema.createIndex('async_requests_team').on('async_requests').columns(['team_id', 'state', 'position']).execute();
      // The worker's look for teams with work, and the pruner's look for old outcomes.
      await db.schema.createIndex('async_requests_state').on('async_requests').columns(['state', 'finished_at']).execute();
      await db.schema
        .createTable('async_request_steps')
        .addColumn('request_id', 'varchar(40)', (c) => c.notNull())
        .addColumn('idx', 'integer', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('async_request_steps_pk', ['request_id', 'idx'])
        .execute();
    },
  };
}
