/**
 * Issue 13 item 4: scrypt (128 MiB, a libuv thread and about a quarter of a second each) runs
 * before a write's transaction opens, never inside it, and through one bounded queue per app
 * shared by SCIM writes and sign-ins. Before: eight password PATCHes on SQLite made a GET wait
 * for all of them (one connection, each transaction holding it while hashing); twelve on
 * PostgreSQL held every pooled connection. Over the queue's bound the answer is 503 (SCIM) or
 * 429 (OAuth) with Retry-After, in each protocol's error shape. (How the slots are shared between
 * teams and sign-ins: hashing-fairness.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { passwordGrant, registerAdmin, registerClient } from '../support/oauth.ts';
import { SCRYPT_COST } from '../../src/oauth/passwords.ts';

// The order this file checks needs derivations as long as the served ones: the suite's preload
// (test/support/preload.ts) makes them cheap, so the served cost is put back here.
SCRYPT_COST.N = 131072;

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const setPassword = (password: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'password', value: password }] });

for (const engine of engines) {
  describe(`password hashing outside transactions on ${engine.name} (issue 13 item 4)`, () => {
    let t: TestApp;
    let id: string;
    before(async () => {
      t = await createTestApp({ engine });
      id = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'hash@acme.example' })).id);
    });
    after(() => t.close());

    it('a GET is answered while password PATCHes and PUTs are still hashing, and every one of them lands', async (ctx) => {
      // PostgreSQL's pool holds 10 connections: 12 writes hashing inside transactions exhausted it.
      const writes = engine.name === 'postgres' ? 12 : 8;
      let landed = 0;
      const running = Array.from({ length: writes }, (_, i) =>
        (i % 2 === 0
          ? t.request('PATCH', `/v2/scim/Users/${id}`, setPassword(`new password number ${i}`))
          : t.request('PUT', `/v2/scim/Users/${id}`, { userName: 'hash@acme.example', password: `new password number ${i}` })
        ).finally(() => landed++),
      );
      // Once the first write has landed, the others are hashing or waiting for the hasher.
      await Promise.race(running);
      const read = await t.request('GET', `/v2/scim/Users/${id}`);
      const landedAtRead = landed;
      assert.equal(read.statusCode, 200);
      const statuses = (await Promise.all(running)).map((r) => r.statusCode);
      ctx.diagnostic(`the GET was answered after ${landedAtRead} of ${writes} password writes`);
      assert.deepEqual(statuses, Array(writes).fill(200));
      // Before the fix the GET waited for the writes' hashing (the whole batch); now only for
      // whichever short transaction holds the connection. An order, not a time (issue 27 item 14).
      assert.ok(landedAtRead < writes, `the GET was answered only after all ${writes} writes`);
    });
  });
}

describe('the hashing queue bound (issue 13 item 4)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ deps: { hashing: { concurrency: 1, maxQueued: 1 } } });
  });
  after(() => t.close());

  it('SCIM writes over the bound get 503 with Retry-After in an RFC 7644 error body; the others land', async () => {
    const id = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'bound@acme.example' })).id);
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => t.request('PATCH', `/v2/scim/Users/${id}`, setPassword(`password number ${i}`))));
    const busy = answers.filter((r) => r.statusCode === 503);
    assert.ok(busy.length >= 1, `statuses ${answers.map((r) => r.statusCode).join(',')}`);
    assert.equal(answers.filter((r) => r.statusCode === 200).length + busy.length, 5);
    for (const r of busy) {
      assert.equal(r.headers['retry-after'], '1');
      assert.deepEqual(json(r).schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
      assert.equal(json(r).status, '503');
    }
    // The queue drains: a later write is served.
    assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, setPassword('the last one'))).statusCode, 200);
  });

  it('a sign-in storm over the bound gets 429 with Retry-After in an RFC 6749 error body (one sign-in at a time per address, issue 27.7)', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t, 'storm@acme.example');
    const answers = await Promise.all(Array.from({ length: 5 }, () => passwordGrant(t, client, admin)));
    const busy = answers.filter((r) => r.statusCode === 429);
    assert.ok(busy.length >= 1, `statuses ${answers.map((r) => r.statusCode).join(',')}`);
    for (const r of busy) {
      assert.equal(r.headers['retry-after'], '1');
      assert.equal(typeof json(r).error, 'string');
    }
    assert.ok(answers.some((r) => r.statusCode === 200));
  });
});
