/**
 * Two rotations of one webhook subscription's secret at once (docs/events.md, "Plain signed
 * webhooks"): every secret answered 200 must sign afterwards. On PostgreSQL (READ COMMITTED) two
 * rotations that both read the row before either writes would otherwise both answer 200, the
 * second recording as "previous" the secret the first had already replaced, so the first's new
 * secret would never verify. The loser answers 409 in the SCIM error shape and may retry.
 *
 * On PostgreSQL the race is made to happen, not hoped for: a transaction of the test holds the
 * subscription's row (FOR UPDATE) until both rotations have read it and wait to write. On SQLite
 * writes are serialised; the same rule is checked.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** On PostgreSQL: holds the row of subscription `id` until `release()`, on a connection of its own. */
async function holdRow(url: string, id: string): Promise<{ waiting(): Promise<number>; release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: url });
  const watcher = new pg.Client({ connectionString: url });
  await holder.connect();
  await watcher.connect();
  await holder.query('begin');
  await holder.query('select id from event_subscriptions where id = $1 for update', [id]);
  return {
    // Backends waiting for a lock while touching this schema's event_subscriptions (not another test's).
    async waiting() {
      const r = await watcher.query<{ n: string }>(
        `select count(distinct a.pid) as n from pg_stat_activity a join pg_locks l on l.pid = a.pid
          where a.wait_event_type = 'Lock' and l.relation = 'event_subscriptions'::regclass and a.pid <> pg_backend_pid()`,
      );
      return Number(r.rows[0]!.n);
    },
    async release() {
      await holder.query('rollback');
      await holder.end();
      await watcher.end();
    },
  };
}

for (const engine of engines) {
  describe(`webhook secret rotation, two at once (${engine.name})`, () => {
    let t: TestApp | undefined;
    let rx: Receiver | undefined;
    afterEach(async () => {
      await t?.close();
      await rx?.close();
      t = undefined;
    });

    it('every secret answered 200 verifies the next delivery; a rotation that lost the race answers 409 "rotated concurrently, retry"', async () => {
      t = await createTestApp({ engine, clockStart: Date.now(), deps: { delivery: { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 2_000 } } });
      await t.app.ready();
      rx = await startReceiver();
      const created = await t.request('POST', '/v2/events/subscriptions', { url: rx.url, format: 'webhook' }, { 'content-type': 'application/json' });
      assert.equal(created.statusCode, 201, created.body);
      const id = String(json(created).id);
      const rotate = () => t!.request('POST', `/v2/events/subscriptions/${id}/rotate-secret`, {}, { 'content-type': 'application/json' });

      let answers;
      if (engine.name === 'postgres') {
        const hold = await holdRow(t.url, id);
        try {
          const both = Promise.all([rotate(), rotate()]);
          // Both rotations have read the row and wait to write it (an order, not a time; bounded so a bug cannot hang the run).
          for (let i = 0; i < 1_000 && (await hold.waiting()) < 2; i++) await new Promise((r) => setTimeout(r, 10));
          assert.equal(await hold.waiting(), 2, 'both rotations wait on the held row');
          await hold.release();
          answers = await both;
        } catch (error) {
          await hold.release().catch(() => {});
          throw error;
        }
      } else {
        answers = await Promise.all([rotate(), rotate()]);
      }

      const ok = answers.filter((a) => a.statusCode === 200);
      assert.ok(ok.length >= 1, 'one rotation at least succeeds');
      for (const refused of answers.filter((a) => a.statusCode !== 200)) {
        assert.equal(refused.statusCode, 409, refused.body);
        const body = json(refused);
        assert.deepEqual(body.schemas, [ERROR]);
        assert.equal(body.status, '409');
        assert.match(String(body.detail), /rotated concurrently, retry/);
      }
      if (engine.name === 'postgres') assert.equal(ok.length, 1, 'two rotations that read the same secret: one wins');

      const user = await t.request('POST', '/v2/scim/Users', { userName: 'after@acme.example' });
      assert.equal(user.statusCode, 201, user.body);
      await rx.waitFor(1);
      const [delivered] = rx.received;
      const headers = { 'webhook-id': String(delivered!.headers['webhook-id']), 'webhook-timestamp': String(delivered!.headers['webhook-timestamp']), 'webhook-signature': String(delivered!.headers['webhook-signature']) };
      for (const answer of ok) {
        const secret = String(json(answer).secret);
        assert.doesNotThrow(() => new Webhook(secret).verify(delivered!.body, headers), `the secret answered 200 (${secret.slice(0, 10)}…) signs the delivery`);
      }
    });
  });
}
