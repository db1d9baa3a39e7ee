/**
 * Plain signed webhooks (docs/events.md, "Plain signed webhooks") at the level an
 * application developer sees them: a subscription made with `format: "webhook"` answers its
 * `whsec_` secret once and never again; a SCIM write reaches a receiver on 127.0.0.1 as a
 * Standard Webhooks request that the specification's reference library (`standardwebhooks`)
 * verifies; a retry carries the same webhook-id and body; a rotation signs with both secrets
 * during its overlap and with the new one only after; the database holds the secret sealed; bad
 * input is a 400 invalidValue with a clear detail. On every engine.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Answer, Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 2_000 };
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** The three Standard Webhooks headers as the reference library takes them. */
const signed = (headers: IncomingHttpHeaders): Record<string, string> => ({
  'webhook-id': String(headers['webhook-id']),
  'webhook-timestamp': String(headers['webhook-timestamp']),
  'webhook-signature': String(headers['webhook-signature']),
});

interface WebhookPayload {
  type: string;
  timestamp: string;
  data: { sequence: number; event: string; transaction?: string; resource: { type: string; id: string; externalId?: string; location: string; version: string }; changed: string[]; members?: { cleared?: boolean; added?: string[]; removed?: string[] } };
}

for (const engine of engines) {
  describe(`plain signed webhooks (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    afterEach(async () => {
      for (const r of receivers) r.release();
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });
    // The reference library checks webhook-timestamp against the real clock: the test clock starts now.
    const open = async (delivery: Partial<DeliverySettings> | false = FAST) => {
      t = await createTestApp({ engine, clockStart: Date.now(), deps: { delivery } });
      await t.app.ready();
      return t;
    };
    const receiver = async (answer?: Answer) => {
      const r = await startReceiver(answer);
      receivers.push(r);
      return r;
    };
    const post = (app: TestApp, url: string, body: unknown) => app.request('POST', url, body, { 'content-type': 'application/json' });
    const subscribe = async (app: TestApp, body: Record<string, unknown>) => {
      const r = await post(app, '/v2/events/subscriptions', body);
      assert.equal(r.statusCode, 201, r.body);
      return json(r);
    };
    const createUser = async (app: TestApp, userName: string, extra: Record<string, unknown> = {}) => {
      const r = await app.request('POST', '/v2/scim/Users', { userName, ...extra });
      assert.equal(r.statusCode, 201, r.body);
      return json(r);
    };

    it('format webhook: the whsec_ secret is in the creation answer only, never in list or show; the database holds it sealed; SET stays the default', async () => {
      const app = await open(false);
      const created = await subscribe(app, { url: 'https://receiver.example/hooks', format: 'webhook' });
      assert.equal(created.format, 'webhook');
      const secret = String(created.secret);
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and the base64 of 32 bytes');
      assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);

      const list = await app.request('GET', '/v2/events/subscriptions');
      const show = await app.request('GET', `/v2/events/subscriptions/${String(created.id)}`);
      for (const r of [list, show]) {
        assert.equal(r.statusCode, 200);
        assert.equal(r.body.includes(secret.slice(6)), false, 'the secret is never shown again');
        assert.equal(r.body.includes('whsec_'), false);
      }
      assert.equal(json(show).format, 'webhook');
      assert.equal('secret' in json(show), false);
      assert.deepEqual((json(list).subscriptions as { format: string }[]).map((s) => s.format), ['webhook']);

      // The row: sealed, not the secret nor its key in any encoding.
      const row = await app.storage.db.selectFrom('event_subscriptions').selectAll().where('id', '=', String(created.id)).executeTakeFirstOrThrow();
      const key = Buffer.from(secret.slice(6), 'base64');
      const text = JSON.stringify(row);
      for (const form of [secret, secret.slice(6), key.toString('base64url'), key.toString('hex')]) assert.equal(text.includes(form), false, `the row does not hold ${form.slice(0, 8)}…`);
      assert.match(String(row.webhook_secret), /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.equal(row.format, 'webhook');

      const set = await subscribe(app, { url: 'https://receiver.example/sets' });
      assert.equal(set.format, 'set');
      assert.equal('secret' in set, false);
      const setRow = await app.storage.db.selectFrom('event_subscriptions').selectAll().where('id', '=', String(set.id)).executeTakeFirstOrThrow();
      assert.equal(setRow.webhook_secret, null);
    });

    it('the answers carrying a secret (webhook create, rotate, poll create with its pollToken) say Cache-Control: no-store and Pragma: no-cache', async () => {
      const app = await open(false);
      const hook = await post(app, '/v2/events/subscriptions', { url: 'https://receiver.example/hooks', format: 'webhook' });
      const poll = await post(app, '/v2/events/subscriptions', { method: 'poll' });
      const rotated = await post(app, `/v2/events/subscriptions/${String(json(hook).id)}/rotate-secret`, {});
      for (const [r, field] of [[hook, 'secret'], [poll, 'pollToken'], [rotated, 'secret']] as const) {
        assert.ok(r.statusCode === 200 || r.statusCode === 201, r.body);
        assert.equal(typeof json(r)[field], 'string', `${field} is in the answer`);
        assert.equal(r.headers['cache-control'], 'no-store', `no cache may keep ${field}`);
        assert.equal(r.headers.pragma, 'no-cache');
      }
    });

    it('refused with 400 invalidValue and a clear detail: a poll webhook, an unknown format, full on a webhook, rotating a SET subscription, an overlap beyond 7 days', async () => {
      const app = await open(false);
      const refused = async (url: string, body: unknown, detail: RegExp) => {
        const r = await post(app, url, body);
        assert.equal(r.statusCode, 400, r.body);
        assert.equal(json(r).scimType, 'invalidValue');
        assert.match(String(json(r).detail), detail);
      };
      await refused('/v2/events/subscriptions', { method: 'poll', format: 'webhook' }, /format "webhook" is for push subscriptions only/);
      await refused('/v2/events/subscriptions', { url: 'https://receiver.example/h', format: 'jsonish' }, /format must be one of "set", "webhook"/);
      await refused('/v2/events/subscriptions', { url: 'https://receiver.example/h', format: 3 }, /format must be one of "set", "webhook"/);
      await refused('/v2/events/subscriptions', { url: 'https://receiver.example/h', format: 'webhook', full: true }, /full applies to SETs only/);
      const set = await subscribe(app, { url: 'https://receiver.example/sets' });
      await refused(`/v2/events/subscriptions/${String(set.id)}/rotate-secret`, {}, /sends SETs .*only a webhook subscription has a secret to rotate/);
      const hook = await subscribe(app, { url: 'https://receiver.example/hooks', format: 'webhook' });
      await refused(`/v2/events/subscriptions/${String(hook.id)}/rotate-secret`, { overlapSeconds: 8 * 86_400 }, /overlapSeconds must be an integer from 0 to 604800/);
      const missing = await post(app, '/v2/events/subscriptions/NOSUCHSUBSCRIPTION00/rotate-secret', {});
      assert.equal(missing.statusCode, 404);
      const subs = json(await app.request('GET', '/v2/events/subscriptions')).subscriptions as unknown[];
      assert.equal(subs.length, 2, 'nothing refused was created');
    });

    it('a SCIM write reaches a loopback receiver as a Standard Webhooks request the reference library verifies, in seq order, with the contract body', async () => {
      const app = await open();
      const rx = await receiver();
      const created = await subscribe(app, { url: rx.url, format: 'webhook' });
      const hook = new Webhook(String(created.secret));
      const user = await createUser(app, 'ada@acme.example', { externalId: 'ext-ada' });
      const patched = await app.request('PATCH', `/v2/scim/Users/${String(user.id)}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] });
      assert.equal(patched.statusCode, 200);
      const group = await app.request('POST', '/v2/scim/Groups', { displayName: 'Ops', members: [{ value: user.id }] });
      assert.equal(group.statusCode, 201);
      await rx.waitFor(3);

      const payloads = rx.received.map((r) => {
        assert.equal(r.contentType, 'application/json');
        return hook.verify(r.body, signed(r.headers)) as WebhookPayload;
      });
      assert.deepEqual(rx.received.map((r) => r.headers['webhook-id']), [1, 2, 3].map((n) => `evt_${app.team.id}_${n}`));
      assert.deepEqual(payloads.map((p) => p.type), ['user.created', 'user.updated', 'group.created']);
      assert.deepEqual(payloads.map((p) => p.data.sequence), [1, 2, 3]);
      const [first, second, third] = payloads as [WebhookPayload, WebhookPayload, WebhookPayload];
      assert.equal(first.data.event, 'urn:ietf:params:scim:event:prov:create:notice');
      assert.deepEqual(first.data.resource, { type: 'User', id: user.id, externalId: 'ext-ada', location: `${BASE_URL}/v2/scim/Users/${String(user.id)}`, version: 'W/"1"' });
      assert.ok(first.data.changed.includes('userName'), JSON.stringify(first.data.changed));
      assert.equal(typeof first.data.transaction, 'string');
      assert.ok(!Number.isNaN(Date.parse(first.timestamp)));
      assert.deepEqual(second.data.changed, ['title']);
      assert.equal(second.data.resource.version, 'W/"2"');
      assert.equal(third.data.resource.type, 'Group');
      assert.deepEqual(third.data.members, { added: [user.id] });
      // One live secret: one signature.
      assert.equal(String(rx.received[0]!.headers['webhook-signature']).split(' ').length, 1);
      // A tampered body does not verify.
      assert.throws(() => hook.verify(rx.received[0]!.body.replace('ada', 'eve'), signed(rx.received[0]!.headers)));
    });

    it('a group PUT says members were cleared then added; a PATCH remove of path "members" says cleared, so a receiver applying deltas drops the old members', async () => {
      const app = await open();
      const rx = await receiver();
      const created = await subscribe(app, { url: rx.url, format: 'webhook' });
      const hook = new Webhook(String(created.secret));
      const ada = await createUser(app, 'ada@acme.example');
      const bob = await createUser(app, 'bob@acme.example');
      const group = json(await app.request('POST', '/v2/scim/Groups', { displayName: 'Ops', members: [{ value: ada.id }] }));
      const put = await app.request('PUT', `/v2/scim/Groups/${String(group.id)}`, { displayName: 'Ops', members: [{ value: bob.id }] });
      assert.equal(put.statusCode, 200, put.body);
      const emptied = await app.request('PATCH', `/v2/scim/Groups/${String(group.id)}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members' }] });
      assert.ok(emptied.statusCode === 200 || emptied.statusCode === 204, emptied.body);
      await rx.waitFor(5);
      const payloads = rx.received.map((r) => hook.verify(r.body, signed(r.headers)) as WebhookPayload);
      assert.deepEqual(payloads.map((p) => p.type), ['user.created', 'user.created', 'group.created', 'group.replaced', 'group.updated']);
      assert.deepEqual(payloads[3]!.data.members, { cleared: true, added: [bob.id] });
      assert.deepEqual(payloads[4]!.data.members, { cleared: true });
    });

    it('a retried delivery has the same webhook-id and body (a 400, even with an RFC 8935 error body, is a failure for a webhook); the delivery log shows both attempts like a SET\'s', async () => {
      const app = await open();
      const rx = await receiver((_r, i) => (i === 0 ? { status: 400, headers: { 'content-type': 'application/json' }, body: '{"err":"invalid_key"}' } : { status: 204 }));
      const created = await subscribe(app, { url: rx.url, format: 'webhook' });
      await createUser(app, 'retry@acme.example');
      await rx.waitFor(2);
      const [a, b] = rx.received as [typeof rx.received[0], typeof rx.received[0]];
      assert.equal(a.headers['webhook-id'], b.headers['webhook-id']);
      assert.equal(a.body, b.body);
      const hook = new Webhook(String(created.secret));
      for (const r of [a, b]) hook.verify(r.body, signed(r.headers));
      let view: Record<string, unknown> = {};
      for (let i = 0; i < 200 && view.cursor !== 1; i++) {
        view = json(await app.request('GET', `/v2/events/subscriptions/${String(created.id)}`));
        if (view.cursor !== 1) await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(view.cursor, 1);
      const attempts = (view.attempts as { seq: number; status: number | null; error: string | null }[]).slice(0, 2).reverse();
      assert.deepEqual(attempts.map((x) => [x.seq, x.status, x.error]), [[1, 400, 'http 400'], [1, 204, null]]);
    });

    it('rotation: the new secret is shown once; during the overlap both secrets verify (two signatures), after it only the new one; audited', async () => {
      const app = await open();
      const rx = await receiver();
      const created = await subscribe(app, { url: rx.url, format: 'webhook' });
      const old = new Webhook(String(created.secret));
      await createUser(app, 'one@acme.example');
      await rx.waitFor(1);
      old.verify(rx.received[0]!.body, signed(rx.received[0]!.headers));

      const rotated = await post(app, `/v2/events/subscriptions/${String(created.id)}/rotate-secret`, { overlapSeconds: 120 });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const secret = String(json(rotated).secret);
      assert.match(secret, /^whsec_/);
      assert.notEqual(secret, created.secret);
      assert.equal(json(rotated).format, 'webhook');
      const shown = await app.request('GET', `/v2/events/subscriptions/${String(created.id)}`);
      assert.equal(shown.body.includes(secret.slice(6)), false, 'the new secret is not shown again');
      const fresh = new Webhook(secret);

      await createUser(app, 'two@acme.example');
      await rx.waitFor(2);
      const during = rx.received[1]!;
      assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2, 'one signature per live secret');
      assert.equal((fresh.verify(during.body, signed(during.headers)) as WebhookPayload).data.sequence, 2);
      assert.equal((old.verify(during.body, signed(during.headers)) as WebhookPayload).data.sequence, 2);

      // Event 2's delivery is recorded before the clock jumps: its lease would otherwise expire
      // with the jump and event 2 be sent again (at-least-once), arriving as the next request.
      await until(async () => {
        const row = await app.storage.db.selectFrom('event_subscriptions').select('cursor').where('id', '=', String(created.id)).executeTakeFirstOrThrow();
        return Number(row.cursor) >= 2;
      }, "event 2's delivery recorded");
      app.clock.advance(121_000);
      await createUser(app, 'three@acme.example');
      await rx.waitFor(3);
      const after = rx.received[2]!;
      assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1);
      assert.equal((fresh.verify(after.body, signed(after.headers)) as WebhookPayload).data.sequence, 3);
      assert.throws(() => old.verify(after.body, signed(after.headers)), 'the replaced secret no longer signs once its overlap ended');

      const audit = await app.storage.db.selectFrom('audit_events').selectAll().where('resource_id', '=', String(created.id)).execute();
      const actions = audit.map((r) => r.action).sort();
      assert.deepEqual(actions, ['subscription_created', 'subscription_secret_rotated']);
      assert.equal(JSON.stringify(audit).includes(secret.slice(6)), false, 'the audit row does not hold the secret');
    });
  });
}
