/**
 * The console's overview shows the deprovisioning figure of issue 33 item 3: of the Shared
 * Signals committed in the last hour and accepted by a push stream's receiver, how many, and the
 * p50 and p99 from commit to acceptance, read from the delivery log (every instance's). Nothing
 * when the team has no stream; a plain sentence when a stream delivered nothing in the hour.
 * Streams and signals are written straight to the database (test/support/ssf-rows.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { lastSeq } from '../../src/storage/repos/events.ts';
import { subscriptionById } from '../../src/storage/repos/subscriptions.ts';
import { createTestApp, json } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';
import { startReceiver } from '../support/receiver.ts';
import { appendUserSignal, insertStream } from '../support/ssf-rows.ts';
import { until } from '../support/wait.ts';

const PASSWORD = 'correct horse battery staple';
const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 10_000 };

for (const engine of engines) {
  describe(`console overview: Shared Signals latency (${engine.name})`, () => {
    it('shows nothing without a stream, then the count and p50/p99 of the signals accepted in the last hour', async () => {
      const t = await createTestApp({ engine, deps: { delivery: FAST } });
      const rx = await startReceiver();
      try {
        await t.app.ready();
        await registerAdmin(t, 'admin@acme.example', PASSWORD);
        const page = new PageSession(t);
        const form = await page.get('/console/sign-in');
        assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);

        const before = await page.get('/console');
        assert.equal(before.statusCode, 200);
        assert.doesNotMatch(before.body, /id="ssf-latency"/);

        const ids: string[] = [];
        for (let i = 0; i < 3; i++) ids.push(String(json(await t.request('POST', '/v2/scim/Users', { userName: `gone${i}@acme.example` })).id));
        const stream = await insertStream(t, { url: rx.url });
        const idle = await page.get('/console');
        assert.match(idle.body, /id="ssf-latency">Shared Signals: no signal accepted/);

        for (const id of ids) await appendUserSignal(t, id);
        await until(async () => (await subscriptionById(t.storage.db, t.team.id, stream))?.cursor === (await lastSeq(t.storage.db, t.team.id)), 'the stream to catch up');
        const shown = await page.get('/console');
        assert.equal(shown.statusCode, 200);
        const figure = /<p id="ssf-latency">([\s\S]*?)<\/p>/.exec(shown.body)?.[1] ?? '';
        assert.match(figure, /<strong>3<\/strong> signals accepted by push receivers/);
        assert.match(figure, /p50 \d+(\.\d)? m?s<\/strong>, <strong>p99 \d+(\.\d)? m?s<\/strong>/);
      } finally {
        await t.close();
        await rx.close();
      }
    });
  });
}
