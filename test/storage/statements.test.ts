/**
 * Statements compiled once (src/storage/statements.ts), on every engine: they answer what the
 * same Kysely query answers when built per call; they run inside the caller's transaction; a
 * statement on the database never joins or reads another request's open transaction (SQLite's
 * one connection: the direct path must wait for it); a definition that computes on a parameter
 * is refused when compiled. Dynamic queries compiled once per shape: bound per call, bounded, and
 * built per call when their SQL is not a function of their shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { insertAuditEvent } from '../../src/storage/repos/audit.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import { insertUser, userById, userByNameKey } from '../../src/storage/repos/users.ts';
import { compileStatement, defineStatement, defineWrite, hooksOf, hot, SHAPE_CACHE_SIZE, shapeParam } from '../../src/storage/statements.ts';
import type { Shaped, Template } from '../../src/storage/statements.ts';
import { HOT_SHAPE_USES, MAX_NAMED_COMBINED, MAX_NAMED_SHAPES, PreparedNames } from '../../src/storage/pg-statements.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { ROW_TIME, userRow } from '../support/rows.ts';

const T = ROW_TIME;

/** A promise and the function that settles it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

for (const engine of engines) {
  describe(`compiled statements on ${engine.name}`, () => {
    let db: TestDatabase;
    const teamId = newId();

    before(async () => {
      db = await engine.open();
      await insertTeam(db.storage.db, { id: teamId, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: T });
    });
    after(() => db.dispose());

    it('answer what the query built per call answers, on each call with its own parameters', async () => {
      const { db: kdb } = db.storage;
      const rows = [userRow(teamId, 'one@x.example'), userRow(teamId, 'two@x.example')];
      for (const row of rows) await insertUser(kdb, row);
      for (const row of rows) {
        const built = await kdb.selectFrom('users').selectAll().where('team_id', '=', teamId).where('id', '=', row.id).executeTakeFirst();
        assert.deepEqual({ ...(await userById(kdb, teamId, row.id)) }, { ...built });
        assert.equal((await userByNameKey(kdb, teamId, row.user_name_key))?.id, row.id);
      }
      assert.equal(await userById(kdb, teamId, 'NOPE'), undefined);
    });

    it('a deferrable write runs only through write(), every other statement only through run()', async () => {
      const { db: kdb } = db.storage;
      const deferrable = defineWrite<{ id: string }>('testDeferrable', ['id'], (d, p) => d.deleteFrom('sessions').where('id_hash', '=', p.id));
      const counted = defineStatement<{ id: string }, unknown>('testCounted', ['id'], (d, p) => d.deleteFrom('sessions').where('id_hash', '=', p.id));
      await assert.rejects(hot(kdb).run(kdb, deferrable, { id: 'x' }), /deferrable write: run it with write\(\)/);
      await assert.rejects(hot(kdb).write(kdb, counted, { id: 'x' }), /not a deferrable write/);
      await hot(kdb).write(kdb, deferrable, { id: 'x' });
      // What may be deferred is read from the query Kysely built, on every engine alike.
      const reading = defineWrite<{ id: string }>('testReading', ['id'], (d, p) => d.selectFrom('sessions').selectAll().where('id_hash', '=', p.id));
      await assert.rejects(hot(kdb).write(kdb, reading, { id: 'x' }), /statement testReading cannot be deferred: not an INSERT, UPDATE or DELETE of one named table/);
      assert.equal(await hot(kdb).run(kdb, counted, { id: 'x' }), 0);
    });

    it('are an internal detail of storage: found from the database and from its transactions alike, with the dialect hooks', async () => {
      const { db: kdb } = db.storage;
      const outside = hot(kdb);
      await kdb.transaction().execute(async (trx) => {
        assert.equal(hot(trx), outside, 'a transaction runs the same compiled templates');
        assert.equal(hooksOf(trx).name, engine.name);
      });
      assert.equal(hooksOf(kdb).name, engine.name);
    });

    it('run inside the caller\'s transaction: rolled back with it', async () => {
      const { db: kdb } = db.storage;
      const row = userRow(teamId, 'rolled@x.example');
      await assert.rejects(
        kdb.transaction().execute(async (trx) => {
          await insertUser(trx, row);
          assert.equal((await userById(trx, teamId, row.id))?.id, row.id, 'the transaction sees its own write');
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.equal(await userById(kdb, teamId, row.id), undefined);
    });

    it('on the database, never read or join another request\'s open transaction', async () => {
      const { db: kdb } = db.storage;
      const row = userRow(teamId, 'dirty@x.example');
      const inserted = gate();
      const release = gate();
      const other = kdb.transaction().execute(async (trx) => {
        await insertUser(trx, row);
        inserted.open();
        await release.wait;
        throw new Error('roll back');
      });
      await inserted.wait;
      // Issued while the other transaction is open with its uncommitted row.
      const read = userById(kdb, teamId, row.id);
      const eventId = newId();
      const write = insertAuditEvent(kdb, { id: eventId, team_id: teamId, at: T, actor: '{}', request_id: null, action: 'create', resource_type: 'User', resource_id: eventId, detail: '{}' });
      release.open();
      await assert.rejects(other, /roll back/);
      assert.equal(await read, undefined, 'the uncommitted row was not read');
      await write;
      const kept = await kdb.selectFrom('audit_events').select('id').where('id', '=', eventId).executeTakeFirst();
      assert.equal(kept?.id, eventId, 'the write did not join the rolled-back transaction');
    });

    it('a definition that computes on a parameter is refused when compiled', () => {
      const lowered = defineStatement<{ key: string }, unknown>('bad', ['key'], (kdb, p) =>
        kdb.selectFrom('users').selectAll().where('user_name_key', '=', p.key.toLowerCase()),
      );
      assert.throws(() => compileStatement(db.storage.db, lowered), /bad: a parameter was transformed/);
      const constant = defineStatement<{ id: string }, unknown>('good', ['id'], (kdb, p) =>
        kdb.selectFrom('users').select('id').where('id', '=', p.id).where('active', '=', 1),
      );
      assert.deepEqual(compileStatement(db.storage.db, constant).slots, [{ param: 'id' }, { constant: 1 }]);
    });

    /** A shaped query over users' names, counting how often it is compiled over its stand-ins. */
    const namesLike = (key: string, names: readonly string[], compiles: { n: number }, transform?: (s: string) => string): Shaped => ({
      name: 'names',
      key,
      values: names,
      build: (kdb, withValues) => {
        if (!withValues) compiles.n++;
        const vs = names.map((v, i) => (withValues ? v : shapeParam(i)));
        return kdb.selectFrom('users').select('user_name').where('team_id', '=', teamId).where('user_name', 'in', vs.map((v) => (transform ? transform(v) : v))).orderBy('user_name');
      },
    });
    const userNames = async (query: Shaped) => (await hot(db.storage.db).shaped(db.storage.db, query)).map((r) => r.user_name);

    it('shaped queries: compiled once per key, bound per call; the cache is bounded, least recently used out first', async () => {
      for (const name of ['ann', 'ben', 'cat']) await insertUser(db.storage.db, userRow(teamId, name));
      const compiles = { n: 0 };
      assert.deepEqual(await userNames(namesLike('two', ['ann', 'ben'], compiles)), ['ann', 'ben']);
      assert.deepEqual(await userNames(namesLike('two', ['cat', 'nobody'], compiles)), ['cat']);
      assert.equal(compiles.n, 1, 'the second call bound its own values to the first call\'s SQL');
      // 'two' is kept in use while more shapes than the cache holds go through it.
      for (let i = 0; i < SHAPE_CACHE_SIZE + 10; i++) {
        assert.deepEqual(await userNames(namesLike(`one ${i}`, [i % 2 === 0 ? 'ann' : 'ben'], compiles)), [i % 2 === 0 ? 'ann' : 'ben']);
        if (i % 100 === 0) await userNames(namesLike('two', ['ann', 'cat'], compiles));
      }
      assert.equal(compiles.n, 1 + SHAPE_CACHE_SIZE + 10);
      const before = compiles.n;
      await userNames(namesLike('two', ['ann', 'ben'], compiles));
      assert.equal(compiles.n, before, 'a shape in use stays');
      await userNames(namesLike('one 0', ['ann'], compiles));
      assert.equal(compiles.n, before + 1, 'the least recently used shape was dropped (the bound) and is compiled again');
    });

    it('shaped queries whose values are computed on while building are built per call with their own values, never shared', async () => {
      const compiles = { n: 0 };
      const upper = (s: string) => s.toUpperCase();
      await insertUser(db.storage.db, userRow(teamId, 'DAN'));
      await insertUser(db.storage.db, userRow(teamId, 'EVE'));
      assert.deepEqual(await userNames(namesLike('upper', ['dan'], compiles, upper)), ['DAN']);
      assert.deepEqual(await userNames(namesLike('upper', ['eve'], compiles, upper)), ['EVE']);
      assert.deepEqual(await userNames(namesLike('dropped', ['dan'], compiles, () => 'EVE')), ['EVE']);
      assert.equal(compiles.n, 2, 'each key tried once, found not to be a function of its shape');
    });
  });
}

describe('PostgreSQL names of list shapes (pg-statements.ts PreparedNames)', () => {
  const shape = (sql: string, preparable: boolean) => ({ name: 'users page', compiled: { sql, parameters: [] }, slots: [], fixed: false, preparable }) as unknown as Template;

  it('a preparable shape is named once it has run HOT_SHAPE_USES times, at most MAX_NAMED_SHAPES of them ever; others stay unnamed', () => {
    const names = new PreparedNames();
    const hot = shape('select 1 as hot', true);
    const uses = Array.from({ length: HOT_SHAPE_USES + 1 }, () => names.nameOf(hot));
    assert.deepEqual(uses.map((n) => n !== undefined), [...Array.from({ length: HOT_SHAPE_USES - 1 }, () => false), true, true]);
    // The same text compiled again (the shape left the LRU and came back) keeps its name.
    assert.equal(names.nameOf(shape('select 1 as hot', true)), uses.at(-1));
    // A shape whose plan depends on its literal is never named, however often it runs.
    const ranged = shape("select 1 where x like $1 || '%'", false);
    for (let i = 0; i < HOT_SHAPE_USES * 3; i++) assert.equal(names.nameOf(ranged), undefined);
    // Every connection keeps what it prepared: the named shapes are bounded for the process's life.
    let named = 1;
    for (let i = 0; i < MAX_NAMED_SHAPES + 20; i++) {
      const other = shape(`select ${i} as other`, true);
      let name;
      for (let u = 0; u < HOT_SHAPE_USES; u++) name = names.nameOf(other);
      if (name !== undefined) named++;
    }
    assert.equal(named, MAX_NAMED_SHAPES);
    assert.ok(names.nameOf(hot) !== undefined, 'a named shape keeps its name');
  });

  it('a combination of deferred writes is named at its first run, at most MAX_NAMED_COMBINED of them ever; a sequence of templates is built once', () => {
    const names = new PreparedNames();
    const write = (sql: string) => ({ name: 'w', compiled: { sql, parameters: [] }, slots: [], fixed: true, writes: 'a' }) as unknown as Template;
    const first = write('insert into "a" values ($1)');
    const builds = { n: 0 };
    const combinations = Array.from({ length: MAX_NAMED_COMBINED + 10 }, (_, i) =>
      names.combination([first, write(`insert into "b${i}" values ($1)`)], () => {
        builds.n++;
        return `combined ${i}`;
      }),
    );
    assert.equal(combinations.filter((c) => c.name !== undefined).length, MAX_NAMED_COMBINED);
    assert.ok(combinations[0]!.name?.startsWith('rc_writes_'));
    assert.equal(combinations.at(-1)!.name, undefined);
    const second = write('insert into "c" values ($1)');
    const again = names.combination([first, second], () => 'combined c');
    assert.equal(names.combination([first, second], () => 'built twice'), again, 'the same templates in the same order: the same combination');
    assert.equal(builds.n, MAX_NAMED_COMBINED + 10);
  });
});
