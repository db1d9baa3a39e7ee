/**
 * Fair push delivery (issue 27 item 2): a team's slow receivers and long backlog spend that
 * team's delivery slots only. Loopback receivers hold their requests until the test releases
 * them, so what is proven is the schedule, never a duration: another team's event is delivered
 * while every request of the slow team is still held; a slot delivers one SET, then the
 * subscription goes to the back of its team's queue and the next team takes its turn; and the
 * `subscriptions` budget caps how many subscriptions a team holds.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { JSONWebKeySet, JWTPayload } from 'jose';
import { updateTeamLimits } from '../../src/admin.ts';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { subscriptionById } from '../../src/storage/repos/subscriptions.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver, verifyAll } from '../support/receiver.ts';
import type { Answer, Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

// A timeout far beyond the test: a held request is answered only when the test releases it.
const SETTINGS: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 60_000, leaseMs: 180_000 };

for (const engine of engines) {
  describe(`fair push delivery (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    afterEach(async () => {
      for (const r of receivers) r.release();
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });
    const open = async (delivery: Partial<DeliverySettings>) => {
      t = await createTestApp({ engine, deps: { delivery } });
      await t.app.ready();
      return t;
    };
    const receiver = async (answer?: Answer) => {
      const r = await startReceiver(answer);
      receivers.push(r);
      return r;
    };
    const as = (app: TestApp, token: string, method: string, url: string, body?: unknown) =>
      app.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const subscribe = async (app: TestApp, token: string, url: string) => {
      const r = await as(app, token, 'POST', '/v2/events/subscriptions', { url });
      assert.equal(r.statusCode, 201, r.body);
      return String(json(r).id);
    };
    const addUsers = async (app: TestApp, token: string, n: number, prefix: string) => {
      for (let i = 0; i < n; i++) {
        const r = await app.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ userName: `${prefix}${i}@example.com` }) });
        assert.equal(r.statusCode, 201, r.body);
      }
    };
    const jwks = async (app: TestApp) => (await app.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;
    const seqs = (payloads: readonly JWTPayload[]) => payloads.map((p) => Number(p.seq));

    it("a team's receivers that never answer hold its own slots only: another team's event is delivered while every one of them is still held", async () => {
      // Fewer instance slots than the slow team has subscriptions: a schedule that lets a
      // subscription keep its slot gives every slot to the slow team.
      const app = await open({ ...SETTINGS, maxConcurrent: 4 });
      const slowTeam = { id: app.team.id, token: app.token };
      const slow = await Promise.all(Array.from({ length: 6 }, () => receiver(() => 'hang')));
      for (const r of slow) await subscribe(app, slowTeam.token, r.url);
      const beta = await app.addTeam('beta');
      const quick = await receiver();
      await subscribe(app, beta.token, quick.url);

      await addUsers(app, slowTeam.token, 3, 'slow');
      const heldAtSlow = () => slow.reduce((n, r) => n + r.held, 0);
      await until(() => heldAtSlow() >= 2, 'the slow team to take its slots');

      await addUsers(app, beta.token, 1, 'beta');
      await quick.waitFor(1, 20_000);
      assert.deepEqual(seqs(await verifyAll(quick.received, await jwks(app), { issuer: BASE_URL, audience: quick.url })), [1]);
      // The slow team had its `delivery.slots` (2 by default) of the instance's 4, and no more.
      assert.equal(heldAtSlow(), 2, "the slow team's requests are all still held");
      assert.equal(slow.reduce((n, r) => n + r.received.length, 0), 2, 'and it got no other slot meanwhile');
    });

    it('a slot delivers one SET, then the next team takes its turn: with a backlog on both teams their deliveries alternate, and within a team its subscriptions alternate', async () => {
      // One slot on the instance, so every delivery is a turn and their order is the schedule.
      const app = await open({ ...SETTINGS, maxConcurrent: 1 });
      const beta = await app.addTeam('beta');
      const order: string[] = [];
      const logging = (name: string, first: 'hang' | 202 = 202): Answer => (_r, i) => {
        order.push(name);
        return i === 0 && first === 'hang' ? 'hang' : { status: 202 };
      };
      const a1 = await receiver(logging('A1', 'hang'));
      const a2 = await receiver(logging('A2'));
      const b1 = await receiver(logging('B1'));
      const ids = { A1: await subscribe(app, app.token, a1.url), A2: await subscribe(app, app.token, a2.url), B1: await subscribe(app, beta.token, b1.url) };
      for (const [name, id] of Object.entries(ids)) {
        const token = name === 'B1' ? beta.token : app.token;
        assert.equal((await as(app, token, 'POST', `/v2/events/subscriptions/${id}/pause`, {})).statusCode, 200);
      }
      // A backlog on both teams: four events each.
      await addUsers(app, app.token, 4, 'alpha');
      await addUsers(app, beta.token, 4, 'beta');

      // A1 takes the only slot, its first SET held; meanwhile A2 and B1 are claimed and wait for a turn.
      await as(app, app.token, 'POST', `/v2/events/subscriptions/${ids.A1}/resume`, {});
      await until(() => a1.held === 1, 'A1 to hold the slot');
      await as(app, app.token, 'POST', `/v2/events/subscriptions/${ids.A2}/resume`, {});
      await as(app, beta.token, 'POST', `/v2/events/subscriptions/${ids.B1}/resume`, {});
      const leased = async (teamId: string, id: string) => (await subscriptionById(app.storage.db, teamId, id))?.lease_owner != null;
      await until(async () => (await leased(app.team.id, ids.A2)) && (await leased(beta.team.id, ids.B1)), 'A2 and B1 to wait in their queues');
      assert.deepEqual(order, ['A1'], 'nothing else went while the slot was taken');

      a1.release();
      await until(() => order.length === 12, 'every SET to arrive');
      const teams = order.map((n) => n[0]).join('');
      const firstB = teams.indexOf('B');
      assert.ok(firstB >= 1 && firstB <= 2, `B had its first turn after at most one turn per subscription of A ahead of it: ${order.join(' ')}`);
      assert.equal(teams.slice(firstB, firstB + 7), 'BABABAB', `while both had a backlog the teams took turns: ${order.join(' ')}`);
      assert.deepEqual(order.filter((n) => n !== 'B1'), ['A1', 'A2', 'A1', 'A2', 'A1', 'A2', 'A1', 'A2'], `one SET per turn, then the back of the team's queue: ${order.join(' ')}`);
      const keys = await jwks(app);
      for (const [name, r] of [['A1', a1], ['A2', a2], ['B1', b1]] as const) {
        assert.deepEqual(seqs(await verifyAll(r.received, keys, { issuer: BASE_URL, audience: r.url })), [1, 2, 3, 4], `${name} in seq order, once each`);
      }
    });

    it('the subscriptions budget caps how many subscriptions a team holds: one more is refused (400 invalidValue) and counted', async () => {
      const app = await open(SETTINGS);
      await updateTeamLimits({ storage: app.storage, clock: app.clock, baseUrl: BASE_URL }, 'acme', [{ name: 'subscriptions', value: 2 }]);
      const first = await subscribe(app, app.token, 'https://receiver.example/one');
      await subscribe(app, app.token, 'https://receiver.example/two');
      const refused = await as(app, app.token, 'POST', '/v2/events/subscriptions', { method: 'poll' });
      assert.equal(refused.statusCode, 400);
      assert.equal(json(refused).scimType, 'invalidValue');
      assert.match(String(json(refused).detail), /holds 2 event subscriptions, its budget is 2/);
      assert.equal((json(await app.request('GET', '/v2/events/subscriptions')).subscriptions as unknown[]).length, 2, 'nothing was created');
      const metrics = (await app.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, new RegExp(`rollcall_budget_refusals_total\\{team="${app.team.id}",budget="subscriptions"\\} 1`));
      // Another team is not held to it; a deletion makes room.
      const beta = await app.addTeam('beta');
      await subscribe(app, beta.token, 'https://receiver.example/beta');
      assert.equal((await app.request('DELETE', `/v2/events/subscriptions/${first}`)).statusCode, 204);
      await subscribe(app, app.token, 'https://receiver.example/three');
    });
  });
}
