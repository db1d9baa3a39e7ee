/**
 * Issue 27 item 8: anonymous traffic leaves memory flat. Before: every well-formed but unknown
 * client id at /oauth/token kept counters (per pair and per client id) for five minutes, and
 * every random sign-in name kept counters for fifteen, in stores without a bound. Now failures
 * are counted only for clients that exist, and every limiter store in process memory holds at
 * most LimitSettings.memoryKeys keys (oauth/bounded-limiter.ts), evicting keys seen once before
 * keys being guessed at. The stores' sizes are read from /metrics (rollcall_limiter_keys).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { basic, registerAdmin, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';
import type { PasswordKdf } from '../../src/oauth/passwords.ts';

/** Keys held by each limiter, as /metrics reports them. */
async function limiterKeys(t: TestApp): Promise<Record<string, number>> {
  const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const keys: Record<string, number> = {};
  for (const m of body.matchAll(/^rollcall_limiter_keys\{limiter="([^"]+)"\} (\d+)$/gm)) keys[m[1]!] = Number(m[2]);
  assert.ok(Object.keys(keys).length > 0, 'rollcall_limiter_keys is reported');
  return keys;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** A client id of the right shape (20 characters of [A-Z0-9]) that no client has. */
const randomClientId = (): string => Array.from(randomBytes(20), (b) => ALPHABET[b % ALPHABET.length]).join('');

function tokenRequest(t: TestApp, authorization: string, address = '192.0.2.10'): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
    payload: 'grant_type=client_credentials',
  });
}

function guess(t: TestApp, client: TestClient, address: string, username: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
    payload: new URLSearchParams({ grant_type: 'password', username, password: `guess ${randomBytes(4).toString('hex')}` }).toString(),
  });
}

/** A derivation that costs nothing, so hundreds of sign-ins stay cheap; no password it was not given matches. */
const instantKdf: PasswordKdf = {
  hash: async (password) => `instant$${password}`,
  verify: async (password, encoded) => encoded === `instant$${password}`,
};

const generous = { points: 1_000_000, seconds: 60 };

describe('issue 27 item 8: anonymous traffic leaves the limiter stores flat', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('2,000 token requests with random unknown client ids keep no client counter; a known client\'s wrong secret still counts', async () => {
    t = await createTestApp({ limits: { oauthPerAddress: generous } });
    const before = await limiterKeys(t);
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => tokenRequest(t!, `Basic ${Buffer.from(`${randomClientId()}:not-a-secret`).toString('base64')}`)),
      );
      for (const r of answers) assert.equal(r.statusCode, 401, r.body);
    }
    const after = await limiterKeys(t);
    assert.equal(after.clientFailures, before.clientFailures);
    assert.equal(after.clientCeiling, before.clientCeiling);
    assert.equal(after.clientFailuresStrikes, before.clientFailuresStrikes);
    // The source is still counted, once, by its address.
    assert.equal(after.oauthPerAddress, 1);

    const client = await registerClient(t);
    const wrong = await tokenRequest(t, basic({ id: client.id, secret: 'rc_cs_wrong' }));
    assert.equal(wrong.statusCode, 401);
    assert.equal(json(wrong).error, 'invalid_client');
    const counted = await limiterKeys(t);
    assert.equal(counted.clientFailures, 1);
    assert.equal(counted.clientCeiling, 1);
  });

  it('random sign-in names beyond the cap keep every store at the cap, and the name under attack stays blocked throughout', async () => {
    const cap = 50;
    t = await createTestApp({
      limits: {
        memoryKeys: cap,
        accountFailures: { points: 3, seconds: 900, blockSeconds: 300 },
        accountCeiling: { points: 1000, seconds: 900 },
        passwordPerClient: generous,
        oauthPerAddress: generous,
      },
      deps: { passwordKdf: instantKdf },
    });
    const client = await registerClient(t);
    const victim = await registerAdmin(t, 'victim@acme.example');
    const attacker = '203.0.113.66';
    for (let i = 0; i < 3; i++) assert.equal((await guess(t, client, attacker, victim.userName)).statusCode, 400);
    assert.equal((await guess(t, client, attacker, victim.userName)).statusCode, 429, 'blocked after three failures');

    // Each round: more one-off names (from as many addresses) than the stores hold, then the
    // attacker again. A plain LRU would have evicted the attacker's counter in every round.
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(
        Array.from({ length: 2 * cap }, (_, i) => guess(t!, client, `10.0.${round}.${i + 1}`, `nobody-${randomBytes(6).toString('hex')}@example.com`)),
      );
      for (const r of answers) assert.equal(r.statusCode, 400, r.body);
      const again = await guess(t, client, attacker, victim.userName);
      assert.equal(again.statusCode, 429, `round ${round}: the attacked name is still blocked`);
    }
    const keys = await limiterKeys(t);
    assert.equal(keys.accountFailures, cap);
    assert.equal(keys.accountCeiling, cap);
    assert.equal(keys.oauthPerAddress, cap);
  });
});
