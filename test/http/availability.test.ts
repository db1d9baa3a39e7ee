/**
 * Issue 13 item 3: one tenant's big reads must not starve the others. Against a real listening
 * server (127.0.0.1, port 0, fetch), /healthz keeps being answered while (a) a page of large
 * users is listed, (b) users who are members of many groups are listed with their groups, (c) a
 * group of tens of thousands of members is read. Lists carry a byte budget per page: a page
 * stops early and says so through itemsPerPage (index paging continues from startIndex +
 * itemsPerPage) and nextCursor, and every user is still reached exactly once. A big group's
 * members are read in chunks with the event loop turning between them. Data sizes are scaled
 * down from the report (919 MB page, 100,000 members, 300 x 300 memberships).
 *
 * No assertion reads a clock (issue 27 item 14): the proofs are orders of events. Loop turns
 * are counted by a chain of setImmediate callbacks (one per turn of the event loop, which the
 * server and this client share): the chunks of a group's members are read at distinct turns,
 * and /healthz answers arrive between the first and the last of them, that is, while the big
 * request is in progress.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { MEMBER_STREAM_CHUNK } from '../../src/scim/members.ts';
import { addMembers } from '../../src/storage/repos/groups.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { TableReads } from '../support/storage-spy.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

interface Watched<T> {
  readonly result: T;
  /** The loop turn at which each /healthz answer arrived while `run` was under way. */
  readonly answeredAt: readonly number[];
  /** The loop turns `run` started and ended at. */
  readonly started: number;
  readonly ended: number;
}

/** Counts turns of the event loop: a setImmediate callback runs once per turn and schedules the next. */
class LoopTurns {
  turn = 0;
  #on = true;
  constructor() {
    const tick = () => {
      this.turn++;
      if (this.#on) setImmediate(tick);
    };
    setImmediate(tick);
  }
  stop(): void {
    this.#on = false;
  }
}

/** Membership reads, each noted with the loop turn it ran at. */
class TimedReads extends TableReads {
  readonly turns: number[] = [];
  #loop: LoopTurns | undefined;
  /** Notes reads from now on at the turns of `loop` (none when undefined), forgetting earlier ones. */
  watch(loop: LoopTurns | undefined): void {
    this.#loop = loop;
    if (loop) this.turns.length = 0;
  }
  override transformQuery(args: Parameters<TableReads['transformQuery']>[0]): ReturnType<TableReads['transformQuery']> {
    const before = this.count;
    const node = super.transformQuery(args);
    if (this.#loop && this.count > before) this.turns.push(this.#loop.turn);
    return node;
  }
}

describe('one tenant cannot starve the others (issue 13 item 3)', () => {
  let t: TestApp;
  let base: string;
  const memberReads = new TimedReads('group_members');
  before(async () => {
    t = await createTestApp({ wrapStorage: (storage) => memberReads.wrap(storage) });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  after(() => t.close());

  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown>; bytes: number }> => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${t.token}` } });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, bytes: Buffer.byteLength(text) };
  };

  /**
   * Runs `run` while probing /healthz one request after another, noting the loop turn at which
   * each answer arrives; membership reads are noted with their turns meanwhile.
   */
  async function whileProbing<T>(run: () => Promise<T>): Promise<Watched<T>> {
    const loop = new LoopTurns();
    let done = false;
    const answeredAt: number[] = [];
    // The first probe is answered before the heavy request starts (its connection is open).
    let first: () => void = () => {};
    const connected = new Promise<void>((r) => (first = r));
    const probing = (async () => {
      while (!done) {
        const res = await fetch(`${base}/healthz`);
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        answeredAt.push(loop.turn);
        first();
      }
    })();
    await connected;
    memberReads.watch(loop);
    const started = loop.turn;
    try {
      const result = await run();
      return { result, answeredAt: answeredAt.filter((turn) => turn > started), started, ended: loop.turn };
    } finally {
      done = true;
      memberReads.watch(undefined);
      await probing;
      loop.stop();
    }
  }

  it('a page of large users stops at the byte budget, /healthz stays fast, and paging reaches every user once', async (ctx) => {
    const count = 160;
    // About 240 KB each (60 emails of 4,000 characters): under the 256 KiB resource bound.
    for (let i = 0; i < count; i++) {
      const emails = Array.from({ length: 60 }, (_, j) => ({ value: `${String(j).padStart(2, '0')}${'x'.repeat(3990)}@big${i}.example` }));
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `big${i}@acme.example`, emails });
      assert.equal(res.statusCode, 201, res.body.slice(0, 200));
    }
    const watched = await whileProbing(() => get(`/v2/scim/Users?count=${count}`));
    ctx.diagnostic(`${watched.answeredAt.length} /healthz answers in ${watched.ended - watched.started} loop turns; itemsPerPage ${watched.result.body.itemsPerPage}; ${(watched.result.bytes / 1e6).toFixed(1)} MB`);
    assert.equal(watched.result.status, 200);
    assert.ok(watched.answeredAt.some((turn) => turn < watched.ended), '/healthz was answered while the page was in progress');
    // The page's byte budget (4 MiB) plus at most one resource (256 KiB) and the envelope.
    assert.ok(watched.result.bytes < 4.5 * 1024 * 1024, `the page took ${watched.result.bytes} bytes`);
    const first = watched.result.body;
    assert.equal(first.totalResults, count);
    const perPage = Number(first.itemsPerPage);
    assert.ok(perPage >= 1 && perPage < count, `itemsPerPage ${perPage}`);
    assert.equal((first.Resources as unknown[]).length, perPage);

    // Index paging: continue from startIndex + itemsPerPage.
    const seen = new Set<string>();
    let startIndex = 1;
    for (let pages = 0; startIndex <= count && pages < 100; pages++) {
      const page = (await get(`/v2/scim/Users?count=${count}&startIndex=${startIndex}&attributes=userName`)).body;
      assert.equal(page.startIndex, startIndex);
      for (const r of page.Resources as { id: string }[]) seen.add(r.id);
      startIndex += Number(page.itemsPerPage);
    }
    assert.equal(seen.size, count);

    // Cursor paging: follow nextCursor.
    const viaCursor = new Set<string>();
    let cursor = '';
    for (let pages = 0; pages < 100; pages++) {
      const page = (await get(`/v2/scim/Users?count=${count}&cursor=${encodeURIComponent(cursor)}`)).body;
      for (const r of page.Resources as { id: string }[]) viaCursor.add(r.id);
      if (page.nextCursor === undefined) break;
      cursor = String(page.nextCursor);
    }
    assert.equal(viaCursor.size, count);
    for (let i = 0; i < count; i++) {
      const found = json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(`userName eq "big${i}@acme.example"`)}&attributes=id`));
      await t.request('DELETE', `/v2/scim/Users/${String((found.Resources as { id: string }[])[0]!.id)}`);
    }
  });

  it('users in many groups are listed with their groups in linear time while /healthz stays fast', async (ctx) => {
    const users = 250;
    const groups = 250;
    const userIds: string[] = [];
    for (let i = 0; i < users; i++) userIds.push(String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `member${i}@acme.example` })).id));
    const at = new Date().toISOString();
    for (let g = 0; g < groups; g++) {
      const id = String(json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: `Group ${g}` })).id);
      await t.storage.db.transaction().execute((trx) => addMembers(trx, t.team.id, id, userIds, at));
    }
    const watched = await whileProbing(() => get(`/v2/scim/Users?count=${users}&filter=${encodeURIComponent('userName sw "member"')}`));
    ctx.diagnostic(`${watched.answeredAt.length} /healthz answers in ${watched.ended - watched.started} loop turns; itemsPerPage ${watched.result.body.itemsPerPage}`);
    assert.equal(watched.result.status, 200);
    assert.ok(watched.answeredAt.some((turn) => turn < watched.ended), '/healthz was answered while the list was in progress');
    const listed = watched.result.body.Resources as { groups: unknown[] }[];
    assert.ok(listed.length >= 1);
    for (const u of listed) assert.equal(u.groups.length, groups);
  });

  it('a group of 60,000 members streams its members while /healthz stays fast', async (ctx) => {
    const members = 60_000;
    const group = String(json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Everyone' })).id);
    const ids: string[] = [];
    const at = new Date().toISOString();
    await t.storage.db.transaction().execute(async (trx) => {
      for (let from = 0; from < members; from += 500) {
        const rows = [];
        for (let i = from; i < Math.min(members, from + 500); i++) {
          const id = newId();
          ids.push(id);
          const userName = `m${i}@everyone.example`;
          rows.push({
            id, team_id: t.team.id, user_name: userName, user_name_key: userName, external_id: null, active: 1, user_type: null,
            display_name: null, given_name: null, family_name: null, user_name_search: userName, given_name_search: null, family_name_search: null, password_hash: null, data: JSON.stringify({ userName, active: true }),
            version: 1, created_at: at, updated_at: at,
          });
        }
        await trx.insertInto('users').values(rows).execute();
      }
      await addMembers(trx, t.team.id, group, ids, at);
    });
    const watched = await whileProbing(() => get(`/v2/scim/Groups/${group}`));
    const reads = [...memberReads.turns];
    ctx.diagnostic(`${reads.length} membership reads at loop turns ${reads.join(', ')}; ${watched.answeredAt.length} /healthz answers in ${watched.ended - watched.started} loop turns`);
    assert.equal(watched.result.status, 200);
    assert.equal((watched.result.body.members as unknown[]).length, members);
    // The members are read in chunks, never all at once, and the loop turns between two reads.
    assert.ok(reads.length >= members / MEMBER_STREAM_CHUNK, `${reads.length} membership reads`);
    for (let i = 1; i < reads.length; i++) assert.ok(reads[i]! > reads[i - 1]!, `reads ${i} and ${i + 1} ran in one turn of the loop`);
    // Other requests are answered between the first and the last chunk.
    const between = watched.answeredAt.filter((turn) => turn > reads[0]! && turn < reads.at(-1)!);
    assert.ok(between.length >= 1, '/healthz was answered while the members were being read');
  });
});
