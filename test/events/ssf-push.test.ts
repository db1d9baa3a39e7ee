/**
 * Push delivery of SSF streams at the level a receiver on 127.0.0.1 sees it (issue 33; SSF 1.0
 * sections 6.1.1 and 8.1.3; RFC 8935): every push carries the receiver's `authorization_header`,
 * which no log line and no delivery-log entry holds; a subject the receiver removed is passed
 * over (the cursor moves on, nothing is sent) and sent again once added back; the stream's own
 * events always go; a header that cannot be opened fails the attempt as `secret`. Each accepted
 * signal is counted in the Prometheus histogram of commit-to-acceptance times. Streams and
 * signals are written straight to the database (test/support/ssf-rows.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import type { JSONWebKeySet } from 'jose';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { newId } from '../../src/ids.ts';
import { SecretBox } from '../../src/keys/sealed.ts';
import { sealAuthorization, STREAM_SECRETS } from '../../src/events/stream-config.ts';
import { attemptsOf, subscriptionById, updateSubscription } from '../../src/storage/repos/subscriptions.ts';
import { lastSeq } from '../../src/storage/repos/events.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver, verifyAll } from '../support/receiver.ts';
import { StatementLog } from '../support/storage-spy.ts';
import type { Receiver } from '../support/receiver.ts';
import { ACCOUNT_DISABLED, ACCOUNT_ENABLED, appendUserSignal, appendVerification, insertStream, setSubject, VERIFICATION } from '../support/ssf-rows.ts';
import { until } from '../support/wait.ts';

const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 300 };
const HEADER = 'Bearer receiver-credential-7f3a9c';
const AUD = 'https://receiver.example/ssf';

for (const engine of engines) {
  describe(`SSF push delivery (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });
    const lines: string[] = [];
    const open = async () => {
      lines.length = 0;
      t = await createTestApp({ engine, config: { logLevel: 'debug' }, logStream: { write: (line) => void lines.push(line) }, deps: { delivery: FAST } });
      await t.app.ready();
      return t;
    };
    const receiver = async () => {
      const r = await startReceiver();
      receivers.push(r);
      return r;
    };
    const users = async (app: TestApp, n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(String(json(await app.request('POST', '/v2/scim/Users', { userName: `ssf${i}@acme.example` })).id));
      return ids;
    };
    const jwks = async (app: TestApp) => (await app.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;
    /** The SETs received, once each (delivery is at-least-once: a slow first answer may be sent again). */
    const distinct = async (app: TestApp, rx: Receiver) => {
      const seen = new Set<string>();
      return (await verifyAll(rx.received, await jwks(app), { issuer: BASE_URL, audience: AUD })).filter((p) => !seen.has(String(p.jti)) && seen.add(String(p.jti)));
    };
    const caughtUp = (app: TestApp, id: string) => until(async () => (await subscriptionById(app.storage.db, app.team.id, id))?.cursor === (await lastSeq(app.storage.db, app.team.id)), 'the stream to catch up');

    it('every push carries the authorization_header; a removed subject is passed over, an added-back one and the stream\'s own events go; the header is never logged', async () => {
      const app = await open();
      const [a, b, c] = await users(app, 3);
      const rx = await receiver();
      const stream = await insertStream(app, { url: rx.url, aud: AUD, authorization: HEADER });
      await setSubject(app, stream, b!, false);
      await appendUserSignal(app, a!);
      await appendUserSignal(app, b!);
      await appendUserSignal(app, c!, ACCOUNT_ENABLED);
      await appendVerification(app, stream, 'state-1');
      await caughtUp(app, stream);
      let payloads = await distinct(app, rx);
      assert.deepEqual(payloads.map((p) => p.sub_id), [{ format: 'opaque', id: a }, { format: 'opaque', id: c }, { format: 'opaque', id: stream }]);
      assert.deepEqual(payloads.map((p) => Object.keys(p.events as object)[0]), [ACCOUNT_DISABLED, ACCOUNT_ENABLED, VERIFICATION]);
      assert.ok(rx.received.every((r) => r.headers.authorization === HEADER), 'SSF 1.0 6.1.1: the header on every request');

      // Added back (included 1): its next signal goes.
      await setSubject(app, stream, b!, true);
      await appendUserSignal(app, b!);
      await caughtUp(app, stream);
      payloads = await distinct(app, rx);
      assert.equal(payloads.length, 4, 'the removed subject\'s signal was never sent');
      assert.deepEqual(payloads[3]!.sub_id, { format: 'opaque', id: b });

      // Neither the log lines nor the delivery log hold the header.
      const attempts = await attemptsOf(app.storage.db, stream, 50);
      const accepted = attempts.filter((x) => x.status === 202);
      assert.equal(accepted.length, 4, "one accepted attempt per signal sent");
      assert.ok(attempts.every((x) => x.status === 202 ? x.error === null : x.error === 'timeout'));
      assert.ok(lines.length > 0, 'the app logged');
      assert.ok(!lines.some((l) => l.includes('receiver-credential')), 'no log line holds the header');
      assert.ok(!JSON.stringify(attempts).includes('receiver-credential'));

      // Each accepted signal is one observation of the histogram (method push).
      const metrics = await app.app.inject({ method: 'GET', url: '/metrics' });
      const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics.body)?.[1]);
      assert.equal(count('rollcall_ssf_signal_delivery_seconds_count\\{method="push"\\}'), accepted.length);
      assert.equal(count('rollcall_ssf_signal_delivery_seconds_bucket\\{le="5",method="push"\\}'), accepted.length);
    });

    it('a stream without an authorization_header pushes with none', async () => {
      const app = await open();
      const [a] = await users(app, 1);
      const rx = await receiver();
      await insertStream(app, { url: rx.url, aud: AUD });
      await appendUserSignal(app, a!);
      await rx.waitFor(1);
      assert.equal(rx.received[0]!.headers.authorization, undefined);
    });

    it('a removal applies to signals already in the feed: the stream passes over them and moves its cursor', async () => {
      const app = await open();
      const [a, b] = await users(app, 2);
      const rx = await receiver();
      const stream = await insertStream(app, { url: rx.url, aud: AUD });
      await setSubject(app, stream, a!, false);
      for (let i = 0; i < 5; i++) await appendUserSignal(app, a!);
      await appendUserSignal(app, b!);
      await caughtUp(app, stream);
      assert.deepEqual((await distinct(app, rx)).map((p) => p.sub_id), [{ format: 'opaque', id: b }]);
    });

    it('a run of signals the stream passes over (a removed subject\'s) costs one cursor move', async () => {
      const log = new StatementLog();
      lines.length = 0;
      // A generous timeout: a timed-out attempt (a loaded host) would log one attempt more.
      t = await createTestApp({ engine, deps: { delivery: { ...FAST, timeoutMs: 10_000 } }, wrapStorage: (s) => log.wrap(s) });
      await t.app.ready();
      const app = t;
      const [a, b] = await users(app, 2);
      const rx = await receiver();
      const stream = await insertStream(app, { url: rx.url, aud: AUD });
      await updateSubscription(app.storage.db, app.team.id, stream, { state: 'paused', paused_reason: 'held by the test' });
      await setSubject(app, stream, a!, false);
      for (let i = 0; i < 5; i++) await appendUserSignal(app, a!);
      await appendUserSignal(app, b!);
      log.reset();
      await updateSubscription(app.storage.db, app.team.id, stream, { state: 'active', paused_reason: null });
      await caughtUp(app, stream);
      assert.deepEqual((await distinct(app, rx)).map((p) => p.sub_id), [{ format: 'opaque', id: b }]);
      // One delivery: recordDelivered (PostgreSQL, one statement), or insertAttempt then advanceCursor
      // (SQLite); every other advanceCursor is a move over rows passed over.
      const times = (name: string) => log.statements.filter((n) => n === name).length;
      const delivered = engine.name === 'postgres' ? times('recordDelivered') : times('insertAttempt');
      assert.equal(delivered, 1, JSON.stringify(log.statements));
      assert.equal(times('advanceCursor') - (engine.name === 'postgres' ? 0 : delivered), 1, `the five passed over by one move: ${JSON.stringify(log.statements)}`);
    });

    it('an Authorization header that cannot be opened (sealed under another master key) fails the attempt as "secret" and sends nothing', async () => {
      const app = await open();
      const [a] = await users(app, 1);
      const rx = await receiver();
      const other = new SecretBox(randomBytes(32), STREAM_SECRETS);
      const id = newId();
      const stream = await insertStream(app, { id, url: rx.url, aud: AUD, sealedAuthorization: sealAuthorization(other, id, HEADER) });
      await appendUserSignal(app, a!);
      await until(async () => (await attemptsOf(app.storage.db, stream, 5)).length > 0, 'a failed attempt');
      const [attempt] = await attemptsOf(app.storage.db, stream, 5);
      assert.equal(attempt!.error, 'secret');
      assert.equal(attempt!.status, null);
      assert.equal(rx.received.length, 0);
      assert.ok(!lines.some((l) => l.includes('receiver-credential')));
    });
  });
}
