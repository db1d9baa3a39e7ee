/**
 * Asynchronous requests across a crash (issue 32 item 4), on SQLite and PostgreSQL: a server is
 * sent an asynchronous Bulk of creates and single asynchronous creates behind it, killed with
 * SIGKILL while it runs the Bulk, and restarted on the same database; the new process takes the
 * requests over once the killed one's lease expires. Every operation ran exactly once: each
 * create answered 201 (a second run would have answered 409), each created user has one create
 * audit row and one create event, and each operation has exactly one asyncresp event with its
 * txn (`<txn>:<i>` for the Bulk's operation i) and one step row.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/storage/connect.ts';
import { NO_POSTGRES, processDatabases } from '../support/engines.ts';
import { scim, seedTeamToken, startServer } from '../support/processes.ts';
import type { ServerProcess } from '../support/processes.ts';

const targets = processDatabases('rollcall-async-crash');

const BULK_OPERATIONS = 400;
const SINGLES = 20;
const ASYNC = { prefer: 'respond-async' };
/** A short lease, so the restarted process takes the killed one's request over soon. */
const ENV = { ASYNC_LEASE_SECONDS: '2' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Json = Record<string, unknown>;

async function statusOf(server: ServerProcess, token: string, txn: string): Promise<Json> {
  const r = await scim(server.url, token, 'GET', `/AsyncRequests/${txn}`);
  assert.equal(r.status, 200);
  return r.body!;
}

if (NO_POSTGRES) describe('asynchronous requests across a crash on postgres', { skip: NO_POSTGRES }, () => {});

for (const target of targets) {
  describe(`asynchronous requests across a crash on ${target.name}`, () => {
    let db: { url: string; dispose(): Promise<void> };
    let token: string;
    before(async () => {
      db = await target.open();
      token = await seedTeamToken(db.url);
    });
    after(() => db.dispose());

    it('SIGKILL while a Bulk runs: after a restart every operation ran exactly once, with one asyncresp event each', async () => {
      let server = await startServer(db.url, ENV);
      const bulk = {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: Array.from({ length: BULK_OPERATIONS }, (_, i) => ({ method: 'POST', path: '/Users', bulkId: `u${i}`, data: { userName: `bulk-${i}@acme.example` } })),
      };
      const accepted = await scim(server.url, token, 'POST', '/Bulk', bulk, ASYNC);
      assert.equal(accepted.status, 202);
      const bulkTxn = accepted.headers.get('set-txn')!;
      const singles: string[] = [];
      for (let i = 0; i < SINGLES; i++) {
        const r = await scim(server.url, token, 'POST', '/Users', { userName: `single-${i}@acme.example` }, ASYNC);
        assert.equal(r.status, 202);
        singles.push(r.headers.get('set-txn')!);
      }
      let completed = 0;
      for (let turn = 0; turn < 4000 && completed < 20; turn++) {
        completed = Number((await statusOf(server, token, bulkTxn)).completed);
        if (completed < 20) await sleep(2);
      }
      server.child.kill('SIGKILL');
      assert.equal(await server.exited, null, 'killed by a signal');
      process.stdout.write(`# ${target.name}: killed after ${completed} of ${BULK_OPERATIONS} operations\n`);

      server = await startServer(db.url, ENV);
      try {
        const all = [bulkTxn, ...singles];
        const deadline = Date.now() + 120_000;
        for (const txn of all) {
          while ((await statusOf(server, token, txn)).status !== 'done') {
            assert.ok(Date.now() < deadline, `request ${txn} done within the guard`);
            await sleep(50);
          }
        }
        const bulkStatus = await statusOf(server, token, bulkTxn);
        const ops = (bulkStatus.response as Json).Operations as Json[];
        assert.equal(ops.length, BULK_OPERATIONS);
        assert.deepEqual(ops.map((o) => o.status), Array(BULK_OPERATIONS).fill('201'), 'each create ran once: none answered 409');
        assert.deepEqual(ops.map((o) => o.bulkId), bulk.Operations.map((o) => o.bulkId), 'answered in request order');
        for (const txn of singles) assert.equal(((await statusOf(server, token, txn)).response as Json).status, '201');
      } finally {
        assert.equal(await server.stop(), 0);
      }

      const storage = connect(db.url);
      try {
        const count = async (query: ReturnType<typeof sql<{ n: string | number }>>) => Number((await query.execute(storage.db)).rows[0]!.n);
        assert.equal(await count(sql`select count(*) as n from users where user_name like 'bulk-%'`), BULK_OPERATIONS);
        assert.equal(await count(sql`select count(*) as n from users where user_name like 'single-%'`), SINGLES);
        const audits = await sql<{ id: string; n: string | number }>`select u.id, (select count(*) from audit_events a where a.resource_id = u.id and a.action = 'create') as n from users u where u.user_name like 'bulk-%' or u.user_name like 'single-%'`.execute(storage.db);
        assert.deepEqual([...new Set(audits.rows.map((r) => Number(r.n)))], [1], 'one create audit row per user');
        const creates = await sql<{ id: string; n: string | number }>`select u.id, (select count(*) from events e where e.resource_id = u.id and e.type = 'create') as n from users u where u.user_name like 'bulk-%' or u.user_name like 'single-%'`.execute(storage.db);
        assert.deepEqual([...new Set(creates.rows.map((r) => Number(r.n)))], [1], 'one create event per user');
        const responses = await sql<{ txn: string; n: string | number }>`select txn, count(*) as n from events where type = 'asyncresp' group by txn`.execute(storage.db);
        const perTxn = new Map(responses.rows.map((r) => [r.txn, Number(r.n)]));
        const expected = [...Array.from({ length: BULK_OPERATIONS }, (_, i) => `${bulkTxn}:${i}`), ...singles];
        assert.equal(perTxn.size, expected.length, 'an asyncresp event for each operation and no other');
        for (const txn of expected) assert.equal(perTxn.get(txn), 1, `exactly one asyncresp event with txn ${txn}`);
        assert.equal(await count(sql`select count(*) as n from async_request_steps`), BULK_OPERATIONS + SINGLES, 'one step row per operation');
        const bulkRow = await storage.db.selectFrom('async_requests').select(['steps_done', 'attempts']).where('id', '=', bulkTxn).executeTakeFirstOrThrow();
        assert.equal(bulkRow.steps_done, BULK_OPERATIONS);
        if (completed < BULK_OPERATIONS) assert.ok(bulkRow.attempts >= 2, 'the Bulk was taken over after the kill');
      } finally {
        await storage.close();
      }
    });
  });
}
