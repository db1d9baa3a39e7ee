/**
 * Issue 27 item 7: anonymous callers cannot starve authenticated work. Before: six anonymous
 * console sign-ins a second from 16 addresses made most of another team's password writes
 * answer 503, because one queue served both and a sign-in without a team held it for three
 * derivations. Now the hasher (oauth/passwords.ts) gives sign-ins a bounded share of their own,
 * one at a time per address, and serves teams' writes round robin.
 *
 * The derivation is replaced by one the test holds and releases (AppDeps.passwordKdf), so each
 * test watches which unit the hasher starts, never how long anything takes. The hasher's queues
 * are read from /metrics (rollcall_password_hashing_units).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { basic, hiddenFields, Jar, registerClient } from '../support/oauth.ts';
import type { PasswordKdf } from '../../src/oauth/passwords.ts';

/** A derivation that waits for the test: each started one is recorded by its password. */
class HeldKdf implements PasswordKdf {
  readonly started: string[] = [];
  readonly #held: (() => void)[] = [];
  holding = true;

  async hash(password: string): Promise<string> {
    await this.#turn(password);
    return `held$${password}`;
  }

  async verify(password: string, encoded: string): Promise<boolean> {
    await this.#turn(password);
    return encoded === `held$${password}`;
  }

  /** Derivations started and not yet released. */
  get held(): number {
    return this.#held.length;
  }

  releaseOne(): void {
    this.#held.shift()?.();
  }

  releaseAll(): void {
    this.holding = false;
    for (const release of this.#held.splice(0)) release();
  }

  #turn(label: string): Promise<void> {
    this.started.push(label);
    return this.holding ? new Promise((resolve) => this.#held.push(resolve)) : Promise.resolve();
  }
}

/** Polls `check` (a bounded number of turns) until it holds; fails naming what never happened. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 2000; turn++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail(`never happened: ${what}`);
}

/** `answer` once it has come, which must happen without any derivation being released. */
async function answeredAtOnce(what: string, answer: Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  let settled = false;
  void answer.then(
    () => (settled = true),
    () => (settled = true),
  );
  await waitFor(what, () => settled);
  return answer;
}

/** The hasher's units of `cls` in `state`, as /metrics reports them. */
async function units(t: TestApp, cls: 'team' | 'anonymous', state: 'running' | 'queued'): Promise<number> {
  const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = body.split('\n').find((l) => l.startsWith('rollcall_password_hashing_units{') && l.includes(`class="${cls}"`) && l.includes(`state="${state}"`));
  assert.ok(line, 'rollcall_password_hashing_units is reported');
  return Number(line.split(' ').at(-1));
}

/** The console's sign-in page fetched from `address`, ready to be posted from there. */
async function consoleForm(t: TestApp, address: string): Promise<(username: string, password: string) => Promise<LightMyRequestResponse>> {
  const page = await t.app.inject({ method: 'GET', url: '/console/sign-in', remoteAddress: address });
  const jar = new Jar();
  jar.take(page);
  const fields = hiddenFields(page.body);
  return (username, password) =>
    t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      remoteAddress: address,
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ ...fields, username, password }).toString(),
    });
}

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** A PATCH setting `password` on user `id` with `token`. */
const setPassword = (t: TestApp, token: string, id: string, password: string) =>
  t.app.inject({
    method: 'PATCH',
    url: `/v2/scim/Users/${id}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    payload: JSON.stringify({ schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'password', value: password }] }),
  });

async function createUser(t: TestApp, token: string, userName: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v2/scim/Users',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    payload: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName }),
  });
  assert.equal(res.statusCode, 201, res.body);
  return String(json(res).id);
}

describe('issue 27 item 7: anonymous callers cannot starve authenticated work', { timeout: 60_000 }, () => {
  let t: TestApp | undefined;
  let kdf: HeldKdf;
  afterEach(async () => {
    kdf.releaseAll();
    await t?.close();
    t = undefined;
  });

  it('with every anonymous slot and place taken by sign-ins from 16 addresses, team B\'s password write is admitted and its derivation starts', async () => {
    kdf = new HeldKdf();
    kdf.holding = false;
    t = await createTestApp({ deps: { passwordKdf: kdf } });
    const beta = await t.addTeam('beta');
    const id = await createUser(t, beta.token, 'writer@beta.example');
    const addresses = Array.from({ length: 16 }, (_, i) => `203.0.113.${i + 1}`);
    const forms = await Promise.all(addresses.map((address) => consoleForm(t!, address)));
    kdf.holding = true;
    // Sign-ins naming no team: three verifications each, one unit of the anonymous share.
    const flood = forms.map((post, i) => post(`nobody-${i}@example.com`, `a wrong password ${i}`));
    await waitFor('the 16 sign-ins reach the hasher', async () => (await units(t!, 'anonymous', 'running')) + (await units(t!, 'anonymous', 'queued')) === 16);
    assert.equal(await units(t, 'anonymous', 'running'), 1, 'sign-ins hold one slot of two');

    const write = setPassword(t, beta.token, id, 'team beta password');
    await waitFor("team B's derivation starts", () => kdf.started.includes('team beta password'));
    // It started while every sign-in was still held: one running, fifteen waiting.
    assert.equal(kdf.held, 2);
    assert.equal(await units(t, 'anonymous', 'queued'), 15);
    kdf.releaseAll();
    assert.equal((await write).statusCode, 200);
    const answers = await Promise.all(flood);
    assert.deepEqual(answers.map((r) => r.statusCode), Array(16).fill(401), 'every sign-in was checked, none refused');
  });

  it('a second sign-in from an address whose first is still being checked is refused at once: 429 with Retry-After, as the console page, the authorization page and an OAuth error', async () => {
    kdf = new HeldKdf();
    t = await createTestApp({ deps: { passwordKdf: kdf } });
    const client = await registerClient(t);
    const here = '198.51.100.20';
    const [first, second] = [await consoleForm(t, here), await consoleForm(t, here)];
    const elsewhere = await consoleForm(t, '198.51.100.21');

    const checking = first!('someone@acme.example', 'first password try');
    await waitFor('the first sign-in is being checked', () => kdf.started.includes('first password try'));
    const page = await answeredAtOnce('the second sign-in is answered', second!('someone@acme.example', 'second password try'));
    assert.equal(page.statusCode, 429);
    assert.equal(page.headers['retry-after'], '1');
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /already being checked/);

    const grant = await answeredAtOnce(
      'the password grant is answered',
      t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress: here,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
        payload: new URLSearchParams({ grant_type: 'password', username: 'someone@acme.example', password: 'grant password try' }).toString(),
      }),
    );
    assert.equal(grant.statusCode, 429);
    assert.equal(grant.headers['retry-after'], '1');
    assert.equal(json(grant).error, 'slow_down');

    const authorizePage = await t.app.inject({ method: 'GET', url: `/oauth/authorize?client_id=${client.id}&response_type=code`, remoteAddress: here });
    const jar = new Jar();
    jar.take(authorizePage);
    const authorize = await answeredAtOnce(
      'the authorization page sign-in is answered',
      t.app.inject({
        method: 'POST',
        url: '/oauth/authorize',
        remoteAddress: here,
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ ...hiddenFields(authorizePage.body), username: 'someone@acme.example', password: 'authorize password try' }).toString(),
      }),
    );
    assert.equal(authorize.statusCode, 429);
    assert.equal(authorize.headers['retry-after'], '1');
    assert.match(String(authorize.headers['content-type']), /^text\/html/);
    for (const refused of ['second password try', 'grant password try', 'authorize password try']) assert.ok(!kdf.started.includes(refused), `${refused}: never verified`);

    // Another address is admitted (it waits for the anonymous slot), not refused.
    const other = elsewhere('someone@acme.example', 'other address try');
    await waitFor('the other address waits in line', async () => (await units(t!, 'anonymous', 'queued')) === 1);
    kdf.releaseAll();
    assert.equal((await checking).statusCode, 401);
    assert.equal((await other).statusCode, 401);
    // The first one answered: the address may sign in again.
    assert.equal((await (await consoleForm(t, here))('someone@acme.example', 'a later try')).statusCode, 401);
  });

  it('a team flooding password writes does not starve another team: over its own queue it gets 503, and the other team\'s write runs next', async () => {
    kdf = new HeldKdf();
    kdf.holding = false;
    t = await createTestApp({ deps: { passwordKdf: kdf, hashing: { concurrency: 1, maxQueued: 3, maxQueuedPerTeam: 3 } } });
    const beta = await t.addTeam('beta');
    const acmeUsers = await Promise.all(Array.from({ length: 6 }, (_, i) => createUser(t!, t!.token, `flood-${i}@acme.example`)));
    const betaUser = await createUser(t, beta.token, 'writer@beta.example');
    kdf.holding = true;

    const flood = acmeUsers.map((id, i) => setPassword(t!, t!.token, id, `acme password ${i}`));
    // One runs, three wait (the team's share of the queue); the other two are refused at once.
    await waitFor('acme fills its queue', async () => (await units(t!, 'team', 'queued')) === 3 && kdf.held === 1);
    const write = setPassword(t, beta.token, betaUser, 'beta password');
    // The queue's total is reached, but a team with nothing waiting is still admitted.
    await waitFor("beta's write waits in line", async () => (await units(t!, 'team', 'queued')) === 4);
    const runningFirst = kdf.started.length;
    kdf.releaseOne();
    await waitFor('the next derivation starts', () => kdf.started.length === runningFirst + 1);
    assert.equal(kdf.started.at(-1), 'beta password', `started in order: ${kdf.started.join(', ')}`);

    kdf.releaseAll();
    assert.equal((await write).statusCode, 200);
    const statuses = (await Promise.all(flood)).map((r) => r.statusCode);
    assert.deepEqual([...statuses].sort(), [200, 200, 200, 200, 503, 503], statuses.join(','));
  });

  it('a sign-in naming no team makes three verifications, whether two teams hold the name or none, in one turn of the anonymous share', async () => {
    kdf = new HeldKdf();
    kdf.holding = false;
    t = await createTestApp({ deps: { passwordKdf: kdf } });
    const globex = await t.addTeam('globex');
    for (const token of [t.token, globex.token]) {
      const res: LightMyRequestResponse = await t.app.inject({
        method: 'POST',
        url: '/v2/scim/Users',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'shared@example.com', userType: 'admin', password: 'the right password here' }),
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    const [held, unknown] = [await consoleForm(t, '198.51.100.30'), await consoleForm(t, '198.51.100.31')];
    kdf.holding = true;
    const count = (password: string) => kdf.started.filter((p) => p === password).length;
    const inTwoTeams = held('shared@example.com', 'wrong for both teams');
    await waitFor('the first verification starts', () => count('wrong for both teams') === 1);
    const nowhere = unknown('nobody@example.com', 'wrong for a name nobody has');
    await waitFor('the second sign-in waits for the anonymous slot', async () => (await units(t!, 'anonymous', 'queued')) === 1);
    // The first sign-in keeps its slot from one verification to the next: the other waits throughout.
    for (const next of [2, 3]) {
      kdf.releaseOne();
      await waitFor(`verification ${next} of the first sign-in starts`, () => count('wrong for both teams') === next);
      assert.equal(count('wrong for a name nobody has'), 0);
    }
    kdf.releaseOne();
    await waitFor('the second sign-in starts', () => count('wrong for a name nobody has') === 1);
    kdf.releaseAll();
    assert.equal((await inTwoTeams).statusCode, 401);
    assert.equal((await nowhere).statusCode, 401);
    assert.equal(count('wrong for both teams'), 3);
    assert.equal(count('wrong for a name nobody has'), 3, 'the padding makes up the missing accounts');
  });
});
