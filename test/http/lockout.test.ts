/**
 * Issue 13.5: the lockout can neither be raced nor abused. A password attempt is reserved before
 * the password is verified, so parallel guesses cannot exceed the limit; failures count per pair
 * (identity, source address) with exponential backoff, so an attacker at one address locks out
 * only that address; a generous ceiling per account caps guessing spread over many addresses;
 * and a right client secret is always accepted, whoever else is failing for that client id.
 * Distinct addresses come from inject()'s remoteAddress. (The same over two instances sharing
 * Redis: shared-limits.test.ts.)
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { basic, hiddenFields, PageSession, registerAdmin, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';
import { DEFAULT_LIMITS } from '../../src/oauth/limits.ts';
import type { LimitSettings } from '../../src/oauth/limits.ts';

const ATTACKER = '203.0.113.7';
const OWNER = '198.51.100.2';

function grantFrom(t: TestApp, address: string, client: TestClient, username: string, password: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
    payload: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
}

function clientAuthFrom(t: TestApp, address: string, client: TestClient): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/introspect',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
    payload: 'token=nothing',
  });
}

/** A form sign-in from `address`: the page, then the post (the status of the post). */
async function formSignIn(t: TestApp, address: string, client: TestClient, username: string, password: string): Promise<number> {
  const session = new PageSession(t);
  const page = await t.app.inject({ method: 'GET', url: `/oauth/authorize?client_id=${client.id}&response_type=code`, remoteAddress: address });
  session.jar.take(page);
  const posted = await t.app.inject({
    method: 'POST',
    url: '/oauth/authorize',
    remoteAddress: address,
    headers: { cookie: session.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...hiddenFields(page.body), username, password }).toString(),
  });
  return posted.statusCode;
}

const limits = (overrides: Partial<LimitSettings>): LimitSettings => ({ ...DEFAULT_LIMITS, ...overrides });

describe('13.5 lockout race and lockout abuse', () => {
  let t: TestApp;
  let client: TestClient;
  let admin: { userName: string; password: string };
  beforeEach(async () => {
    t = await createTestApp({
      limits: limits({
        accountFailures: { points: 5, seconds: 900, blockSeconds: 300 },
        accountCeiling: { points: 12, seconds: 900 },
        clientFailures: { points: 5, seconds: 300, blockSeconds: 300 },
        passwordPerClient: { points: 1000, seconds: 60 },
      }),
    });
    client = await registerClient(t);
    admin = await registerAdmin(t);
  });
  afterEach(() => t.close());

  it('29 parallel wrong guesses and the right password: at most 5 passwords are evaluated (limit 5)', async () => {
    const guesses = Array.from({ length: 29 }, (_, i) => grantFrom(t, ATTACKER, client, admin.userName, `wrong guess ${i}`));
    const all = await Promise.all([...guesses, grantFrom(t, ATTACKER, client, admin.userName, admin.password)]);
    const evaluated = all.filter((r) => r.statusCode !== 429);
    assert.ok(evaluated.length <= 5, `${evaluated.length} guesses were evaluated`);
    assert.ok(all.filter((r) => r.statusCode === 429).length >= 25);
    for (const r of evaluated) assert.ok([200, 400].includes(r.statusCode), r.body);
  });

  it('an attacker at one address cannot lock the admin out at another (password grant and sign-in form); the attacker stays blocked', async () => {
    const attacker: number[] = [];
    for (let i = 0; i < 8; i++) attacker.push((await grantFrom(t, ATTACKER, client, admin.userName, `wrong ${i}`)).statusCode);
    assert.deepEqual(attacker, [400, 400, 400, 400, 400, 429, 429, 429]);
    for (let i = 0; i < 3; i++) assert.equal(await formSignIn(t, ATTACKER, client, admin.userName, `wrong form ${i}`), 429);
    const owner = await grantFrom(t, OWNER, client, admin.userName, admin.password);
    assert.equal(owner.statusCode, 200, owner.body);
    assert.equal(await formSignIn(t, OWNER, client, admin.userName, admin.password), 303);
    // The attacker's block is not lifted by the owner's success, nor by the right password.
    const still = await grantFrom(t, ATTACKER, client, admin.userName, admin.password);
    assert.equal(still.statusCode, 429);
    assert.equal(Number(still.headers['retry-after']) > 200, true, 'the first block lasts blockSeconds (300 s)');
  });

  it('a success refunds the reservation: the owner may mistype four times, sign in, and mistype again', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await grantFrom(t, OWNER, client, admin.userName, `typo ${i}`)).statusCode, 400);
    assert.equal((await grantFrom(t, OWNER, client, admin.userName, admin.password)).statusCode, 200);
    for (let i = 0; i < 4; i++) assert.equal((await grantFrom(t, OWNER, client, admin.userName, `typo again ${i}`)).statusCode, 400);
    assert.equal((await grantFrom(t, OWNER, client, admin.userName, admin.password)).statusCode, 200);
  });

  it('guessing spread over many addresses hits the per-account ceiling (12): no more passwords are evaluated', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await grantFrom(t, `10.1.0.${i + 1}`, client, admin.userName, `wrong ${i}`)).statusCode);
    assert.equal(statuses.filter((s) => s === 400).length, 12, statuses.join(' '));
    assert.deepEqual(statuses.slice(12), Array(8).fill(429));
  });

  it('wrong client secrets are throttled per (client, address); the right secret keeps working from every address', async () => {
    const wrong = { id: client.id, secret: 'rc_cs_not-the-secret' };
    const attacker: number[] = [];
    for (let i = 0; i < 12; i++) {
      attacker.push((await clientAuthFrom(t, ATTACKER, wrong)).statusCode);
      assert.equal((await clientAuthFrom(t, OWNER, client)).statusCode, 200, `the client from its own address after ${i + 1} attacks`);
    }
    assert.deepEqual(attacker, [401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
    // Even from the attacking address, the right secret is checked and accepted.
    assert.equal((await clientAuthFrom(t, ATTACKER, client)).statusCode, 200);
  });
});

describe('13.5 exponential backoff per (identity, address)', () => {
  it('each block of the same source lasts twice the one before', async () => {
    const t = await createTestApp({ limits: limits({ accountFailures: { points: 2, seconds: 600, blockSeconds: 1, maxBlockSeconds: 60 } }) });
    try {
      const client = await registerClient(t);
      const admin = await registerAdmin(t);
      const fail = () => grantFrom(t, ATTACKER, client, admin.userName, 'wrong');
      assert.equal((await fail()).statusCode, 400);
      assert.equal((await fail()).statusCode, 400);
      const first = await fail();
      assert.equal(first.statusCode, 429);
      assert.equal(first.headers['retry-after'], '1');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assert.equal((await fail()).statusCode, 400);
      assert.equal((await fail()).statusCode, 400);
      const second = await fail();
      assert.equal(second.statusCode, 429);
      assert.equal(second.headers['retry-after'], '2');
    } finally {
      await t.close();
    }
  });
});

describe('13.5: a busy server never spends the sign-in attempts', () => {
  it('password grants refused because the hashing queue is full (429) leave the right password usable once it is free', async () => {
    // One derivation at a time and no sign-in waiting: concurrent sign-ins beyond the first are "busy".
    const t = await createTestApp({ deps: { hashing: { concurrency: 1, anonymousQueued: 0 } } });
    try {
      const client = await registerClient(t);
      const admin = await registerAdmin(t);
      // A wrong guess from elsewhere holds the only slot while the owner tries five times.
      const holding = grantFrom(t, ATTACKER, client, admin.userName, 'a wrong password here');
      await new Promise((r) => setTimeout(r, 20));
      const answers = await Promise.all(Array.from({ length: DEFAULT_LIMITS.accountFailures.points }, () => grantFrom(t, OWNER, client, admin.userName, admin.password)));
      assert.equal((await holding).statusCode, 400);
      const busy = answers.filter((r) => r.statusCode === 429);
      assert.equal(busy.length, answers.length, answers.map((r) => r.statusCode).join(','));
      for (const r of busy) assert.match(String(r.json().error_description), /password checks are in progress/);
      // The queue is idle again: the right password signs in (no attempt was spent on "busy").
      const later = await grantFrom(t, OWNER, client, admin.userName, admin.password);
      assert.equal(later.statusCode, 200, later.body);
    } finally {
      await t.close();
    }
  });
});
