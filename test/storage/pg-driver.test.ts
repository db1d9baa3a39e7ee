/**
 * Rollcall's PostgreSQL driver (src/storage/pg-driver.ts) on a real server: a statement reaches
 * the driver carrying its template, whose kind the repository declared (a deferrable write and
 * the table it writes); the transaction's BEGIN is the driver's `beginTransaction`, which sends
 * nothing until the transaction's first statement that must go; a deferred write's failure
 * reaches the transaction's caller with PostgreSQL's own error, and nothing of it is written;
 * a revocation notice is heard when its transaction commits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import { newId } from '../../src/ids.ts';
import { PgConnection } from '../../src/storage/pg-driver.ts';
import { insertAuditEvent } from '../../src/storage/repos/audit.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import { insertUser, userById } from '../../src/storage/repos/users.ts';
import { announceRevocation } from '../../src/storage/revocations.ts';
import type { Revoked } from '../../src/storage/revocations.ts';
import { templateOfQuery } from '../../src/storage/statements.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { ROW_TIME, userRow } from '../support/rows.ts';

const postgres = engines.find((e) => e.name === 'postgres');

describe('the PostgreSQL driver', { skip: postgres ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let db: TestDatabase;
  const teamId = newId();
  /** The texts the pooled connections send while recording. */
  let sent: string[] | undefined;
  const original = pg.Client.prototype.query;
  const audit = (id: string) => ({ id, team_id: teamId, at: ROW_TIME, actor: '{"via":"cli"}', request_id: null, action: 'test', resource_type: 'User', resource_id: id, detail: '{}' });
  const count = async (table: 'users' | 'audit_events', id: string) =>
    Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where id = ${id}`.execute(db.storage.db)).rows[0]!.n);

  before(async () => {
    db = await postgres!.open();
    await insertTeam(db.storage.db, { id: teamId, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: ROW_TIME });
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string };
      sent?.push(typeof config === 'string' ? config : config.text);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
  });
  after(async () => {
    pg.Client.prototype.query = original;
    await db?.dispose();
  });

  it('a write of defineWrite reaches the driver carrying its template, with the table its definition writes', async () => {
    const seen: CompiledQuery[] = [];
    const row = userRow(teamId, 'carried@x.example');
    const executeQuery = PgConnection.prototype.executeQuery;
    PgConnection.prototype.executeQuery = function (this: PgConnection, query: CompiledQuery) {
      seen.push(query);
      return executeQuery.call(this, query);
    } as typeof executeQuery;
    try {
      await db.storage.db.transaction().execute((trx) => insertUser(trx, row));
    } finally {
      PgConnection.prototype.executeQuery = executeQuery;
    }
    assert.equal(seen.length, 1);
    assert.equal(templateOfQuery(seen[0]!)?.name, 'insertUser');
    assert.equal(templateOfQuery(seen[0]!)?.writes, 'users');
    assert.equal(await count('users', row.id), 1);
  });

  it("the BEGIN is the driver's and waits: a transaction of deferred writes sends one statement, no BEGIN and no COMMIT; with a read, the BEGIN goes with it", async () => {
    sent = [];
    await db.storage.db.transaction().execute(async (trx) => {
      await insertAuditEvent(trx, audit('begin-waits-1'));
      await insertAuditEvent(trx, audit('begin-waits-2'));
      assert.deepEqual(sent, ['begin', sent![1]], 'the second write of one table sends the BEGIN and the first');
      await insertUser(trx, userRow(teamId, 'begin-waits@x.example'));
    });
    assert.equal(sent.length, 4, sent.join('\n'));
    assert.match(sent[3]!, /^commit$/);
    sent = [];
    const row = userRow(teamId, 'alone@x.example');
    await db.storage.db.transaction().execute(async (trx) => {
      await insertUser(trx, row);
      await insertAuditEvent(trx, audit("alone"));
      assert.deepEqual(sent, [], 'nothing sent before the commit');
    });
    assert.equal(sent.length, 1, sent.join('\n'));
    assert.match(sent[0]!, /^with "rc_write_0" as \(insert into "users" .*\) insert into "audit_events"/s);
    sent = [];
    await db.storage.db.transaction().execute(async (trx) => {
      await insertAuditEvent(trx, audit('with-read'));
      await userById(trx, teamId, row.id);
    });
    assert.deepEqual(sent.map((s) => s.split(' ')[0]), ['begin', 'insert', 'select', 'commit']);
    sent = undefined;
    assert.equal(await count('users', row.id), 1);
    assert.equal(await count('audit_events', 'with-read'), 1);
  });

  it("a deferred write that fails surfaces at the commit as PostgreSQL's error (a unique violation), and nothing of the transaction is written", async () => {
    const taken = userRow(teamId, 'taken@x.example');
    await insertUser(db.storage.db, taken);
    for (const read of [false, true]) {
      const auditId = `failed-${read}`;
      let afterWrites = false;
      await assert.rejects(
        db.storage.db.transaction().execute(async (trx) => {
          if (read) await userById(trx, teamId, taken.id);
          await insertAuditEvent(trx, audit(auditId));
          await insertUser(trx, { ...taken, user_name: `other-${read}` });
          afterWrites = true;
        }),
        (error: { code?: string; constraint?: string }) => error.code === '23505',
      );
      assert.ok(afterWrites, 'the writes answered at once: their failure is the commit\'s');
      assert.equal(await count('audit_events', auditId), 0);
    }
    // The pooled connections serve the next transactions.
    const row = userRow(teamId, 'next@x.example');
    await db.storage.db.transaction().execute((trx) => insertUser(trx, row));
    assert.equal(await count('users', row.id), 1);
  });

  it('a revocation notice is heard when its transaction commits, never when it rolls back', async () => {
    const heard: Revoked[] = [];
    const stop = db.storage.revocations.subscribe((revoked) => heard.push(revoked));
    try {
      await db.storage.db.transaction().execute(async (trx) => {
        await announceRevocation(trx, { kind: 'user', id: 'committed' });
        assert.ok(!heard.some((r) => r.kind === 'user'), 'held while the transaction is open');
      });
      assert.ok(heard.some((r) => r.kind === 'user' && r.id === 'committed'), 'heard once committed, before the caller goes on');
      await assert.rejects(
        db.storage.db.transaction().execute(async (trx) => {
          await announceRevocation(trx, { kind: 'user', id: 'rolled back' });
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.ok(!heard.some((r) => r.kind === 'user' && r.id === 'rolled back'));
    } finally {
      stop();
    }
  });
});
