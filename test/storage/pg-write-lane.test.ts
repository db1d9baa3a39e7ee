/**
 * The PostgreSQL write lane (storage/lane.ts, pg-driver.ts `PgLane`), counted at node-postgres's
 * Client#query: transactions of one statement each are handed to one connection behind one
 * another without waiting for an answer, and each is a transaction of its own (no BEGIN, no
 * COMMIT): one that fails leaves the ones behind it committed. A transaction that would send more
 * than its one statement is refused before anything of it is sent. Lanes hold at most half the
 * pool, so the transactions their holders wait on always find a connection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { NotOneStatement } from '../../src/storage/lane.ts';
import { insertAuditEvent } from '../../src/storage/repos/audit.ts';
import { userById } from '../../src/storage/repos/users.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines, NO_POSTGRES } from '../support/engines.ts';

interface Sent {
  readonly text: string;
  readonly client: object;
  /** Handed to a connection that awaited an answer. */
  readonly behind: boolean;
}

const postgres = engines.find((e) => e.name === 'postgres');

describe('PostgreSQL write lane', { skip: postgres ? false : NO_POSTGRES }, () => {
  let t: TestApp;
  let sent: Sent[] | undefined;
  const original = pg.Client.prototype.query;
  const audit = (id: string) => ({ id, team_id: t.team.id, at: new Date().toISOString(), actor: '{"via":"cli"}', request_id: null, action: 'test', resource_type: 'User', resource_id: null, detail: '{}' });
  const audited = async (id: string) => Number((await sql<{ n: string }>`select count(*) as n from audit_events where id = ${id}`.execute(t.storage.db)).rows[0]!.n);

  before(async () => {
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string };
      sent?.push({ text: typeof config === 'string' ? config : config.text, client: this, behind: !(this as unknown as { readyForQuery: boolean }).readyForQuery });
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    t = await createTestApp({ engine: postgres! });
  });
  after(async () => {
    pg.Client.prototype.query = original;
    await t?.close();
  });

  it('five one-statement transactions: each handed over behind the one before, unanswered, on one connection, with no BEGIN or COMMIT; the one that fails (a taken id) leaves those behind it committed', async () => {
    const lane = (await t.storage.writeLane!())!;
    try {
      sent = [];
      const ids = ['lane-0', 'lane-1', 'lane-1', 'lane-3', 'lane-4'];
      const answers: Promise<void>[] = [];
      for (const id of ids) {
        const handed = lane.handedOver();
        answers.push(lane.db.transaction().execute((trx) => insertAuditEvent(trx, audit(id))));
        await handed;
      }
      const settled = await Promise.allSettled(answers);
      const all = sent;
      sent = undefined;
      assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      assert.equal(((settled[2] as PromiseRejectedResult).reason as { code?: string }).code, '23505');
      assert.equal(all.length, 5, all.map((s) => s.text).join('\n'));
      assert.ok(all.every((s) => /^insert into "audit_events"/.test(s.text)), 'each transaction is its one statement');
      assert.equal(new Set(all.map((s) => s.client)).size, 1);
      assert.deepEqual(all.map((s) => s.behind), [false, true, true, true, true]);
      for (const id of ['lane-0', 'lane-1', 'lane-3', 'lane-4']) assert.equal(await audited(id), 1, id);
    } finally {
      sent = undefined;
      lane.release();
    }
  });

  it('a transaction that reads, writes one table twice or names an isolation level is refused with nothing of it sent; the lane goes on', async () => {
    const lane = (await t.storage.writeLane!())!;
    try {
      sent = [];
      const refused = (error: unknown) => error instanceof NotOneStatement;
      await assert.rejects(
        lane.db.transaction().execute(async (trx) => {
          await userById(trx, t.team.id, 'nobody');
          await insertAuditEvent(trx, audit('lane-read'));
        }),
        refused,
      );
      await assert.rejects(
        lane.db.transaction().execute(async (trx) => {
          await insertAuditEvent(trx, audit('lane-twice-a'));
          await insertAuditEvent(trx, audit('lane-twice-b'));
        }),
        refused,
      );
      await assert.rejects(
        lane.db.transaction().setIsolationLevel('serializable').execute((trx) => insertAuditEvent(trx, audit('lane-serializable'))),
        refused,
      );
      assert.deepEqual(sent.map((s) => s.text), [], 'nothing sent');
      await lane.db.transaction().execute((trx) => insertAuditEvent(trx, audit('lane-after')));
      sent = undefined;
      for (const id of ['lane-read', 'lane-twice-a', 'lane-twice-b', 'lane-serializable']) assert.equal(await audited(id), 0, id);
      assert.equal(await audited('lane-after'), 1);
    } finally {
      sent = undefined;
      lane.release();
    }
  });

  it('lanes hold at most half the pool (4 connections here): a third is refused until one is given back', async () => {
    const first = await t.storage.writeLane!();
    const second = await t.storage.writeLane!();
    assert.ok(first && second);
    assert.equal(await t.storage.writeLane!(), undefined);
    first.release();
    const again = await t.storage.writeLane!();
    assert.ok(again);
    again.release();
    second.release();
  });
});
