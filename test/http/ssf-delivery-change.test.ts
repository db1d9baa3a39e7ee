/**
 * A push stream's delivery changed through the stream management API (SSF 1.0 8.1.1.3 PATCH,
 * 8.1.1.4 PUT) takes effect at once, also while a delivery worker holds the stream with a
 * backlog: after the change's 200 nothing more goes to the old endpoint (only the one push in
 * flight at the change was sent there, and it is sent to the new endpoint again), and the old
 * endpoint never sees the new Authorization header. Receivers A and B on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { ACCOUNT_DISABLED } from '../../src/events/signals.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 10_000 };
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const PUSH = 'urn:ietf:rfc:8935';

for (const engine of engines) {
  describe(`SSF stream delivery changed while held (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    afterEach(async () => {
      for (const r of receivers) r.release();
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });

    for (const verb of ['PATCH', 'PUT'] as const) {
      it(`${verb} to a new endpoint: the backlog and later signals go to the new endpoint only, with the new header`, async () => {
        t = await createTestApp({ engine, deps: { delivery: FAST } });
        await t.app.ready();
        const app = t;
        // A holds its first push until the test releases it, then accepts.
        const a = await startReceiver((_r, i) => (i === 0 ? 'hang' : { status: 202 }));
        const b = await startReceiver();
        receivers.push(a, b);
        const token = await app.tokenFor(app.team.id, ['ssf']);
        const ssf = (method: string, body: unknown) =>
          app.app.inject({ method: method as 'POST', url: '/v2/ssf/stream', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
        const scim = (method: string, url: string, body: unknown) =>
          app.app.inject({ method: method as 'POST', url: `/v2/scim${url}`, headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify(body) });
        const created = await ssf('POST', { delivery: { method: PUSH, endpoint_url: a.url, authorization_header: 'Bearer old-a' }, events_requested: [ACCOUNT_DISABLED] });
        assert.equal(created.statusCode, 201, created.body);
        const id = String(json(created).stream_id);
        const deactivate = async (name: string) => {
          const made = await scim('POST', '/Users', { schemas: [USER], userName: name });
          assert.equal(made.statusCode, 201, made.body);
          const r = await scim('PATCH', `/Users/${String(json(made).id)}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
          assert.equal(r.statusCode, 200, r.body);
        };

        // A backlog: the worker holds the stream, its first push in flight at A.
        for (const n of ['u1', 'u2', 'u3', 'u4']) await deactivate(n);
        await a.waitFor(1);
        const delivery = { method: PUSH, endpoint_url: b.url, authorization_header: 'Bearer new-b' };
        const changed = await ssf(verb, verb === 'PUT' ? { stream_id: id, delivery, events_requested: [ACCOUNT_DISABLED] } : { stream_id: id, delivery });
        assert.equal(changed.statusCode, 200, changed.body);
        // Signals written after the change, then the push in flight at A answered.
        for (const n of ['u5', 'u6']) await deactivate(n);
        a.release();

        await b.waitFor(6);
        // Every signal reached B once, in order; none but the one in flight at the change went to
        // A. That one's cursor move failed (the change took the lease back), so it is sent to B
        // again with the same jti (delivery is at least once; SSF receivers drop a repeated jti).
        const claims = (r: Receiver) => r.received.map((x) => JSON.parse(Buffer.from(x.body.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string });
        assert.equal(a.received.length, 1, 'only the push in flight at the change reached A');
        assert.equal(a.received[0]!.headers.authorization, 'Bearer old-a');
        assert.ok(b.received.every((x) => x.headers.authorization === 'Bearer new-b'), 'B receives its own header');
        const atB = claims(b).map((c) => c.jti);
        assert.equal(atB.length, 6);
        assert.equal(new Set(atB).size, 6, 'each signal once');
        assert.equal(atB[0], claims(a)[0]!.jti, 'the push in flight at the change, sent again first');
        assert.deepEqual(atB, [...atB].sort((x, y) => Number(x.split('.')[1]) - Number(y.split('.')[1])), 'in feed order');
      });
    }
  });
}
