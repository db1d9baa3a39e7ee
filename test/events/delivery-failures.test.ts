/**
 * Issue 30, item 5: every failed push attempt leaves one warning in the app's log (subscription,
 * team, seq, status, reason) and is counted in rollcall_event_delivery_failures_total by reason
 * (GET /metrics): a receiver answering 503, one refusing a SET (RFC 8935 2.3, settled and not
 * sent again), and one whose port is closed. Accepted attempts are neither logged as failures
 * nor counted. On both engines.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { failureReason } from '../../src/events/delivery.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 10_000 };

/** The counter's value for `reason` in the app's /metrics text (0 when absent). */
async function failures(t: TestApp, reason: string): Promise<number> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`rollcall_event_delivery_failures_total{reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('failure reasons as metric labels', () => {
  it('keeps the category, folds statuses into their class, names a refused SET', () => {
    assert.deepEqual(
      ['http 503', 'http 404', 'http 400 invalid_key', 'refused', 'forbidden-address', 'timeout', null].map(failureReason),
      ['http_5xx', 'http_4xx', 'set_rejected', 'refused', 'forbidden_address', 'timeout', 'unknown'],
    );
  });
});

for (const engine of engines) {
  describe(`event delivery failures: logged and counted (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    const lines: string[] = [];
    afterEach(async () => {
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });
    const open = async () => {
      lines.length = 0;
      t = await createTestApp({ engine, config: { logLevel: 'warn' }, logStream: { write: (line) => void lines.push(line) }, deps: { delivery: FAST } });
      await t.app.ready();
      return t;
    };
    const subscribe = async (app: TestApp, url: string) => {
      const res = await app.request('POST', '/v2/events/subscriptions', { url, events: ['create'] }, { 'content-type': 'application/json' });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };
    const failed = (subscription: string) =>
      lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.subscription === subscription && String(l.msg).startsWith('event delivery attempt failed'));

    it('a receiver answering 503 twice, then 202: two warnings naming the subscription and status, http_5xx counted twice', async () => {
      const app = await open();
      const rx = await startReceiver((_r, i) => ({ status: i < 2 ? 503 : 202 }));
      receivers.push(rx);
      const id = await subscribe(app, rx.url);
      assert.equal((await app.request('POST', '/v2/scim/Users', { userName: 'failing@acme.example' })).statusCode, 201);
      await rx.waitFor(3, 15_000);
      await until(() => failed(id).length >= 2, 'two warnings');
      const logged = failed(id);
      assert.equal(logged.length, 2, 'one line per failed attempt, none for the accepted one');
      for (const line of logged) {
        assert.equal(line.status, 503);
        assert.equal(line.reason, 'http 503');
        assert.equal(line.team, app.team.id);
        assert.equal(typeof line.seq, 'number');
        assert.equal(line.level, 40, 'a warning');
      }
      assert.equal(await failures(app, 'http_5xx'), 2);
    });

    it('a SET refused by its receiver (RFC 8935 2.3) and a closed port: set_rejected and refused counted, each logged', async () => {
      const app = await open();
      const refusing = await startReceiver(() => ({ status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ err: 'invalid_key', description: 'unknown key' }) }));
      receivers.push(refusing);
      const closed = await startReceiver();
      receivers.push(closed);
      await closed.close();
      const refusedId = await subscribe(app, refusing.url);
      const closedId = await subscribe(app, closed.url);
      assert.equal((await app.request('POST', '/v2/scim/Users', { userName: 'one@acme.example' })).statusCode, 201);
      await until(async () => (await failures(app, 'set_rejected')) >= 1 && (await failures(app, 'refused')) >= 1, 'both failures counted');
      assert.equal(await failures(app, 'set_rejected'), 1, 'a refused SET is settled: sent once');
      assert.match(String(failed(refusedId)[0]!.msg), /the receiver refused the SET; it is not sent again/);
      assert.equal(failed(refusedId)[0]!.reason, 'http 400 invalid_key');
      assert.equal(failed(closedId)[0]!.reason, 'refused');
      assert.equal(failed(closedId)[0]!.status, null);
    });
  });
}
