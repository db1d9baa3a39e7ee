/**
 * The change feed (issue 10 item 1): every SCIM change writes one event in its own transaction,
 * with a per-team seq that is strictly increasing and gap-free; a refused or rolled-back write
 * leaves none; two instances writing at once on one PostgreSQL still give a gap-free sequence.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { connect } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendEvent, eventsAfter, lastSeq, numberFeeds } from '../../src/storage/repos/events.ts';
import { copyDatabase, CopyError } from '../../src/storage/copy.ts';
import type { Db } from '../../src/storage/types.ts';
import { pruneOnce } from '../../src/events/retention.ts';
import type { EventRow } from '../../src/storage/repos/events.ts';
import { createTestApp, json, TEST_CONFIG } from '../support/app.ts';
import { engines, createPgSchema, postgresUrl } from '../support/engines.ts';
import type { TestEngine } from '../support/engines.ts';
import { issueAccessToken } from '../../src/oauth/tokens.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

for (const engine of engines) {
  describe(`change feed (${engine.name})`, () => {
    it('every kind of change writes one event with type, resource, version, changed names and actor; seq 1, 2, 3, ...', async () => {
      const t = await createTestApp({ engine });
      try {
        const feed = (): Promise<EventRow[]> => eventsAfter(t.storage.db, t.team.id, 0, 1000);
        const u = json(await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example', title: 'Eng', password: 'hunter2 hunter2 x' }, { 'x-request-id': 'req-1' }));
        const id = String(u.id);
        await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] });
        await t.request('PUT', `/v2/scim/Users/${id}`, { userName: 'a@acme.example', nickName: 'A' });
        await t.request('DELETE', `/v2/scim/Users/${id}`);
        await t.request('PUT', `/v2/scim/Users/${id}/activate`);
        const v = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'b@acme.example' })).id);
        const g = String(json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Ops', members: [{ value: id }] })).id);
        await t.request('PATCH', `/v2/scim/Groups/${g}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: v }] }] });
        await t.request('PATCH', `/v2/scim/Groups/${g}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] });
        await t.request('PUT', `/v2/scim/Groups/${g}`, { displayName: 'Operations', members: [{ value: id }] });
        await t.request('DELETE', `/v2/scim/Groups/${g}`);

        const events = await feed();
        assert.deepEqual(events.map((e) => e.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert.deepEqual(
          events.map((e) => [e.type, e.resource_type, e.resource_id, e.version]),
          [
            ['create', 'User', id, 1],
            ['patch', 'User', id, 2],
            ['put', 'User', id, 3],
            ['deactivate', 'User', id, 4],
            ['activate', 'User', id, 5],
            ['create', 'User', v, 1],
            ['create', 'Group', g, 1],
            ['patch', 'Group', g, 2],
            ['patch', 'Group', g, 3],
            ['put', 'Group', g, 4],
            ['delete', 'Group', g, 5],
          ],
        );
        assert.deepEqual(JSON.parse(events[1]!.changed), ['title']);
        assert.deepEqual(JSON.parse(events[2]!.changed), ['nickName', 'title']);
        assert.equal(events[0]!.txn, 'req-1');
        assert.deepEqual(JSON.parse(events[0]!.actor), { via: 'scim', clientId: null, userId: null });
        assert.deepEqual(JSON.parse(events[6]!.members!), { added: [id] });
        assert.deepEqual(JSON.parse(events[7]!.members!), { added: [v] });
        assert.deepEqual(JSON.parse(events[8]!.members!), { removed: [id] });
        assert.deepEqual(JSON.parse(events[9]!.members!), { cleared: true, added: [id] });
        assert.ok(JSON.parse(events[0]!.changed).includes('userName'));
        assert.equal(JSON.stringify(events).includes('hunter2'), false, 'no password in the feed');

        // Another team has its own sequence.
        const other = await t.addTeam('beta');
        await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ userName: 'x@beta.example' }) });
        assert.deepEqual((await eventsAfter(t.storage.db, other.team.id, 0, 10)).map((e) => e.seq), [1]);
      } finally {
        await t.close();
      }
    });

    it('a refused write leaves no event and takes no number; a user deleted in a showing team is a delete event', async () => {
      const t = await createTestApp({ engine, deactivatedUsers: 'visible' });
      try {
        const id = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example' })).id);
        assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'A@acme.example' })).statusCode, 409);
        assert.equal((await t.request('POST', '/v2/scim/Groups', { displayName: 'G', members: [{ value: 'NOSUCHUSER0000000000' }] })).statusCode, 400);
        assert.equal((await t.request('PUT', `/v2/scim/Users/${id}`, { userName: 'a@acme.example' }, { 'if-match': 'W/"9"' })).statusCode, 412);
        assert.equal((await t.request('DELETE', `/v2/scim/Users/${id}`)).statusCode, 204);
        const events = await eventsAfter(t.storage.db, t.team.id, 0, 100);
        assert.deepEqual(events.map((e) => [e.seq, e.type]), [[1, 'create'], [2, 'delete']]);
        assert.equal((JSON.parse(events[1]!.data!) as { active: boolean }).active, false, 'the stored document as the delete left it');
      } finally {
        await t.close();
      }
    });

    it('retention: events older than the retention are pruned in batches, newer ones kept', async () => {
      const t = await createTestApp({ engine });
      try {
        for (let i = 0; i < 7; i++) await t.request('POST', '/v2/scim/Users', { userName: `old${i}@acme.example` });
        t.clock.advance(20 * 86_400_000);
        const post = async (userName: string) => {
          const token = await t.tokenFor(t.team.id, ['read', 'write']);
          const r = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ userName }) });
          assert.equal(r.statusCode, 201);
        };
        await post('new@acme.example');
        t.clock.advance(11 * 86_400_000);
        const result = await pruneOnce(t.storage.db, t.clock, 30, 3);
        assert.equal(result.events, 7, 'all seven old events, three per batch');
        assert.deepEqual((await eventsAfter(t.storage.db, t.team.id, 0, 100)).map((e) => e.seq), [8]);
        // The counter is not reset by pruning: the next event continues the sequence.
        await post('newer@acme.example');
        assert.deepEqual((await eventsAfter(t.storage.db, t.team.id, 0, 100)).map((e) => e.seq), [8, 9]);
        // Nor by pruning the whole feed: the next event still continues it.
        t.clock.advance(40 * 86_400_000);
        assert.equal((await pruneOnce(t.storage.db, t.clock, 30, 3)).events, 2);
        assert.deepEqual(await eventsAfter(t.storage.db, t.team.id, 0, 100), []);
        assert.equal(await lastSeq(t.storage.db, t.team.id), 9);
        await post('newest@acme.example');
        assert.deepEqual((await eventsAfter(t.storage.db, t.team.id, 0, 100)).map((e) => e.seq), [10]);
      } finally {
        await t.close();
      }
    });

    it('events written while nobody read the feed, then pruned: a reader behind them gets a 410, never silence', async () => {
      const t = await createTestApp({ engine });
      try {
        assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'seen@acme.example' })).statusCode, 201);
        const read = json(await t.request('GET', '/v2/events?after=0'));
        assert.equal(read.next, 1);
        // Three changes nobody reads (no listing, no poll, no delivery worker in this app).
        for (let i = 0; i < 3; i++) assert.equal((await t.request('POST', '/v2/scim/Users', { userName: `unread${i}@acme.example` })).statusCode, 201);
        t.clock.advance(31 * 86_400_000);
        assert.equal((await pruneOnce(t.storage.db, t.clock, 30)).events, 4);
        const token = await t.tokenFor(t.team.id, ['read', 'write']);
        const behind = await t.app.inject({ method: 'GET', url: '/v2/events?after=1', headers: { authorization: `Bearer ${token}` } });
        assert.equal(behind.statusCode, 410, behind.body);
        // The numbering goes on after the pruned ones.
        const r = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ userName: 'after@acme.example' }) });
        assert.equal(r.statusCode, 201);
        assert.deepEqual((await eventsAfter(t.storage.db, t.team.id, 0, 10)).map((e) => e.seq), [5]);
      } finally {
        await t.close();
      }
    });
  });
}

const pgEngine = engines.find((e): e is TestEngine => e.name === 'postgres');

/**
 * Holds `team`'s counter row in a transaction of its own (FOR UPDATE), as a reader numbering the
 * feed does, from the moment this resolves until `release()` (or `maxMs` at most).
 */
/**
 * Holds a team's counter row in an open transaction until released. `held()` says whether it
 * still is: an operation that completes while it is did not wait for the row (an order, not a
 * time: issue 27 item 14). `maxMs` only keeps a test that does wait from hanging for ever; it
 * ends the hold, so such a test fails on held().
 */
async function holdCounterRow(db: Db, team: string, maxMs = 30_000): Promise<{ release(): Promise<void>; held(): boolean }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  let holding = false;
  const holder = db.transaction().execute(async (trx) => {
    await sql`select seq from event_counters where team_id = ${team} for update`.execute(trx);
    holding = true;
    locked();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([released, new Promise((r) => (timer = setTimeout(r, maxMs)))]);
    clearTimeout(timer);
    holding = false;
  });
  await Promise.race([isLocked, holder]);
  return {
    async release() {
      release();
      await holder;
    },
    held: () => holding,
  };
}

describe('change feed: numbered by its readers on PostgreSQL', { skip: pgEngine ? false : 'TEST_DATABASE_URL is not set' }, () => {
  const TEAM = 'TEAMC000000000000000';
  const event = (resource: string) => ({
    team_id: TEAM, at: '2026-01-01T00:00:00.000Z', type: 'create', resource_type: 'User', resource_id: resource, version: 1,
    changed: '[]', actor: '{}', txn: null, external_id: null, data: null, members: null,
  });

  it("a writer of the team is not held by another still open after its event: seq follows the commits, a transaction's events stay in order", async () => {
    const { storage, dispose } = await pgEngine!.open();
    try {
      let releaseFirst!: () => void;
      const secondDone = new Promise<void>((r) => (releaseFirst = r));
      let firstAppended!: () => void;
      const appended = new Promise<void>((r) => (firstAppended = r));
      // The first transaction appends, then stays open until the second has committed and been
      // read (or 30 s: a second that waits on the first's lock would otherwise hold this test for
      // ever; it then fails on firstOpen).
      let firstOpen = false;
      const first = storage.db.transaction().execute(async (trx) => {
        await appendEvent(trx, event('FIRST000000000000000'));
        firstOpen = true;
        firstAppended();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([secondDone, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
        clearTimeout(timer);
        firstOpen = false;
      });
      await appended;
      await storage.db.transaction().execute(async (trx) => {
        await appendEvent(trx, event('SECOND00000000000000'));
        await appendEvent(trx, event('SECOND00000000000001'));
      });
      assert.equal(firstOpen, true, "the second writer committed while the first one's transaction was open");
      // A reader while the first is still open sees the second's events, numbered from 1.
      assert.deepEqual((await eventsAfter(storage.db, TEAM, 0, 10)).map((e) => [e.seq, e.resource_id]), [[1, 'SECOND00000000000000'], [2, 'SECOND00000000000001']]);
      assert.equal(await lastSeq(storage.db, TEAM), 2);
      releaseFirst();
      await first;
      const events = await eventsAfter(storage.db, TEAM, 0, 10);
      assert.deepEqual(events.map((e) => [e.seq, e.resource_id]), [[1, 'SECOND00000000000000'], [2, 'SECOND00000000000001'], [3, 'FIRST000000000000000']]);
      assert.equal(await lastSeq(storage.db, TEAM), 3);
      // A rolled-back transaction takes no number.
      await assert.rejects(storage.db.transaction().execute(async (trx) => {
        await appendEvent(trx, event('ROLLEDBACK0000000000'));
        throw new Error('rolled back');
      }), /rolled back/);
      await storage.db.transaction().execute((trx) => appendEvent(trx, event('AFTER000000000000000')));
      assert.deepEqual((await eventsAfter(storage.db, TEAM, 3, 10)).map((e) => [e.seq, e.resource_id]), [[4, 'AFTER000000000000000']]);
      // Committed events nobody has read yet are numbered in the order they were written.
      for (const id of ['LATER000000000000000', 'LATER000000000000001', 'LATER000000000000002']) await storage.db.transaction().execute((trx) => appendEvent(trx, event(id)));
      assert.deepEqual((await eventsAfter(storage.db, TEAM, 4, 2)).map((e) => [e.seq, e.resource_id]), [[5, 'LATER000000000000000'], [6, 'LATER000000000000001']]);
      assert.deepEqual((await eventsAfter(storage.db, TEAM, 6, 10)).map((e) => [e.seq, e.resource_id]), [[7, 'LATER000000000000002']]);
    } finally {
      await dispose();
    }
  });
});

describe('change feed on PostgreSQL: the counter', { skip: pgEngine ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('a counter left behind its feed (a manual restore) is passed, not reused: the next event follows the newest', async () => {
    const t = await createTestApp({ engine: pgEngine! });
    try {
      assert.equal((await t.request('POST', '/v2/scim/Groups', { displayName: 'One' })).statusCode, 201);
      assert.equal(await lastSeq(t.storage.db, t.team.id), 1);
      await sql`update event_counters set seq = 0`.execute(t.storage.db);
      assert.equal((await t.request('POST', '/v2/scim/Groups', { displayName: 'Two' })).statusCode, 201);
      assert.deepEqual((await eventsAfter(t.storage.db, t.team.id, 0, 10)).map((e) => [e.seq, e.resource_type, e.type]), [[1, 'Group', 'create'], [2, 'Group', 'create']]);
    } finally {
      await t.close();
    }
  });

  it('pruning leaves the counter alone: a transaction holding its row does not hold the pruner', async () => {
    const t = await createTestApp({ engine: pgEngine! });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await t.request('POST', '/v2/scim/Users', { userName: `p${i}@acme.example` })).statusCode, 201);
      // Numbered before the row is taken (numbering waits for the row; pruning what is numbered must not).
      assert.equal(await lastSeq(t.storage.db, t.team.id), 3);
      t.clock.advance(40 * 86_400_000);
      const row = await holdCounterRow(t.storage.db, t.team.id);
      const pruned = await pruneOnce(t.storage.db, t.clock, 30);
      const heldMeanwhile = row.held();
      await row.release();
      assert.ok(pruned.events >= 3);
      assert.equal(heldMeanwhile, true, 'the pruner finished while the counter row was held');
      assert.equal(await lastSeq(t.storage.db, t.team.id), pruned.events);
    } finally {
      await t.close();
    }
  });

  it('no write waits for the counter row: a transaction holding it (a reader numbering, a pruner) holds no writer of the team', async () => {
    const t = await createTestApp({ engine: pgEngine! });
    try {
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'first@acme.example' })).statusCode, 201);
      assert.equal(await lastSeq(t.storage.db, t.team.id), 1);
      const row = await holdCounterRow(t.storage.db, t.team.id);
      const statuses = await Promise.all([1, 2, 3].map(async (i) => (await t.request('POST', '/v2/scim/Users', { userName: `held${i}@acme.example` })).statusCode));
      const heldMeanwhile = row.held();
      await row.release();
      assert.deepEqual(statuses, [201, 201, 201]);
      assert.equal(heldMeanwhile, true, 'the writers committed while the counter row was held');
      assert.deepEqual((await eventsAfter(t.storage.db, t.team.id, 0, 10)).map((e) => e.seq), [1, 2, 3, 4]);
    } finally {
      await t.close();
    }
  });
});

describe("change feed on PostgreSQL: the delivery workers' sweep and the copy", { skip: pgEngine ? false : 'TEST_DATABASE_URL is not set' }, () => {
  const event = (team: string) => ({
    team_id: team, at: '2026-01-01T00:00:00.000Z', type: 'create', resource_type: 'User', resource_id: 'U'.repeat(20), version: 1,
    changed: '[]', actor: '{}', txn: null, external_id: null, data: null, members: null,
  });
  const teamId = (i: number) => `SWEEP${String(i).padStart(15, '0')}`;
  const unnumbered = async (db: Db) => Number((await sql<{ n: string }>`select count(*) as n from events where seq < 0`.execute(db)).rows[0]!.n);

  it('numbers every team that wrote, however many: none starved behind the first hundred', async () => {
    const { storage, dispose } = await pgEngine!.open();
    try {
      for (let i = 0; i < 130; i++) await storage.db.transaction().execute((trx) => appendEvent(trx, event(teamId(i))));
      assert.equal(await unnumbered(storage.db), 130);
      assert.equal(await numberFeeds(storage.db), 130);
      assert.equal(await unnumbered(storage.db), 0);
      assert.deepEqual((await eventsAfter(storage.db, teamId(129), 0, 10)).map((e) => e.seq), [1]);
    } finally {
      await dispose();
    }
  });

  it("skips a team whose counter row another transaction holds, and numbers the others; a copy then refuses the unnumbered source", async () => {
    const { storage, dispose } = await pgEngine!.open();
    const dir = mkdtempSync(join(tmpdir(), 'rollcall-sweep-'));
    try {
      for (const i of [1, 2]) await storage.db.transaction().execute((trx) => appendEvent(trx, event(teamId(i))));
      assert.equal(await lastSeq(storage.db, teamId(1)), 1);
      await storage.db.transaction().execute((trx) => appendEvent(trx, event(teamId(1))));
      const row = await holdCounterRow(storage.db, teamId(1));
      try {
        assert.equal(await numberFeeds(storage.db), 1, 'the free team only');
        assert.equal(row.held(), true, 'the sweep finished while the row was held: it did not wait for it');
        assert.deepEqual((await eventsAfter(storage.db, teamId(2), 0, 10)).map((e) => e.seq), [1]);
        assert.equal(await unnumbered(storage.db), 1, "the held team's new event waits for its row");
        // A copy cannot number it either: it refuses rather than copy a placeholder.
        const target = connect(`sqlite:${join(dir, 'copy.db')}`);
        try {
          await migrate(target);
          await assert.rejects(copyDatabase(storage, target, { batch: 500 }), (error: unknown) => error instanceof CopyError && /still being written/.test(error.message));
        } finally {
          await target.close();
        }
      } finally {
        await row.release();
      }
      assert.deepEqual((await eventsAfter(storage.db, teamId(1), 0, 10)).map((e) => e.seq), [1, 2]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await dispose();
    }
  });
});

describe('change feed: two instances on one PostgreSQL', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('concurrent writes through two apps with their own pools give a gap-free, strictly increasing seq in commit order', async () => {
    const schema = await createPgSchema(postgresUrl!);
    const a = connect(schema.url, { poolSize: 4 });
    const b = connect(schema.url, { poolSize: 4 });
    try {
      await migrate(a);
      const t = await createTestApp({ engine: { name: 'postgres', open: async () => ({ storage: a, url: schema.url, dispose: async () => {} }) } });
      const second = await buildApp({ config: TEST_CONFIG, storage: b, clock: t.clock });
      const token = (await issueAccessToken(b.db, t.clock, { teamId: t.team.id, userId: null, clientId: null, scope: ['read', 'write'], ttlSeconds: 3600 })).token;
      const apps = [t.app, second];
      // A reader following the feed while the writes race must never see a later seq before an
      // earlier one is visible (a gap it would skip past forever): the row lock orders commits.
      let done = false;
      let seen = 0;
      const gaps: string[] = [];
      const reader = (async () => {
        while (!done || seen < 120) {
          for (const e of await eventsAfter(b.db, t.team.id, seen, 1000)) {
            if (e.seq !== seen + 1) gaps.push(`${seen} -> ${e.seq}`);
            seen = e.seq;
          }
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      const responses = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          apps[i % 2]!.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ userName: `u${i}@acme.example` }) }),
        ),
      );
      done = true;
      assert.deepEqual(responses.map((r) => r.statusCode), Array(120).fill(201));
      await reader;
      assert.deepEqual(gaps, [], 'a reader following the feed never saw a gap');
      const events = await eventsAfter(a.db, t.team.id, 0, 1000);
      assert.deepEqual(events.map((e) => e.seq), Array.from({ length: 120 }, (_, i) => i + 1));
      assert.equal(new Set(events.map((e) => e.resource_id)).size, 120);
      await second.close();
      await t.close();
    } finally {
      await b.close();
      await a.close();
      await schema.drop();
    }
  });
});
