/**
 * Delta query with two instances on one PostgreSQL (issue 33; scim/delta.ts): two apps, each
 * with its own connection pool, write users at the same time while a client walks a delta page
 * by page, asking the two instances in turn. No delta reports a user twice, and the pages of
 * that delta and the next ones applied to a copy give exactly the users the list returns: a
 * change committed on either instance while a delta is read is in a later delta, never lost,
 * whichever instance numbered it on the feed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { createTestApp, TEST_CONFIG } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines, NO_POSTGRES } from '../support/engines.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
type Json = Record<string, unknown>;

describe('delta query: two instances on one PostgreSQL, writes on both during the walk', { skip: NO_POSTGRES }, () => {
  let t: TestApp;
  let otherStorage: Storage;
  let other: FastifyInstance;

  before(async () => {
    t = await createTestApp({ engine: engines.find((e) => e.name === 'postgres')! });
    otherStorage = connect(t.url, { poolSize: 4 });
    other = await buildApp({ config: TEST_CONFIG, storage: otherStorage, clock: t.clock, delivery: false, asyncRequests: false });
  });
  after(async () => {
    await other.close();
    await otherStorage.close();
    await t.close();
  });

  const on = (instance: number, method: string, url: string, body?: unknown) =>
    (instance % 2 === 0 ? t.app : other).inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${t.token}`, ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });

  it('each user once per delta; the copy kept from the deltas equals the list', async () => {
    const start = JSON.parse((await on(1, 'GET', '/v2/scim/Users/.deltaToken')).body) as Json;
    let token = String(start.nextDeltaToken);
    const copy = new Map<string, Json>();
    let request = 0;
    /** Reads one whole delta, page by page, from alternate instances; answers its next token. */
    const readDelta = async (during?: () => Promise<void>): Promise<string> => {
      const reported = new Set<string>();
      let cursor: string | undefined;
      for (;;) {
        const res = await on(request++, 'GET', `/v2/scim/Users?deltaQuery&deltaToken=${token}&count=4&excludedAttributes=groups${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const body = JSON.parse(res.body) as Json;
        for (const r of body.Resources as Json[]) {
          const id = String(r.id);
          assert.ok(!reported.has(id), `user ${id} reported twice in one delta`);
          reported.add(id);
          if ((r.meta as { isDeleted?: boolean }).isDeleted) copy.delete(id);
          else copy.set(id, r);
        }
        if (typeof body.nextDeltaToken === 'string') return body.nextDeltaToken;
        cursor = String(body.nextCursor);
        await during?.();
      }
    };

    // Writers on both instances: creates, then patches and deletes of what they created.
    const created: string[] = [];
    const writer = async (instance: number) => {
      for (let i = 0; i < 25; i++) {
        const res = await on(instance, 'POST', '/v2/scim/Users', { userName: `w${instance}-${i}@acme.example` });
        assert.equal(res.statusCode, 201, res.body);
        const id = String((JSON.parse(res.body) as Json).id);
        created.push(id);
        if (i % 3 === 0) assert.equal((await on(instance + 1, 'PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: `t${i}` }] })).statusCode, 200);
        if (i % 5 === 0) assert.equal((await on(instance, 'DELETE', `/v2/scim/Users/${id}`)).statusCode, 204);
      }
    };
    const writing = Promise.all([writer(0), writer(1)]);
    let done = false;
    void writing.then(() => {
      done = true;
    });
    while (!done) token = await readDelta(() => new Promise((r) => setImmediate(r)));
    await writing;
    token = await readDelta();

    const list = JSON.parse((await on(0, 'GET', '/v2/scim/Users?count=1000&excludedAttributes=groups')).body) as Json;
    const listed = new Map((list.Resources as Json[]).map((r) => [String(r.id), r]));
    assert.equal(listed.size, 40, '50 created, 10 deleted (hidden)');
    assert.deepEqual(copy, listed);
  });
});
