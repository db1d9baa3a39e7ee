/**
 * A real plain webhook (docs/events.md, "Plain signed webhooks"): a receiver on
 * 127.0.0.1 subscribed with `format: "webhook"` on a real Rollcall gets a request per change,
 * which the client's verifyWebhook (and the standardwebhooks reference library) verify with the
 * secret shown once at subscription, and whose typed body names the change.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { Rollcall, verifyWebhook } from '../../packages/client/src/index.ts';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { listeningApp } from '../support/client-server.ts';
import type { ListeningApp } from '../support/client-server.ts';
import { engines } from '../support/engines.ts';
import { until } from '../support/wait.ts';

const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 2_000 };

interface Delivered {
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
}

async function receiver(): Promise<{ url: string; delivered: Delivered[]; server: Server }> {
  const delivered: Delivered[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      delivered.push({ headers: request.headers, raw: Buffer.concat(chunks) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, delivered, server };
}

const subscribeWebhook = (rc: Rollcall, url: string) =>
  rc.http.request<{ id: string; secret?: string; format?: string }>({ method: 'POST', path: '/v2/events/subscriptions', body: { url, format: 'webhook' }, contentType: 'application/json' });


for (const engine of engines) {
  describe(`webhook delivery verified by the client (${engine.name})`, () => {
    let t: ListeningApp | undefined;
    let server: Server | undefined;
    afterEach(async () => {
      await t?.close();
      server?.closeAllConnections();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      [t, server] = [undefined, undefined];
    });

    it('a change reaches the receiver as a signed webhook the client verifies; the typed body names it', async () => {
      // The server's clock starts now: webhook-timestamp is checked against the real clock.
      t = await listeningApp({ engine, clockStart: Date.now(), deps: { delivery: FAST } });
      const r = await receiver();
      server = r.server;
      const rc = new Rollcall({ baseUrl: t.origin, token: t.token });
      const sub = (await subscribeWebhook(rc, r.url)).body;
      assert.match(sub.secret ?? '', /^whsec_[A-Za-z0-9+/]+=*$/, 'the secret is shown once, at subscription');
      const made = await rc.users.create({ userName: 'hook@acme.example' });
      await rc.users.patch(made.id!, [{ op: 'replace', path: 'title', value: 'Lead' }]);
      await until(() => r.delivered.length >= 2, 'two webhooks delivered');

      const events = r.delivered.map((d) => verifyWebhook(sub.secret!, d.raw, d.headers));
      assert.deepEqual(events.map((e) => [e.type, e.data.sequence, e.data.resource.id]), [['user.created', 1, made.id], ['user.updated', 2, made.id]]);
      assert.equal(events[0]!.data.resource.type, 'User');
      assert.ok(events[1]!.data.changed.includes('title'));
      assert.equal(r.delivered[0]!.headers['webhook-id'], `evt_${t.team.id}_1`);
      assert.match(String(r.delivered[0]!.headers['content-type']), /^application\/json/);
      // The reference library agrees; another secret or a changed body does not verify.
      assert.ok(new Webhook(sub.secret!).verify(r.delivered[0]!.raw, r.delivered[0]!.headers as Record<string, string>));
      assert.throws(() => verifyWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, r.delivered[0]!.raw, r.delivered[0]!.headers));
      assert.throws(() => verifyWebhook(sub.secret!, Buffer.concat([r.delivered[0]!.raw, Buffer.from(' ')]), r.delivered[0]!.headers));
    });
  });
}
