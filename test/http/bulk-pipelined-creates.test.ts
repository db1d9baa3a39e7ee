/**
 * RFC 7644 3.7 on PostgreSQL: a synchronous Bulk's consecutive user creates whose transaction is
 * one statement (no bulkId reference, no password, no catalog, no unique extension value) are
 * handed to one connection back to back, each behind the one before without waiting for its
 * answer (node-postgres's pipeline mode), counted at node-postgres's Client#query as
 * test/storage/pg-round-trips.test.ts counts round trips. Each is still one statement with no
 * BEGIN or COMMIT, a transaction of its own, run by PostgreSQL in the order handed over; a create
 * that is not one statement (a password to hash first) waits for every answer before it, and
 * failOnErrors never lets more creates be handed over than errors remain allowed.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import pg from 'pg';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { auditRows, bulkBody, bulkOk, feedEvents, idOf, listAll, teamOf, USER } from '../support/bulk.ts';
import type { TeamClient } from '../support/bulk.ts';
import { engines, NO_POSTGRES } from '../support/engines.ts';

interface Sent {
  readonly text: string;
  /** The client it was handed to. */
  readonly client: object;
  /** Handed to a connection that awaited an answer: it rode behind the statement before it. */
  readonly behind: boolean;
  /** Every create handed over before it had been answered when it was handed over. */
  readonly afterAnswers: boolean;
  answered: boolean;
}

const postgres = engines.find((e) => e.name === 'postgres');
const postUser = (bulkId: string, userName: string, extra: Record<string, unknown> = {}) => ({ method: 'POST', path: '/Users', bulkId, data: { schemas: [USER], userName, ...extra } });
const isCreate = (s: Sent) => /^with "rc_write_0" as \(insert into "users"/.test(s.text);

describe('Bulk user creates on PostgreSQL are pipelined on one connection', { skip: postgres ? false : NO_POSTGRES }, () => {
  let t: TestApp;
  let team: TeamClient;
  let sent: Sent[] | undefined;
  const original = pg.Client.prototype.query;

  before(() => {
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string };
      // node-postgres's own flag: false while an answer is awaited on this connection.
      const behind = !(this as unknown as { readyForQuery: boolean }).readyForQuery;
      const text = typeof config === 'string' ? config : config.text;
      const record: Sent | undefined = sent && { text, client: this, behind, afterAnswers: sent.filter(isCreate).every((s) => s.answered), answered: false };
      if (record) sent!.push(record);
      const answer = (original as (...a: unknown[]) => unknown).apply(this, args);
      if (record && answer instanceof Promise) {
        answer.then(
          () => (record.answered = true),
          () => (record.answered = true),
        );
      }
      return answer;
    } as typeof original;
  });
  after(() => {
    pg.Client.prototype.query = original;
  });
  beforeEach(async () => {
    t = await createTestApp({ engine: postgres! });
    team = teamOf(t);
  });
  afterEach(() => t.close());

  const counted = async <T>(run: () => Promise<T>): Promise<{ result: T; creates: Sent[]; all: Sent[] }> => {
    sent = [];
    try {
      const result = await run();
      const all = sent;
      return { result, creates: all.filter(isCreate), all };
    } finally {
      sent = undefined;
    }
  };

  it('30 creates: each one statement with no BEGIN or COMMIT, all on one connection, most handed over behind the one before; answered in request order', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `piped.${String(i).padStart(2, '0')}`);
    const { result: ops, creates, all } = await counted(() => bulkOk(team, bulkBody(names.map((n, i) => postUser(`u${i}`, n)))));
    assert.deepEqual(ops.map((o) => o.status), names.map(() => '201'));
    assert.equal(creates.length, 30, 'one statement per create');
    assert.deepEqual(all.filter((s) => /^\s*(begin|commit|rollback|start transaction)/i.test(s.text)), [], 'no BEGIN or COMMIT');
    assert.equal(new Set(creates.map((s) => s.client)).size, 1, "one connection carries the Bulk's creates");
    const behind = creates.filter((s) => s.behind).length;
    assert.ok(behind >= 15, `creates handed over behind an unanswered one: ${behind} of 30`);
    const ids = ops.map((o) => idOf(o.location));
    assert.deepEqual((await listAll(team, '/Users')).map((u) => u.id), ids, 'the list (creation order) is the request order');
    assert.deepEqual((await feedEvents(team)).map((e) => e.id), ids, 'the feed is the request order');
  });

  it('a create with a password is not pipelined: it is handed over only once every create before it was answered', async () => {
    const ops = [postUser('a', 'p.a'), postUser('b', 'p.b'), postUser('c', 'p.c'), postUser('pw', 'p.pw', { password: 'correct horse battery staple 42' }), postUser('d', 'p.d')];
    const { result, creates } = await counted(() => bulkOk(team, bulkBody(ops)));
    assert.deepEqual(result.map((o) => o.status), ['201', '201', '201', '201', '201']);
    assert.equal(creates.length, 5);
    assert.ok(creates[3]!.afterAnswers, 'the create with a password was handed over once the creates before it were answered');
    assert.ok(creates[4]!.afterAnswers, 'and the create after it only once it was answered');
  });

  it('failOnErrors 2 with duplicates early: the Bulk stops after the second error, and nothing after it was handed over (no user, audit row or event)', async () => {
    assert.equal((await team.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'held' })).statusCode, 201);
    const eventsBefore = (await feedEvents(team)).length;
    const auditBefore = (await auditRows(t, t.team.id)).length;
    const { result: ops, creates } = await counted(() =>
      bulkOk(team, bulkBody([postUser('a', 'first.ok'), postUser('d1', 'held'), postUser('d2', 'HELD'), postUser('n1', 'never.1'), postUser('n2', 'never.2'), postUser('n3', 'never.3')], 2)),
    );
    assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), [['a', '201'], ['d1', '409'], ['d2', '409']]);
    assert.equal(creates.length, 3, 'no create after the second error was handed to PostgreSQL');
    assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName).sort(), ['first.ok', 'held']);
    assert.equal((await feedEvents(team)).length, eventsBefore + 1);
    assert.equal((await auditRows(t, t.team.id)).length, auditBefore + 1);
  });
});
