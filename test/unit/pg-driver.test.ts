/**
 * PostgreSQL's driver (src/storage/pg-driver.ts): what a connection sends for each transaction
 * shape, knowing each statement's kind from its compiled query (statements.ts `TemplateQuery`),
 * against a recording stand-in for node-postgres. test/storage/pg-round-trips.test.ts and
 * test/storage/pg-driver.test.ts run the same on a real server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import type pg from 'pg';
import { postgresHooks } from '../../src/storage/dialect.ts';
import type { TransactionSettingQuery } from '../../src/storage/dialect.ts';
import { PgConnection } from '../../src/storage/pg-driver.ts';
import type { Send } from '../../src/storage/pg-driver.ts';
import { PreparedNames } from '../../src/storage/pg-statements.ts';
import { noticeOf, Revocations } from '../../src/storage/revocations.ts';
import type { NoticeQuery, Revoked } from '../../src/storage/revocations.ts';
import { boundQuery, compileStatement, defineSole, defineStatement, defineWrite } from '../../src/storage/statements.ts';
import type { StatementDef, Template } from '../../src/storage/statements.ts';
import type { Db } from '../../src/storage/types.ts';

/** Kysely compiling for PostgreSQL, with no database behind it. */
const db = new Kysely<never>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
}) as unknown as Db;
const compile = <P extends object, R>(def: StatementDef<P, R>): Template => compileStatement(db, def, postgresHooks);

const USER_T = compile(defineWrite<{ id: string; team_id: string }>('insertUser', ['id', 'team_id'], (d, p) => d.insertInto('users').values({ id: p.id, team_id: p.team_id } as never)));
const AUDIT_T = compile(defineWrite<{ id: string; detail: string }>('insertAudit', ['id', 'detail'], (d, p) => d.insertInto('audit_events').values({ id: p.id, detail: p.detail } as never)));
const EVENT_T = compile(defineWrite<{ team_id: string }>('appendEvent', ['team_id'], (d, p) => d.insertInto('events').values({ team_id: p.team_id, seq: sql`-nextval('event_placeholders')` } as never)));
const READ_T = compile(defineStatement<{ id: string }, unknown>('userById', ['id'], (d, p) => d.selectFrom('users').selectAll().where('id', '=', p.id)));
const SOLE_T = compile(defineSole<{ id: string }, unknown>('bumpGroup', ['id'], (d, p) => d.with('g', (w) => w.updateTable('groups').set({ version: sql`"version" + 1` } as never).where('id', '=', p.id).returning('version' as never)).selectFrom('g').select('version' as never)));

const USER = USER_T.compiled.sql;
const AUDIT = AUDIT_T.compiled.sql;
const EVENT = EVENT_T.compiled.sql;
const READ = READ_T.compiled.sql;
const SOLE = SOLE_T.compiled.sql;

describe('the kind a statement carries', () => {
  it('a deferrable write knows its table from the query Kysely built, and its bound query carries it to the driver', () => {
    assert.equal(USER_T.writes, 'users');
    assert.equal(EVENT_T.writes, 'events');
    assert.equal(compile(defineWrite<{ id: string }>('del', ['id'], (d, p) => d.deleteFrom('sessions').where('id_hash', '=', p.id))).writes, 'sessions');
    assert.equal(compile(defineWrite<{ n: number }>('upd', ['n'], (d, p) => d.updateTable('team_counters').set({ n: p.n } as never))).writes, 'team_counters');
    assert.equal(READ_T.writes, undefined);
    assert.equal(SOLE_T.sole, true);
    assert.equal(boundQuery(USER_T, ['u', 't']).template, USER_T);
  });

  it('a write that cannot be deferred is refused when compiled, with its reason', () => {
    assert.throws(() => compile(defineWrite<{ id: string }>('w', ['id'], (d, p) => d.selectFrom('users').selectAll().where('id', '=', p.id))), /statement w cannot be deferred: not an INSERT, UPDATE or DELETE/);
    assert.throws(
      () => compile(defineWrite<{ id: string }>('w', ['id'], (d, p) => d.with('x', (w) => w.selectFrom('users').select('id')).insertInto('sessions').values({ id_hash: p.id } as never))),
      /statement w cannot be deferred/,
    );
  });
});

/**
 * A connection over a recording stand-in for node-postgres in pipeline mode: each statement is
 * recorded as it is handed over, with whether it starts a round trip (no answer awaited then);
 * answers come a turn of the event loop later. `fail` makes a text's statement fail, and, in a
 * transaction, every statement behind it fail as aborted, as PostgreSQL does.
 */
function connection(fail?: (text: string) => boolean) {
  const sent: { text: string; values: readonly unknown[]; name: string | undefined; trip: boolean }[] = [];
  let awaited = 0;
  let begun = false;
  let aborted = false;
  const one = (text: string, values: readonly unknown[], name: string | undefined): Promise<pg.QueryResult> => {
    sent.push({ text, values, name, trip: awaited === 0 });
    awaited++;
    const ends = /^(commit|rollback)/i.test(text);
    const failed = fail?.(text) ? new Error(`refused: ${text}`) : aborted && !ends ? new Error('aborted') : undefined;
    if (/^(begin|start)/i.test(text)) begun = true;
    if (failed && begun) aborted = true;
    if (ends) aborted = begun = false;
    return new Promise((resolve, reject) =>
      setImmediate(() => {
        awaited--;
        if (failed) reject(failed);
        else resolve({ command: /^commit/i.test(text) ? 'COMMIT' : 'SELECT', rowCount: 1, rows: [{ answered: text }] } as unknown as pg.QueryResult);
      }),
    );
  };
  const send: Send = (statements) => statements.map((s) => one(s.text, s.values, s.name));
  const heard: Revoked[] = [];
  const feed = new Revocations();
  feed.subscribe((revoked) => heard.push(revoked));
  const conn = new PgConnection(send, new PreparedNames(), feed);
  const templates: Record<string, Template> = { [USER]: USER_T, [AUDIT]: AUDIT_T, [EVENT]: EVENT_T, [READ]: READ_T, [SOLE]: SOLE_T };
  /** What Kysely hands the driver: the transaction's begin, commit and rollback, and each statement as its compiled query. */
  const c = {
    async query(text: string, values: readonly unknown[]): Promise<unknown[]> {
      if (text === 'begin') await conn.begin({});
      else if (text === 'start transaction isolation level serializable') await conn.begin({ isolationLevel: 'serializable' });
      else if (text === 'commit') await conn.commit();
      else if (text === 'rollback') await conn.rollback();
      else return (await conn.executeQuery(boundQuery(templates[text]!, values))).rows;
      return [];
    },
  };
  return { c, conn, sent, heard, texts: () => sent.map((s) => s.text), trips: () => sent.filter((s) => s.trip).map((s) => s.text) };
}

describe('PgConnection', () => {
  it('a transaction of deferrable writes only: one statement, no BEGIN, no COMMIT', async () => {
    const { c, sent } = connection();
    await c.query('begin', []);
    await c.query(USER, ['u', 't']);
    await c.query(AUDIT, ['a', '{}']);
    await c.query(EVENT, ['t']);
    assert.equal(sent.length, 0, 'nothing is sent before the commit');
    await c.query('commit', []);
    assert.equal(sent.length, 1);
    assert.equal(
      sent[0]!.text,
      `with "rc_write_0" as (insert into "users" ("id", "team_id") values ($1, $2)), "rc_write_1" as (insert into "audit_events" ("id", "detail") values ($3, $4)) insert into "events" ("team_id", "seq") values ($5, -nextval('event_placeholders'))`,
    );
    assert.deepEqual(sent[0]!.values, ['u', 't', 'a', '{}', 't']);
    assert.ok(sent[0]!.name?.startsWith('rc_writes_'), 'the combination is named for preparing');
  });

  it('any other statement goes in one round trip with the BEGIN and the waiting writes before it, so it sees them; the waiting writes go with the COMMIT', async () => {
    const { c, texts, trips } = connection();
    await c.query('begin', []);
    await c.query(USER, ['u', 't']);
    await c.query(READ, ['u']);
    await c.query(AUDIT, ['a', '{}']);
    await c.query('commit', []);
    assert.deepEqual(texts(), ['begin', USER, READ, AUDIT, 'commit']);
    assert.deepEqual(trips(), ['begin', AUDIT], 'two round trips');
  });

  it('a statement behind a failed write answers the write\'s error; so does a COMMIT behind failed writes, which ends the transaction: the rollback after it sends nothing', async () => {
    const { c, texts } = connection((text) => text === USER);
    await c.query('begin', []);
    await c.query(READ, ['u']);
    await c.query(USER, ['u', 't']);
    await assert.rejects(c.query(READ, ['u']), /refused: insert into "users"/);
    await c.query('rollback', []);
    await c.query('begin', []);
    await c.query(READ, ['u']);
    await c.query(USER, ['u', 't']);
    await assert.rejects(c.query('commit', []), /refused: insert into "users"/);
    await c.query('rollback', []);
    assert.deepEqual(texts(), ['begin', READ, USER, READ, 'rollback', 'begin', READ, USER, 'commit']);
  });

  it('a second write of the same table sends the BEGIN and the first one before it waits: the two stay in one transaction', async () => {
    const { c, texts, trips } = connection();
    await c.query('begin', []);
    await c.query(AUDIT, ['a', '{}']);
    await c.query(AUDIT, ['b', '{}']);
    assert.deepEqual(texts(), ['begin', AUDIT]);
    await c.query('commit', []);
    assert.deepEqual(texts(), ['begin', AUDIT, AUDIT, 'commit']);
    assert.deepEqual(trips(), ['begin', AUDIT]);
  });

  it('a rollback before anything was sent sends nothing, and forgets the waiting writes', async () => {
    const { c, texts } = connection();
    await c.query('begin', []);
    await c.query(USER, ['u', 't']);
    await c.query('rollback', []);
    await c.query('begin', []);
    await c.query('commit', []);
    assert.deepEqual(texts(), []);
  });

  it('a failed write at the commit fails the commit; the rollback that follows sends nothing', async () => {
    const { c, texts } = connection((text) => text.startsWith('with'));
    await c.query('begin', []);
    await c.query(USER, ['u', 't']);
    await c.query(AUDIT, ['a', '{}']);
    await assert.rejects(c.query('commit', []), /refused/);
    await c.query('rollback', []);
    assert.equal(texts().length, 1);
    // The connection is clean for its next transaction.
    await c.query('begin', []);
    await c.query(READ, ['u']);
    await c.query('commit', []);
    assert.deepEqual(texts().slice(1), ['begin', READ, 'commit']);
  });

  it('after a statement was sent, the rollback goes to the server and the waiting writes are dropped', async () => {
    const { c, texts } = connection();
    await c.query('begin', []);
    await c.query(READ, ['u']);
    await c.query(USER, ['u', 't']);
    await c.query('rollback', []);
    assert.deepEqual(texts(), ['begin', READ, 'rollback']);
  });

  it('a BEGIN with an isolation level is sent at once, and its writes never run outside it', async () => {
    const { c, texts } = connection();
    await c.query('start transaction isolation level serializable', []);
    await c.query(USER, ['u', 't']);
    await c.query('commit', []);
    assert.deepEqual(texts(), ['start transaction isolation level serializable', USER, 'commit']);
  });

  it('a sole statement first in its transaction goes alone, with no BEGIN, and the COMMIT sends nothing: one round trip', async () => {
    const { c, texts, trips } = connection();
    for (let i = 0; i < 2; i++) {
      await c.query('begin', []);
      assert.deepEqual(await c.query(SOLE, ['g']), [{ answered: SOLE }], 'the statement\'s own answer');
      await c.query('commit', []);
    }
    assert.deepEqual(texts(), [SOLE, SOLE]);
    assert.deepEqual(trips(), [SOLE, SOLE]);
  });

  it('a sole statement that fails has rolled itself back: the ROLLBACK after it sends nothing, and the connection serves the next transaction', async () => {
    const { c, texts } = connection((text) => text === SOLE);
    await c.query('begin', []);
    await assert.rejects(c.query(SOLE, ['g']), /refused: with "g"/);
    await c.query('rollback', []);
    await c.query('begin', []);
    await c.query(READ, ['u']);
    await c.query('commit', []);
    assert.deepEqual(texts(), [SOLE, 'begin', READ, 'commit']);
  });

  it('nothing may follow a sole statement in its transaction; behind other work it runs inside the transaction as any statement', async () => {
    const { c, texts } = connection();
    await c.query('begin', []);
    await c.query(SOLE, ['g']);
    await assert.rejects(c.query(READ, ['u']), /nothing may follow/);
    await assert.rejects(c.query(USER, ['u', 't']), /nothing may follow/);
    await c.query('rollback', []);
    assert.deepEqual(texts(), [SOLE]);
    await c.query('begin', []);
    await c.query(USER, ['u', 't']);
    await c.query(SOLE, ['g']);
    await c.query(AUDIT, ['a', '{}']);
    await c.query('commit', []);
    assert.deepEqual(texts().slice(1), ['begin', USER, SOLE, AUDIT, 'commit']);
  });

  it('outside a transaction every text goes out as it comes', async () => {
    const { c, texts } = connection();
    await c.query(USER, ['u', 't']);
    await c.query(READ, ['u']);
    assert.deepEqual(texts(), [USER, READ]);
  });

  it('a notice is heard when its transaction commits, never when it rolls back, and at once outside a transaction: by the data its statement carries', async () => {
    const { conn, heard } = connection();
    const notice = (id: string): NoticeQuery => ({ ...CompiledQuery.raw(postgresHooks.revocationNoticeSql, [JSON.stringify({ kind: 'user', id })]), notice: { kind: 'user', id } });
    assert.deepEqual(noticeOf(notice('a')), { kind: 'user', id: 'a' });
    assert.equal(noticeOf(CompiledQuery.raw(postgresHooks.revocationNoticeSql, ['{"kind":"user","id":"x"}'])), undefined, 'the same SQL without the data is no notice');
    await conn.begin({});
    await conn.executeQuery(notice('committed'));
    assert.deepEqual(heard, [], 'held while the transaction is open');
    await conn.commit();
    assert.deepEqual(heard, [{ kind: 'user', id: 'committed' }]);
    await conn.begin({});
    await conn.executeQuery(notice('rolled back'));
    await conn.rollback();
    assert.deepEqual(heard.length, 1);
    await conn.executeQuery(notice('alone'));
    assert.deepEqual(heard.at(-1), { kind: 'user', id: 'alone' });
  });
  it("a transaction's statement deadline waits with its BEGIN and goes right behind it, in the round trip of the statement it holds; with nothing to hold, nothing is sent", async () => {
    const { c, conn, texts, trips } = connection();
    const SET = "select set_config('statement_timeout', $1, true)";
    const setting: TransactionSettingQuery = { ...CompiledQuery.raw(SET, ['50']), transactionSetting: true };
    await c.query('begin', []);
    await conn.executeQuery(setting);
    assert.deepEqual(texts(), []);
    await c.query(READ, ['u']);
    await c.query('commit', []);
    assert.deepEqual(texts(), ['begin', SET, READ, 'commit']);
    assert.deepEqual(trips(), ['begin', 'commit'], 'two round trips: the deadline rides with the read');
    await c.query('begin', []);
    await conn.executeQuery(setting);
    await c.query(USER, ['u', 't']);
    await c.query('commit', []);
    assert.deepEqual(texts().slice(4), ['begin', SET, USER, 'commit'], 'writes held to a deadline run inside the transaction that set it');
    await c.query('begin', []);
    await conn.executeQuery(setting);
    await c.query('commit', []);
    assert.equal(texts().length, 8);
  });
});
