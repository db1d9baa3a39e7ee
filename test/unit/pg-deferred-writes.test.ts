/**
 * PostgreSQL's deferred writes (src/storage/pg-deferred-writes.ts): how writes are combined into
 * one statement, and what a connection sends for each transaction shape, against a recording
 * stand-in for node-postgres. test/storage/pg-round-trips.test.ts runs the same on a real server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { PostgresQueryResult } from 'kysely';
import { CombinedTexts, combinedWrites, deferrableTable, DeferringConnection, renumbered } from '../../src/storage/pg-deferred-writes.ts';
import { PreparedNames } from '../../src/storage/pg-statements.ts';
import type { Send } from '../../src/storage/pg-deferred-writes.ts';

const USER = 'insert into "users" ("id", "team_id") values ($1, $2)';
const AUDIT = 'insert into "audit_events" ("id", "detail") values ($1, $2)';
const EVENT = `insert into "events" ("team_id", "seq") values ($1, -nextval('event_placeholders'))`;
const READ = 'select * from "users" where "id" = $1';
const SOLE = 'with "g" as (update "groups" set "version" = "version" + 1 where "id" = $1 returning "version") select "version" from "g"';

describe('renumbered', () => {
  it('shifts every placeholder and leaves quoted text as it is', () => {
    assert.equal(renumbered(`update "t" set "a" = $1, "b" = 'it''s $2', "$3x" = $10`, 5), `update "t" set "a" = $6, "b" = 'it''s $2', "$3x" = $15`);
  });

  it('refuses a dollar sign that is not a placeholder, and an unclosed quote', () => {
    assert.equal(renumbered('select $$body$$', 1), undefined);
    assert.equal(renumbered(`select 'open`, 1), undefined);
  });

  it('placeholders outside quotes are shifted by the offset, quoted segments kept (property)', () => {
    const segment = fc.oneof(
      fc.integer({ min: 1, max: 999 }).map((n) => ({ text: `$${n}`, shifted: (k: number) => `$${n + k}` })),
      fc.string({ unit: fc.constantFrom('a', ' ', ',', '(', ')', '$', '1', "'"), maxLength: 8 }).map((body) => {
        const text = `'${body.replaceAll("'", "''")}'`;
        return { text, shifted: () => text };
      }),
      fc.string({ unit: fc.constantFrom('a', 'b', ' ', '=', ',', '('), maxLength: 6 }).map((text) => ({ text, shifted: () => text })),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 12 }), fc.integer({ min: 0, max: 500 }), (segments, offset) => {
        const text = segments.map((s) => s.text).join(' ');
        assert.equal(renumbered(text, offset), segments.map((s) => s.shifted(offset)).join(' '));
      }),
      { numRuns: 300 },
    );
  });
});

describe('deferrableTable', () => {
  it('names the table of one INSERT, UPDATE or DELETE', () => {
    assert.deepEqual(deferrableTable(USER), { table: 'users' });
    assert.deepEqual(deferrableTable(EVENT), { table: 'events' });
    assert.deepEqual(deferrableTable('update "team_counters" set "n" = $1'), { table: 'team_counters' });
    assert.deepEqual(deferrableTable('delete from "sessions" where "id" = $1'), { table: 'sessions' });
  });

  it('refuses a read, a statement with its own WITH, and dollar quoting', () => {
    assert.ok('problem' in deferrableTable(READ));
    assert.ok('problem' in deferrableTable('with "a" as (insert into "x" values ($1)) insert into "y" values ($2)'));
    assert.ok('problem' in deferrableTable('insert into "x" values ($$text$$)'));
  });
});

describe('combinedWrites', () => {
  it('one write is sent as it is', () => {
    assert.deepEqual(combinedWrites([{ text: USER, values: ['u', 't'], table: 'users' }], new CombinedTexts()), { text: USER, values: ['u', 't'] });
  });

  it('several: every one but the last in a WITH, placeholders numbered on, values in order', () => {
    const { text, values } = combinedWrites([
      { text: USER, values: ['u', 't'], table: 'users' },
      { text: AUDIT, values: ['a', '{}'], table: 'audit_events' },
      { text: EVENT, values: ['t'], table: 'events' },
    ], new CombinedTexts());
    assert.equal(
      text,
      `with "rc_write_0" as (insert into "users" ("id", "team_id") values ($1, $2)), "rc_write_1" as (insert into "audit_events" ("id", "detail") values ($3, $4)) insert into "events" ("team_id", "seq") values ($5, -nextval('event_placeholders'))`,
    );
    assert.deepEqual(values, ['u', 't', 'a', '{}', 't']);
  });

  it('the combined texts are kept by their storage, not the module: each PreparedNames has its own, its connections share it', () => {
    const one = new PreparedNames();
    const other = new PreparedNames();
    assert.ok(one.combinations instanceof CombinedTexts);
    assert.notEqual(one.combinations, other.combinations);
    const writes = [{ text: USER, values: ['u', 't'], table: 'users' }, { text: EVENT, values: ['t'], table: 'events' }];
    assert.equal(one.combinations.textOf(writes), other.combinations.textOf(writes));
  });
});

/**
 * A connection over a recording stand-in for node-postgres in pipeline mode: each statement is
 * recorded as it is handed over, with whether it starts a round trip (no answer awaited then);
 * answers come a turn of the event loop later. `fail` makes a text's statement fail, and, in a
 * transaction, every statement behind it fail as aborted, as PostgreSQL does.
 */
function connection(fail?: (text: string) => boolean) {
  const sent: { text: string; values: readonly unknown[]; trip: boolean }[] = [];
  let awaited = 0;
  let begun = false;
  let aborted = false;
  const one = (text: string, values: readonly unknown[]): Promise<PostgresQueryResult<unknown>> => {
    sent.push({ text, values, trip: awaited === 0 });
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
        else resolve({ command: /^commit/i.test(text) ? 'COMMIT' : 'SELECT', rowCount: 1, rows: [] } as unknown as PostgresQueryResult<unknown>);
      }),
    );
  };
  const send: Send = (statements) => statements.map((s) => one(s.text, s.values));
  const tables: Record<string, string> = { [USER]: 'users', [AUDIT]: 'audit_events', [EVENT]: 'events' };
  const named: string[] = [];
  const c = new DeferringConnection(send, { deferredTable: (text) => tables[text], noteCombined: (text) => named.push(text), sole: (text) => text === SOLE, combinations: new CombinedTexts() });
  return { c, sent, named, texts: () => sent.map((s) => s.text), trips: () => sent.filter((s) => s.trip).map((s) => s.text) };
}

describe('DeferringConnection', () => {
  it('a transaction of deferrable writes only: one statement, no BEGIN, no COMMIT', async () => {
    const { c, sent, named } = connection();
    await c.query('begin', []);
    await c.query(USER, ['u', 't']);
    await c.query(AUDIT, ['a', '{}']);
    await c.query(EVENT, ['t']);
    assert.equal(sent.length, 0, 'nothing is sent before the commit');
    const commit = await c.query('commit', []);
    assert.equal(commit.command, 'COMMIT');
    assert.equal(sent.length, 1);
    assert.match(sent[0]!.text, /^with "rc_write_0" as \(insert into "users"/);
    assert.deepEqual(sent[0]!.values, ['u', 't', 'a', '{}', 't']);
    assert.deepEqual(named, [sent[0]!.text], 'the combination is named for preparing');
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

  it('a statement behind a failed write answers the write\'s error; so does a COMMIT behind failed writes, and the rollback after it still goes', async () => {
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
    assert.deepEqual(texts(), ['begin', READ, USER, READ, 'rollback', 'begin', READ, USER, 'commit', 'rollback']);
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
      const answer = await c.query(SOLE, ['g']);
      assert.equal(answer.command, 'SELECT', 'the statement\'s own answer');
      assert.equal((await c.query('commit', [])).command, 'COMMIT');
    }
    assert.deepEqual(texts(), [SOLE, SOLE]);
    assert.deepEqual(trips(), [SOLE, SOLE]);
  });

  it('a sole statement that fails has rolled itself back: the ROLLBACK after it sends nothing, and the connection serves the next transaction', async () => {
    const { c, texts } = connection((text) => text === SOLE);
    await c.query('begin', []);
    await assert.rejects(c.query(SOLE, ['g']), /refused: with "g"/);
    assert.equal((await c.query('rollback', [])).command, 'ROLLBACK');
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

});
