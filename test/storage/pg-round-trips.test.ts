/**
 * PostgreSQL round trips of the read paths and of the writes (issue 14 item 4), counted at
 * node-postgres's Client#query. A statement handed to a connection that awaits no answer starts a
 * round trip; one handed over while an answer is still awaited rides in the same pipeline (the
 * connection's BEGIN and waiting writes go with the statement behind them). A read by id
 * or a `userName eq` lookup opens no transaction (no BEGIN / COMMIT), runs each statement it needs
 * once, and runs its statements compiled once as named prepared statements (parsed and planned
 * once per connection), inside a write's transaction too. The bearer check's own statements
 * (oauth_tokens) are counted apart, since a token cache may answer them from memory.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { HOT_SHAPE_USES, LOOKUP_CONNECTIONS } from '../../src/storage/pg-statements.ts';
import { insertAuditEvent } from '../../src/storage/repos/audit.ts';
import { eventsAfter } from '../../src/storage/repos/events.ts';
import { insertUser, userById } from '../../src/storage/repos/users.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { passwordGrant, postForm, registerAdmin, registerClient } from '../support/oauth.ts';

interface Sent {
  readonly text: string;
  readonly named: boolean;
  /** Handed to a connection that awaited no answer: the statement starts a round trip. */
  readonly trip: boolean;
  /** Sent on one of the shared lookup connections (pg-statements.ts `LookupConnections`), not a pooled one. */
  readonly lane: boolean;
}

/** The statements that start a round trip, by their first words. */
const tripsOf = (sent: readonly Sent[]) => sent.filter((s) => s.trip).map((s) => s.text.split(/\s+/).slice(0, 3).join(' '));

const postgres = engines.find((e) => e.name === 'postgres');
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('PostgreSQL round trips of the read paths', { skip: postgres ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let t: TestApp;
  let userId: string;
  let groupId: string;
  let sent: Sent[] | undefined;
  const original = pg.Client.prototype.query;

  before(async () => {
    // Every statement any pooled connection sends, while a request is being counted.
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string; name?: string };
      // node-postgres's own flag: no answer awaited on this connection.
      const trip = (this as unknown as { readyForQuery: boolean }).readyForQuery;
      const lane = /^rollcall lookups /.test((this as unknown as { connectionParameters: { application_name?: string } }).connectionParameters.application_name ?? '');
      sent?.push(typeof config === 'string' ? { text: config, named: false, trip, lane } : { text: config.text, named: config.name !== undefined, trip, lane });
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    t = await createTestApp({ engine: postgres! });
    userId = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'ada@x.example' })).id);
    groupId = String(json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Eng', members: [{ value: userId }] })).id);
  });
  after(async () => {
    pg.Client.prototype.query = original;
    await t?.close();
  });

  /** What a request sends, the bearer check's statements apart; the request log's background writes left out. */
  const count = async (url: string) => {
    sent = [];
    const res = await t.request('GET', url);
    const all = sent.filter((s) => !/request_log|provisioning_tokens/.test(s.text));
    sent = undefined;
    assert.equal(res.statusCode, 200, res.body);
    const bearer = all.filter((s) => /oauth_tokens/.test(s.text));
    return { res, bearer, rest: all.filter((s) => !bearer.includes(s)) };
  };
  const noTransaction = (statements: readonly Sent[]) =>
    assert.deepEqual(statements.filter((s) => /^\s*(begin|commit|rollback|start transaction)/i.test(s.text)), []);

  it('GET /Users/{id}: no transaction; the user with its groups, one named statement; the bearer check at most one more', async () => {
    for (let i = 0; i < 2; i++) {
      const { res, bearer, rest } = await count(`/v2/scim/Users/${userId}`);
      assert.equal(json(res).id, userId);
      noTransaction([...bearer, ...rest]);
      assert.ok(bearer.length <= 1);
      assert.equal(rest.length, 1, rest.map((s) => s.text).join('\n'));
      assert.ok(rest.every((s) => s.named), 'statements compiled once run prepared by name');
    }
  });

  it('lookups by key of many requests in one turn share a pipelined connection: each answered with its own row, in at most LOOKUP_CONNECTIONS round trips', async () => {
    const team = String((await sql<{ team_id: string }>`select team_id from users where id = ${userId}`.execute(t.storage.db)).rows[0]!.team_id);
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) ids.push(String(json(await t.request('POST', '/v2/scim/Users', { userName: `0lookup-${i}@x.example` })).id));
    for (let round = 0; round < 3; round++) {
      sent = [];
      const rows = await Promise.all(ids.map((id) => userById(t.storage.db, team, id)));
      const lookups = sent.filter((s) => /from "users"/.test(s.text));
      sent = undefined;
      assert.deepEqual(rows.map((r) => r?.id), ids, 'each lookup answered with its own user');
      assert.deepEqual(rows.map((r) => r?.user_name), ids.map((_, i) => `0lookup-${i}@x.example`));
      assert.equal(lookups.length, ids.length);
      assert.ok(lookups.every((s) => s.named), 'prepared by name');
      assert.ok(tripsOf(lookups).length <= LOOKUP_CONNECTIONS, `${tripsOf(lookups).length} round trips for ${ids.length} lookups`);
    }
    // Reads over HTTP at once: all answered, each its own.
    const answers = await Promise.all(ids.map((id) => t.request('GET', `/v2/scim/Users/${id}`)));
    assert.deepEqual(answers.map((r) => json(r).id), ids);
  });

  it('a shared lookup connection the server ends is replaced: reads go on', async () => {
    assert.equal((await t.request('GET', `/v2/scim/Users/${userId}`)).statusCode, 200);
    const ended = await sql<{ n: string }>`select count(pg_terminate_backend(pid)) as n from pg_stat_activity where application_name = ${`rollcall lookups ${process.pid}`}`.execute(t.storage.db);
    assert.ok(Number(ended.rows[0]!.n) >= 1, 'this process had a lookup connection');
    // The connection learns of its end from the server; a read caught in between may fail, as on a pooled connection.
    // A guard against waiting for ever, not a measure of speed.
    const deadline = Date.now() + 20_000;
    while ((await t.request('GET', `/v2/scim/Users/${userId}`)).statusCode !== 200) assert.ok(Date.now() < deadline, 'reads never came back');
    for (let i = 0; i < 10; i++) assert.equal((await t.request('GET', `/v2/scim/Groups/${groupId}?excludedAttributes=members`)).statusCode, 200);
  });

  it('GET /Groups/{id}?excludedAttributes=members: no transaction, one named statement', async () => {
    const { bearer, rest } = await count(`/v2/scim/Groups/${groupId}?excludedAttributes=members`);
    noTransaction([...bearer, ...rest]);
    assert.equal(rest.length, 1);
    assert.ok(rest.every((s) => s.named));
  });

  it('GET /Users?filter=userName eq: no transaction, no count; one statement, the page with its users\' groups', async () => {
    for (const name of ['ada@x.example', 'nobody@x.example']) {
      const { res, bearer, rest } = await count(`/v2/scim/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`);
      const found = name === 'ada@x.example' ? 1 : 0;
      assert.equal(json(res).totalResults, found);
      noTransaction([...bearer, ...rest]);
      assert.equal(rest.length, 1, rest.map((s) => s.text).join('\n'));
      assert.ok(!rest.some((s) => /count\(\*\)/i.test(s.text)), 'the page tells the total');
    }
  });

  it('a list shape that compares by eq only runs prepared by name once it has run HOT_SHAPE_USES times; ranges and patterns never do (their plan depends on the literal)', async () => {
    const named = async (filter: string) => {
      const { res, rest } = await count(`/v2/scim/Users?filter=${encodeURIComponent(filter)}`);
      assert.equal(rest.length, 1, rest.map((s) => s.text).join('\n'));
      return { total: json(res).totalResults, named: rest[0]!.named };
    };
    // A shape no other test runs (the externalId lookup): unnamed at first, then by name.
    const runs = [];
    for (let i = 0; i < HOT_SHAPE_USES + 2; i++) runs.push(await named(i % 2 === 0 ? 'externalId eq "nobody"' : `externalId eq "other-${i}"`));
    assert.deepEqual(runs.map((r) => r.total), runs.map(() => 0));
    assert.equal(runs[0]!.named, false);
    assert.equal(runs.at(-1)!.named, true, 'a hot eq shape is prepared');
    // The prepared page answers as the unnamed one did: the user found, with its groups.
    await t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'externalId', value: 'ext-ada' }] });
    const { res } = await count(`/v2/scim/Users?filter=${encodeURIComponent('externalId eq "ext-ada"')}`);
    assert.deepEqual((json(res).Resources as { id: string; groups: { value: string }[] }[]).map((r) => [r.id, r.groups.map((g) => g.value)]), [[userId, [groupId]]]);
    // A range (`gt`) is planned from its literal too; it runs as a shape, never named. Patterns
    // on userName are found by their own index steps, built per call.
    for (const filter of ['userName gt "a"', 'userName sw "ad"', 'userName co "da@"']) {
      const texts = [];
      for (let i = 0; i < HOT_SHAPE_USES + 2; i++) texts.push(await named(filter));
      assert.deepEqual(texts.map((r) => [r.total, r.named]), texts.map(() => [1, false]), filter);
    }
  });

  it('a hot first page filtered by one equality on a key (userName, externalId) is a read by key: it goes on the shared lookup connections, named, each request answered with its own user', async () => {
    const users: { id: string; name: string; external: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const name = `0keyed-${i}@x.example`;
      const external = `keyed-ext-${i}`;
      users.push({ id: String(json(await t.request('POST', '/v2/scim/Users', { userName: name, externalId: external })).id), name, external });
    }
    for (const [attribute, valueOf] of [['userName', (u: (typeof users)[0]) => u.name], ['externalId', (u: (typeof users)[0]) => u.external]] as const) {
      const url = (u: (typeof users)[0]) => `/v2/scim/Users?filter=${encodeURIComponent(`${attribute} eq "${valueOf(u)}"`)}`;
      // Hot: named from its HOT_SHAPE_USES-th run (the test above); until then on the pool.
      for (let i = 0; i < HOT_SHAPE_USES; i++) await count(url(users[0]!));
      sent = [];
      const answers = await Promise.all(users.map((u) => t.request('GET', url(u))));
      const pages = sent.filter((s) => /from "users"/.test(s.text) && !/oauth_tokens/.test(s.text));
      sent = undefined;
      assert.deepEqual(answers.map((r) => (json(r).Resources as { id: string }[]).map((x) => x.id)), users.map((u) => [u.id]), attribute);
      assert.equal(pages.length, users.length, attribute);
      assert.ok(pages.every((s) => s.lane && s.named), `${attribute}: every page on a lookup connection, by name`);
      noTransaction(pages);
    }
  });

  it('a hot equality on a column that is no key (name.familyName, which many users may share), or a later page, stays on the pooled connections: a read that may be long never holds up the lookups behind it', async () => {
    await t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'name.familyName', value: 'Lovelace' }] });
    for (const [url, found] of [
      [`/v2/scim/Users?filter=${encodeURIComponent('name.familyName eq "Lovelace"')}`, 1],
      [`/v2/scim/Users?filter=${encodeURIComponent('userName eq "ada@x.example"')}&startIndex=2`, 0],
    ] as const) {
      for (let i = 0; i < HOT_SHAPE_USES + 2; i++) {
        const { res, rest } = await count(url);
        assert.equal((json(res).Resources as unknown[]).length, found, url);
        assert.ok(rest.every((s) => !s.lane), `${url}: not on a lookup connection (run ${i + 1})`);
      }
    }
  });

  it('PATCH /Users/{id}: BEGIN, the user with its groups, the update, the audit row with the event, COMMIT, in 3 round trips (BEGIN with the read, the update, the writes with the COMMIT); the statements between prepared by name', async () => {
    for (let i = 0; i < 2; i++) {
      sent = [];
      const res = await t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: `Ada ${i}` }] });
      const all = sent.filter((s) => !/request_log|provisioning_tokens|oauth_tokens/.test(s.text));
      sent = undefined;
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual((json(res).groups as { value: string }[]).map((g) => g.value), [groupId]);
      assert.equal(all.length, 5, all.map((s) => s.text).join('\n'));
      assert.match(all[0]!.text, /^begin$/i);
      assert.match(all[4]!.text, /^commit$/i);
      assert.deepEqual(all.slice(1, 4).map((s) => s.named), [true, true, true], all.map((s) => s.text).join('\n'));
      assert.deepEqual(tripsOf(all), ['begin', 'update "users" set', 'with "rc_write_0" as'], all.map((s) => `${s.trip} ${s.text}`).join('\n'));
    }
  });

  /** What a write sends, the bearer check's and the request log's statements apart. */
  const writeSends = async <R extends { statusCode: number; body: string }>(send: () => Promise<R>) => {
    sent = [];
    const res = await send();
    const all = sent.filter((s) => !/request_log|provisioning_tokens|"oauth_tokens" where "hash"|last_used/.test(s.text));
    sent = undefined;
    return { res, all };
  };
  const rowsOf = async () => {
    const n = async (query: ReturnType<typeof sql<{ n: string }>>) => Number((await query.execute(t.storage.db)).rows[0]!.n);
    return {
      users: await n(sql<{ n: string }>`select count(*) as n from users`),
      audit: await n(sql<{ n: string }>`select count(*) as n from audit_events`),
      events: await n(sql<{ n: string }>`select count(*) as n from events`),
      counted: Number(json(await t.request('GET', '/v2/scim/Users?count=0')).totalResults),
    };
  };

  it('PATCH /Groups/{id} adding one member: one statement and no BEGIN or COMMIT (the group\'s new version, the member, the audit row and the event in one WITH, prepared by name): 1 round trip, all of it written', async () => {
    const group = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Trips', externalId: 'ext-trips' }));
    const id = String(group.id);
    const version = (etag: unknown) => Number(/W\/"(\d+)"/.exec(String(etag))?.[1]);
    for (let i = 0; i < 2; i++) {
      const member = String(json(await t.request('POST', '/v2/scim/Users', { userName: `member-trips-${i}@x.example` })).id);
      const before = await t.request('GET', `/v2/scim/Groups/${id}`);
      const was = await rowsOf();
      const { res, all } = await writeSends(() => t.request('PATCH', `/v2/scim/Groups/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: member }] }] }));
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(all.length, 1, all.map((s) => s.text).join('\n'));
      noTransaction(all);
      assert.match(all[0]!.text, /^with "g" as \(update "groups"/);
      for (const table of ['group_members', 'audit_events', 'events']) assert.ok(all[0]!.text.includes(`insert into "${table}"`), table);
      assert.ok(all[0]!.named, 'prepared by name');
      assert.equal(tripsOf(all).length, 1);
      // All of it written: the member, the new version (the ETag), one audit row, one event.
      const after = await t.request('GET', `/v2/scim/Groups/${id}`);
      assert.ok((json(after).members as { value: string }[]).some((m) => m.value === member));
      assert.equal(version(res.headers.etag), version(before.headers.etag) + 1);
      assert.equal(after.headers.etag, res.headers.etag);
      assert.deepEqual(await rowsOf(), { ...was, audit: was.audit + 1, events: was.events + 1 });
      // The event carries the new version and the group as the create's event stored it.
      const events = (await eventsAfter(t.storage.db, t.team.id, 0, 10_000)).filter((e) => e.resource_id === id);
      const [created, added] = [events[0]!, events.at(-1)!];
      assert.deepEqual([added.type, added.version, added.external_id, JSON.parse(added.changed), JSON.parse(added.members!)], ['patch', version(res.headers.etag), 'ext-trips', ['members'], { added: [member] }]);
      assert.deepEqual(JSON.parse(added.data!), JSON.parse(created.data!));
      const audit = (await sql<{ action: string; detail: string }>`select action, detail from audit_events where resource_id = ${id} order by at desc, id limit 1`.execute(t.storage.db)).rows[0]!;
      assert.deepEqual([audit.action, JSON.parse(audit.detail)], ['members', { added: [member] }]);
    }
  });

  it('PATCH /Groups/{id} removing one member, by filter (Okta) or by a value array of one (Entra ID\'s default): one statement, no BEGIN or COMMIT, 1 round trip; the member gone, the audit row and the event written', async () => {
    const removals: [string, (member: string) => unknown][] = [
      ['filter', (member) => ({ op: 'remove', path: `members[value eq "${member}"]` })],
      ['value array', (member) => ({ op: 'Remove', path: 'members', value: [{ $ref: null, value: member }] })],
    ];
    for (const [form, operation] of removals) {
      const member = String(json(await t.request('POST', '/v2/scim/Users', { userName: `member-leaving-${form.replace(' ', '-')}@x.example` })).id);
      const id = String(json(await t.request('POST', '/v2/scim/Groups', { displayName: `Leavers by ${form}`, externalId: 'ext-leavers', members: [{ value: member }] })).id);
      const was = await rowsOf();
      const { res, all } = await writeSends(() => t.request('PATCH', `/v2/scim/Groups/${id}`, { schemas: [PATCH_OP], Operations: [operation(member)] }));
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(all.length, 1, `${form}: ${all.map((s) => s.text).join('\n')}`);
      noTransaction(all);
      assert.match(all[0]!.text, /^with "g" as \(update "groups"/);
      assert.ok(all[0]!.text.includes('delete from "group_members"'));
      assert.equal(tripsOf(all).length, 1);
      assert.deepEqual(json(await t.request('GET', `/v2/scim/Groups/${id}`)).members ?? [], [], form);
      assert.deepEqual(await rowsOf(), { ...was, audit: was.audit + 1, events: was.events + 1 });
      const removed = (await eventsAfter(t.storage.db, t.team.id, 0, 10_000)).filter((e) => e.resource_id === id).at(-1)!;
      assert.deepEqual([removed.type, removed.version, removed.external_id, JSON.parse(removed.members!)], ['patch', 2, 'ext-leavers', { removed: [member] }]);
    }
  });

  it('PATCH /Groups/{id} adding one member to a group the team does not have: 404 from the one statement, nothing written', async () => {
    const member = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'member-nowhere@x.example' })).id);
    const was = await rowsOf();
    const { res, all } = await writeSends(() => t.request('PATCH', '/v2/scim/Groups/NOSUCHGROUP000000000', { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: member }] }] }));
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(all.length, 1);
    assert.deepEqual(await rowsOf(), was);
  });

  it('POST /Users: one statement and no BEGIN or COMMIT (the user, its audit row, its event and the counters in one WITH, prepared by name), all of it written', async () => {
    for (let i = 0; i < 2; i++) {
      const before = await rowsOf();
      const { res, all } = await writeSends(() => t.request('POST', '/v2/scim/Users', { userName: `one-trip-${i}@x.example` }));
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(all.length, 1, all.map((s) => s.text).join('\n'));
      noTransaction(all);
      assert.match(all[0]!.text, /^with "rc_write_0" as \(insert into "users"/);
      for (const table of ['audit_events', 'events', 'team_counters']) assert.ok(all[0]!.text.includes(`insert into "${table}"`), table);
      assert.ok(all[0]!.named, 'prepared by name');
      assert.deepEqual(await rowsOf(), { users: before.users + 1, audit: before.audit + 1, events: before.events + 1, counted: before.counted + 1 });
      assert.equal(json(await t.request('GET', `/v2/scim/Users/${String(json(res).id)}`)).userName, `one-trip-${i}@x.example`);
    }
  });

  it('POST /Users with a userName another user holds: 409 uniqueness from the one statement, and nothing of it written (no user, audit row, event or count)', async () => {
    const before = await rowsOf();
    const { res, all } = await writeSends(() => t.request('POST', '/v2/scim/Users', { userName: 'ADA@x.example' }));
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(json(res).scimType, 'uniqueness');
    assert.match(all[0]!.text, /^with "rc_write_0" as \(insert into "users"/);
    assert.deepEqual(await rowsOf(), before);
  });

  it('a refresh grant: BEGIN, the rotation with the grant\'s user in one statement, the token pair with its audit row in one statement, COMMIT, in 2 round trips', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t, 'trips@acme.example');
    let refresh = String(json(await passwordGrant(t, client, admin)).refresh_token);
    for (let i = 0; i < 2; i++) {
      const { res, all } = await writeSends(() => postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }, { client }));
      assert.equal(res.statusCode, 200, res.body);
      refresh = String(json(res).refresh_token);
      const texts = all.map((s) => s.text);
      assert.equal(all.length, 4, texts.join('\n'));
      assert.match(texts[0]!, /^begin$/i);
      assert.match(texts[1]!, /^with "r" as \(update "oauth_tokens".*left join "users"/s);
      assert.match(texts[2]!, /^with "rc_write_0" as \(insert into "oauth_tokens".*insert into "audit_events"/s);
      assert.match(texts[3]!, /^commit$/i);
      assert.ok(all.slice(1, 3).every((s) => s.named), 'prepared by name');
      assert.deepEqual(tripsOf(all), ['begin', 'with "rc_write_0" as'], all.map((s) => `${s.trip} ${s.text}`).join('\n'));
    }
  });

  it('a deferred write that fails in the pipeline with the COMMIT fails the transaction, which writes nothing; the read behind a failed write answers the write\'s own error; the connection serves the next transaction', async () => {
    const team = String((await sql<{ team_id: string }>`select team_id from users where id = ${userId}`.execute(t.storage.db)).rows[0]!.team_id);
    const taken = (await userById(t.storage.db, team, userId))!;
    const audit = (id: string) => ({ id, team_id: team, at: new Date().toISOString(), actor: '{"via":"cli"}', request_id: null, action: 'test', resource_type: 'User', resource_id: userId, detail: '{}' });
    const audited = async (id: string) => Number((await sql<{ n: string }>`select count(*) as n from audit_events where id = ${id}`.execute(t.storage.db)).rows[0]!.n);
    const unique = (error: unknown) => (error as { code?: string }).code === '23505';
    for (let i = 0; i < 3; i++) {
      // BEGIN sent with a read; then an audit row and a user whose id is taken, sent with the COMMIT.
      sent = [];
      await assert.rejects(
        t.storage.db.transaction().execute(async (trx) => {
          await userById(trx, team, userId);
          await insertAuditEvent(trx, audit(`pipeline-audit-${i}`));
          await insertUser(trx, { ...taken, user_name: `other-${i}` });
        }),
        unique,
      );
      const trips = tripsOf(sent);
      sent = undefined;
      assert.deepEqual(trips.slice(0, 2), ['begin', 'with "rc_write_0" as'], 'the writes went with the COMMIT');
      assert.equal(await audited(`pipeline-audit-${i}`), 0, 'the audit row of the failed transaction is not written');
      // A failed write, then a read: the read's answer is the write's error, not "transaction aborted".
      await assert.rejects(
        t.storage.db.transaction().execute(async (trx) => {
          await insertAuditEvent(trx, audit(`pipeline-read-${i}`));
          await insertUser(trx, { ...taken, user_name: `again-${i}` });
          await userById(trx, team, userId);
        }),
        unique,
      );
      assert.equal(await audited(`pipeline-read-${i}`), 0);
    }
    // Every pooled connection is clean: writes and reads go on.
    for (let i = 0; i < 12; i++) assert.equal((await t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: `Ada ${i}` }] })).statusCode, 200);
  });

  it('a migration that changes a table under a prepared statement does not break writes: the write is retried unnamed', async () => {
    const patch = (value: string) => t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value }] });
    assert.equal((await patch('before')).statusCode, 200);
    await sql`alter table users add column rc_test_extra text`.execute(t.storage.db);
    try {
      for (let i = 0; i < 3; i++) {
        const res = await patch(`after ${i}`);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(json(res).displayName, `after ${i}`);
      }
    } finally {
      await sql`alter table users drop column rc_test_extra`.execute(t.storage.db);
    }
    assert.equal(json(await t.request('GET', `/v2/scim/Users/${userId}`)).displayName, 'after 2');
  });

  it('a migration that changes a table under a prepared statement breaks no refresh grant and no group PATCH (transactions outside runWrite retried too)', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t, 'stale@acme.example');
    const granted = await passwordGrant(t, client, admin);
    assert.equal(granted.statusCode, 200, granted.body);
    let refresh = String(json(granted).refresh_token);
    const refreshOnce = async () => {
      const res = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }, { client });
      assert.equal(res.statusCode, 200, res.body);
      refresh = String(json(res).refresh_token);
    };
    const patchGroup = async (value: string) => {
      const res = await t.request('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value }] });
      assert.ok(res.statusCode < 300, `${res.statusCode} ${res.body}`);
    };
    // Prepared on every pooled connection the requests happen to use.
    for (let i = 0; i < 4; i++) {
      await refreshOnce();
      await patchGroup(`Eng ${i}`);
    }
    await sql`alter table oauth_tokens add column rc_test_extra text`.execute(t.storage.db);
    await sql`alter table users add column rc_test_extra text`.execute(t.storage.db);
    await sql`alter table groups add column rc_test_extra text`.execute(t.storage.db);
    try {
      for (let i = 0; i < 4; i++) {
        await refreshOnce();
        await patchGroup(`Eng after ${i}`);
      }
    } finally {
      for (const table of ['oauth_tokens', 'users', 'groups']) await sql`alter table ${sql.table(table)} drop column rc_test_extra`.execute(t.storage.db);
    }
    assert.equal(json(await t.request('GET', `/v2/scim/Groups/${groupId}`)).displayName, 'Eng after 3');
    await patchGroup('Eng');
  });

  it('a migration that changes a table under a prepared statement (another instance upgraded) does not break reads', async () => {
    assert.equal((await t.request('GET', `/v2/scim/Users/${userId}`)).statusCode, 200);
    await sql`alter table users add column rc_test_extra text`.execute(t.storage.db);
    for (let i = 0; i < 3; i++) {
      const res = await t.request('GET', `/v2/scim/Users/${userId}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).id, userId);
    }
    await sql`alter table users drop column rc_test_extra`.execute(t.storage.db);
  });
});
