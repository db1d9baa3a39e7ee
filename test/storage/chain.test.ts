/**
 * Write chains (src/storage/chain.ts), on every engine: a step reads the row an earlier step
 * returned; a step after a step that returned nothing writes nothing and the chain answers
 * undefined; a failure in a later step undoes the earlier ones, in a transaction of the chain's
 * own or in the caller's. PostgreSQL runs the chain as one data-modifying WITH, SQLite as its
 * steps in turn, the same SQL but for the CTE that holds the earlier row (golden SQL per engine).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/ids.ts';
import { defineChain, runChain } from '../../src/storage/chain.ts';
import { auditInsert } from '../../src/storage/repos/audit.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import { compileStatement, hooksOf, transact } from '../../src/storage/statements.ts';
import type { Db } from '../../src/storage/types.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { ROW_TIME } from '../support/rows.ts';
import { StatementLog } from '../support/storage-spy.ts';

interface Rename {
  readonly teamId: string;
  readonly name: string;
  readonly auditId: string;
  readonly at: string;
}

/** A team renamed, then an audit row that reads the renamed row: its id and its new name. */
const RENAME = defineChain<Rename, { id: string; team_id: string; detail: string }>('testRenameTeam', ['teamId', 'name', 'auditId', 'at'], [
  { name: 'testRename', as: 't', returns: ['id', 'name'], build: (db, p) => db.updateTable('teams').set({ name: p.name }).where('id', '=', p.teamId) },
  {
    name: 'testAuditRename',
    after: 't',
    build: (db, p) =>
      auditInsert(db, { id: p.auditId, team_id: sql.ref('t.id'), at: p.at, actor: '{"via":"cli"}', request_id: null, action: 'rename', resource_type: 'Team', resource_id: sql.ref('t.id'), detail: sql.ref('t.name') })
        .returning(['id', 'team_id', 'detail']),
  },
]);

/** A team renamed, then one audit row dropped and another added: a DELETE and an INSERT ... ON CONFLICT after the rename. */
const REPLACE = defineChain<Rename & { oldId: string }, { id: string }>('testReplaceAudit', ['teamId', 'name', 'auditId', 'oldId', 'at'], [
  { name: 'testRename', as: 't', returns: ['id'], build: (db, p) => db.updateTable('teams').set({ name: p.name }).where('id', '=', p.teamId) },
  { name: 'testForget', after: 't', build: (db, p) => db.deleteFrom('audit_events').where('id', '=', p.oldId) },
  {
    name: 'testRecord',
    after: 't',
    build: (db, p) =>
      auditInsert(db, { id: p.auditId, team_id: sql.ref('t.id'), at: p.at, actor: '{"via":"cli"}', request_id: null, action: 'replace', resource_type: 'Team', resource_id: null, detail: p.name })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id'),
  },
]);

const GOLDEN = {
  postgres:
    'with "t" as (update "teams" set "name" = $1 where "id" = $2 returning "id", "name") ' +
    'insert into "audit_events" ("id", "team_id", "at", "actor", "request_id", "action", "resource_type", "resource_id", "detail") ' +
    'select $3 as "id", "t"."id" as "team_id", $4 as "at", $5 as "actor", $6 as "request_id", $7 as "action", $8 as "resource_type", "t"."id" as "resource_id", "t"."name" as "detail" from "t" ' +
    'returning "id", "team_id", "detail"',
  sqlite: [
    'update "teams" set "name" = ? where "id" = ? returning "id", "name"',
    'with "t" as (select ? as "id", ? as "name") ' +
      'insert into "audit_events" ("id", "team_id", "at", "actor", "request_id", "action", "resource_type", "resource_id", "detail") ' +
      'select ? as "id", "t"."id" as "team_id", ? as "at", ? as "actor", ? as "request_id", ? as "action", ? as "resource_type", "t"."id" as "resource_id", "t"."name" as "detail" from "t" ' +
      'returning "id", "team_id", "detail"',
  ],
};

for (const engine of engines) {
  describe(`write chains on ${engine.name}`, () => {
    let db: TestDatabase;
    let kdb: Db;
    const teamId = newId();

    before(async () => {
      db = await engine.open();
      kdb = db.storage.db;
      await insertTeam(kdb, { id: teamId, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: ROW_TIME });
    });
    after(() => db.dispose());

    const teamName = async () => (await kdb.selectFrom('teams').select('name').where('id', '=', teamId).executeTakeFirstOrThrow()).name;
    const auditRows = async (id: string) => kdb.selectFrom('audit_events').select(['team_id', 'resource_id', 'detail']).where('id', '=', id).execute();

    it('PostgreSQL compiles the chain to one data-modifying WITH; SQLite to its steps, the later one reading the earlier row from a CTE of its values', () => {
      if (engine.name === 'postgres') {
        assert.equal(compileStatement(kdb, RENAME.whole).compiled.sql, GOLDEN.postgres);
      } else {
        assert.deepEqual(RENAME.steps.map((step) => compileStatement(kdb, step.statement).compiled.sql), GOLDEN.sqlite);
      }
    });

    it('a step reads the row an earlier step returned; the chain answers its last step\'s row, in one statement on PostgreSQL', async () => {
      const log = new StatementLog();
      const storage = log.wrap(db.storage);
      const auditId = newId();
      const answer = await runChain(storage.db, RENAME, { teamId, name: 'acme renamed', auditId, at: ROW_TIME });
      assert.deepEqual({ ...answer }, { id: auditId, team_id: teamId, detail: 'acme renamed' });
      assert.equal(await teamName(), 'acme renamed');
      assert.deepEqual((await auditRows(auditId)).map((r) => ({ ...r })), [{ team_id: teamId, resource_id: teamId, detail: 'acme renamed' }]);
      assert.deepEqual(log.statements, engine.name === 'postgres' ? ['testRenameTeam'] : ['testRename', 'testAuditRename']);
    });

    it('a step after a step that returned no row writes nothing, and the chain answers undefined', async () => {
      const log = new StatementLog();
      const storage = log.wrap(db.storage);
      const auditId = newId();
      const answer = await runChain(storage.db, RENAME, { teamId: 'NOSUCHTEAM0000000000', name: 'nobody', auditId, at: ROW_TIME });
      assert.equal(answer, undefined);
      assert.deepEqual(await auditRows(auditId), []);
      // SQLite skips the step; PostgreSQL's one statement inserts from an empty CTE.
      assert.deepEqual(log.statements, engine.name === 'postgres' ? ['testRenameTeam'] : ['testRename']);
    });

    it('a failure in a later step undoes the earlier ones, in the chain\'s own transaction and in the caller\'s', async () => {
      const taken = newId();
      await runChain(kdb, RENAME, { teamId, name: 'before', auditId: taken, at: ROW_TIME });
      const failed = (error: unknown) => hooksOf(kdb).isUniqueViolation(error);
      await assert.rejects(runChain(kdb, RENAME, { teamId, name: 'lost', auditId: taken, at: ROW_TIME }), failed);
      assert.equal(await teamName(), 'before');
      await assert.rejects(transact(kdb, (trx) => runChain(trx, RENAME, { teamId, name: 'lost too', auditId: taken, at: ROW_TIME })), failed);
      assert.equal(await teamName(), 'before');
      assert.equal((await auditRows(taken)).length, 1);
    });

    it('a DELETE after a step gains exists (select 1 from it); an INSERT ... ON CONFLICT after one selects from it under WHERE true (SQLite\'s parsing ambiguity): neither writes when the step returned no row', async () => {
      const sqlOf = engine.name === 'postgres' ? [compileStatement(kdb, REPLACE.whole).compiled.sql] : REPLACE.steps.map((step) => compileStatement(kdb, step.statement).compiled.sql);
      assert.match(sqlOf.join('\n'), /delete from "audit_events" where "id" = [$?]\d* and exists \(select 1 from "t"\)/);
      assert.match(sqlOf.join('\n'), /from "t" where true on conflict \("id"\) do nothing returning "id"/);
      const [oldId, auditId] = [newId(), newId()];
      await runChain(kdb, RENAME, { teamId, name: 'old', auditId: oldId, at: ROW_TIME });
      assert.equal(await runChain(kdb, REPLACE, { teamId: 'NOSUCHTEAM0000000000', name: 'never', auditId, oldId, at: ROW_TIME }), undefined);
      assert.equal((await auditRows(oldId)).length, 1, 'nothing deleted');
      assert.deepEqual(await auditRows(auditId), [], 'nothing inserted');
      assert.deepEqual({ ...(await runChain(kdb, REPLACE, { teamId, name: 'new', auditId, oldId, at: ROW_TIME })) }, { id: auditId });
      assert.deepEqual(await auditRows(oldId), []);
      assert.deepEqual((await auditRows(auditId)).map((r) => r.detail), ['new']);
      // The row is there already: ON CONFLICT DO NOTHING inserts nothing, and the chain answers undefined.
      assert.equal(await runChain(kdb, REPLACE, { teamId, name: 'again', auditId, oldId, at: ROW_TIME }), undefined);
      assert.deepEqual((await auditRows(auditId)).map((r) => r.detail), ['new']);
    });

    it('a chain is checked when defined: a step reads only an earlier step that returns a row', () => {
      const update = { name: 'u', build: (d: Db, p: { teamId: string }) => d.updateTable('teams').set({ name: 'x' }).where('id', '=', p.teamId) };
      assert.throws(() => defineChain('testBadOrder', ['teamId'], [{ ...update, name: 'a', after: 'b' }, { ...update, name: 'b', returns: ['id'] }]), /reads b, which is no earlier step/);
      assert.throws(() => defineChain('testNoRow', ['teamId'], [{ ...update, name: 'a' }, { ...update, name: 'b', after: 'a' }]), /reads a, which is no earlier step/);
      assert.throws(() => defineChain('testTwice', ['teamId'], [{ ...update, name: 'a' }, { ...update, name: 'a' }]), /two steps are named a/);
    });
  });
}
