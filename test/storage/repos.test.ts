/**
 * The repository contract, run on every engine (SQLite always; PostgreSQL when configured):
 * inserts and reads, optimistic version checks, unique violations classified by the dialect,
 * idempotent membership rows, concurrent membership inserts, token hashes.
 */
import assert from 'node:assert/strict';
import { ALWAYS } from '../../src/storage/predicate.ts';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { addCounts } from '../../src/storage/repos/counters.ts';
import { addMembers, addTeamUserAsMember, clearMembers, firstMembers, groupsOfUsers, insertGroup, isUnknownMember, memberChunk, removeMembers, touchGroup } from '../../src/storage/repos/groups.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import { revokeTokensOfUser, insertToken, tokenByHash } from '../../src/storage/repos/tokens.ts';
import { existingUserIds, insertUser, listUsers, updateUser, userById, userByNameKey } from '../../src/storage/repos/users.ts';
import { hooksOf, hot, StorageCarrier } from '../../src/storage/statements.ts';
import type { Statements } from '../../src/storage/statements.ts';
import type { Db } from '../../src/storage/types.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { groupRow, ROW_TIME, userRow } from '../support/rows.ts';

const T = ROW_TIME;

for (const engine of engines) {
  describe(`storage repositories on ${engine.name}`, () => {
    let db: TestDatabase;
    const teamId = newId();

    before(async () => {
      db = await engine.open();
      await insertTeam(db.storage.db, { id: teamId, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: T });
    });
    after(() => db.dispose());

    it('inserts and reads a user; data round-trips as a document', async () => {
      const row = userRow(teamId, 'Alice@X.example');
      await insertUser(db.storage.db, row);
      const got = await userById(db.storage.db, teamId, row.id);
      assert.equal(got?.user_name, 'Alice@X.example');
      assert.deepEqual(db.storage.hooks.parseJson(got?.data), { userName: 'Alice@X.example', active: true });
      assert.equal((await userByNameKey(db.storage.db, teamId, 'alice@x.example'))?.id, row.id);
      assert.equal(await userById(db.storage.db, newId(), row.id), undefined, 'scoped by team');
    });

    it('a duplicate (team, user_name_claim) is a unique violation the dialect recognises; released names (NULL claims) never collide', async () => {
      await insertUser(db.storage.db, userRow(teamId, 'dup@x.example'));
      await assert.rejects(insertUser(db.storage.db, userRow(teamId, 'DUP@x.example')), (error: unknown) => db.storage.hooks.isUniqueViolation(error));
      await insertUser(db.storage.db, userRow(teamId, 'Dup@x.example', { user_name_claim: null, active: 0 }));
      await insertUser(db.storage.db, userRow(teamId, 'dUp@x.example', { user_name_claim: null, active: 0 }));
    });

    it('updateUser writes only when the version is the expected one', async () => {
      const row = userRow(teamId, 'ver@x.example');
      await insertUser(db.storage.db, row);
      assert.equal(await updateUser(db.storage.db, { ...row, version: 2, display_name: "A" }, 1), true);
      assert.equal(await updateUser(db.storage.db, { ...row, version: 2, display_name: 'B' }, 1), false);
      assert.equal((await userById(db.storage.db, teamId, row.id))?.display_name, 'A');
    });

    it('lists with offset/limit, counting all matches, ordered by creation then id', async () => {
      const other = newId();
      await insertTeam(db.storage.db, { id: other, name: 'list', name_key: 'list', deactivated_users: 'hidden', created_at: T });
      for (let i = 0; i < 5; i++) {
        const created_at = `2026-01-01T00:00:0${i}.000Z`;
        await insertUser(db.storage.db, userRow(other, `l${i}@x.example`, { created_at, active: i === 4 ? 0 : 1 }));
        // What the Users service adds in each write's transaction (unfiltered totals come from it).
        await addCounts(db.storage.db, other, i === 4 ? { usersDeactivated: 1 } : { usersActive: 1 }, created_at);
      }
      const page = await listUsers(db.storage.db, other, { onlyActive: true, descending: false, offset: 1, limit: 2 });
      assert.equal(page.total, 4);
      assert.deepEqual(page.rows.map((r) => r.user_name), ['l1@x.example', 'l2@x.example']);
      const all = await listUsers(db.storage.db, other, { onlyActive: false, descending: true, offset: 0, limit: 10 });
      assert.equal(all.total, 5);
      assert.equal(all.rows[0]?.user_name, 'l4@x.example');
      const ids = all.rows.map((r) => r.id);
      const existing = await existingUserIds(db.storage.db, other, [...ids, 'NOPE']);
      assert.equal(existing.size, 5);
    });

    it('list pages write LIMIT and OFFSET into the SQL: SQLite recompiles a cached statement whose bound LIMIT changes, on every run', async () => {
      const other = newId();
      await insertTeam(db.storage.db, { id: other, name: 'lit', name_key: 'lit', deactivated_users: 'hidden', created_at: T });
      for (let i = 0; i < 5; i++) {
        const created_at = `2026-01-01T00:00:0${i}.000Z`;
        await insertUser(db.storage.db, userRow(other, `lit${i}@x.example`, { created_at }));
        await addCounts(db.storage.db, other, { usersActive: 1 }, created_at);
      }
      const texts: string[] = [];
      // The SQL a list runs is compiled once per shape (statements.ts `Shaped`): read it there.
      const inner = hot(db.storage.db);
      const statements: Statements = { ...inner, shaped: (ex, query) => (texts.push(query.build(ex as Db, false).compile().sql), inner.shaped(ex, query)) };
      const watched = db.storage.db.withPlugin(new StorageCarrier(statements, hooksOf(db.storage.db)));
      // A filter (ALWAYS) keeps the page on the general path: unfiltered deep pages walk the index (offsetByIndex).
      const page = await listUsers(watched, other, { where: ALWAYS, onlyActive: true, descending: false, offset: 2, limit: 2 });
      assert.deepEqual(page.rows.map((r) => r.user_name), ['lit2@x.example', 'lit3@x.example']);
      const seek = await listUsers(watched, other, { onlyActive: true, descending: false, limit: 3, seek: { direction: 'after', from: { createdAt: `2026-01-01T00:00:00.000Z`, id: page.rows[0]!.id } } });
      assert.equal(seek.rows.length, 3);
      assert.ok(texts.some((t) => /limit 2 offset 2\b/.test(t)), texts.join('\n'));
      assert.ok(texts.some((t) => /limit 4$/.test(t)), texts.join('\n'));
      assert.ok(texts.every((t) => !/(limit|offset) (\?|\$\d)/.test(t)), texts.join('\n'));
    });

    it('membership rows: adds are idempotent, removes and clears touch only what they name', async () => {
      const g = groupRow(teamId, 'Eng');
      await insertGroup(db.storage.db, g);
      const users = [userRow(teamId, 'm1@x.example'), userRow(teamId, 'm2@x.example'), userRow(teamId, 'm3@x.example', { active: 0 })];
      for (const u of users) await insertUser(db.storage.db, u);
      const ids = users.map((u) => u.id);
      await addMembers(db.storage.db, teamId, g.id, ids, T);
      await addMembers(db.storage.db, teamId, g.id, ids, T);
      assert.equal((await memberChunk(db.storage.db, teamId, g.id, false, 1000)).length, 3);
      assert.equal((await memberChunk(db.storage.db, teamId, g.id, true, 1000)).length, 2, 'deactivated members can be left out');
      await removeMembers(db.storage.db, g.id, [ids[0]!]);
      assert.deepEqual((await memberChunk(db.storage.db, teamId, g.id, false, 1000)).map((m) => m.user_id).sort(), [ids[1]!, ids[2]!].sort());
      await clearMembers(db.storage.db, g.id, [ids[2]!]);
      assert.deepEqual((await memberChunk(db.storage.db, teamId, g.id, false, 1000)).map((m) => m.user_id), [ids[2]]);
      assert.deepEqual((await groupsOfUsers(db.storage.db, teamId, [ids[2]!])).map((r) => r.display_name), ['Eng']);
      const touched = await touchGroup(db.storage.db, teamId, g.id, T);
      assert.equal(touched?.version, 2);
      assert.equal(touched?.display_name, 'Eng');
      assert.equal(await touchGroup(db.storage.db, teamId, 'NOPE', T), undefined);
    });

    it('one member added only if it is a user of the team: added once; no such user, or a user of another team, refused with the error isUnknownMember recognises (in a transaction too, where it may surface at the commit), nothing added', async () => {
      const g = groupRow(teamId, 'Single');
      await insertGroup(db.storage.db, g);
      const u = userRow(teamId, 'single@x.example');
      await insertUser(db.storage.db, u);
      const otherTeamId = newId();
      await insertTeam(db.storage.db, { id: otherTeamId, name: 'single', name_key: 'single', deactivated_users: 'hidden', created_at: T });
      const stranger = userRow(otherTeamId, 'stranger@x.example');
      await insertUser(db.storage.db, stranger);
      await addTeamUserAsMember(db.storage.db, teamId, g.id, u.id, T);
      await addTeamUserAsMember(db.storage.db, teamId, g.id, u.id, T);
      const unknown = (error: unknown) => isUnknownMember(hooksOf(db.storage.db), error);
      for (const id of ['NOSUCHUSER0000000000', stranger.id]) {
        await assert.rejects(addTeamUserAsMember(db.storage.db, teamId, g.id, id, T), unknown);
        await assert.rejects(db.storage.db.transaction().execute((trx) => addTeamUserAsMember(trx, teamId, g.id, id, T)), unknown);
      }
      assert.deepEqual((await memberChunk(db.storage.db, teamId, g.id, false, 1000)).map((m) => m.user_id), [u.id]);
    });

    it('members read by keyset chunks: in (joined, user id) order, each once; the first n of each group in one query', async () => {
      const g = groupRow(teamId, 'Chunks');
      const h = groupRow(teamId, 'Other');
      await insertGroup(db.storage.db, g);
      await insertGroup(db.storage.db, h);
      const users = Array.from({ length: 7 }, (_, i) => userRow(teamId, `chunk${i}@x.example`));
      for (const u of users) await insertUser(db.storage.db, u);
      // Two join times, and ids not in join order: the order is (created_at, user_id).
      await addMembers(db.storage.db, teamId, g.id, users.slice(3).map((u) => u.id), '2026-01-01T00:00:02.000Z');
      await addMembers(db.storage.db, teamId, g.id, users.slice(0, 3).map((u) => u.id), '2026-01-01T00:00:01.000Z');
      await addMembers(db.storage.db, teamId, h.id, [users[0]!.id], T);
      const expected = [...users.slice(0, 3).map((u) => u.id).sort(), ...users.slice(3).map((u) => u.id).sort()];
      const walked: string[] = [];
      let after: { created_at: string; user_id: string } | undefined;
      for (;;) {
        const chunk = await memberChunk(db.storage.db, teamId, g.id, false, 2, after);
        walked.push(...chunk.map((m) => m.user_id));
        if (chunk.length < 2) break;
        after = chunk[chunk.length - 1];
      }
      assert.deepEqual(walked, expected);
      const firsts = await firstMembers(db.storage.db, teamId, [g.id, h.id], false, 2);
      assert.deepEqual(firsts.filter((m) => m.group_id === g.id).map((m) => m.user_id), expected.slice(0, 2));
      assert.deepEqual(firsts.filter((m) => m.group_id === h.id).map((m) => m.user_id), [users[0]!.id]);
    });

    it('concurrent membership transactions on one group lose nothing', async () => {
      const g = groupRow(teamId, 'Race');
      await insertGroup(db.storage.db, g);
      const users = Array.from({ length: 40 }, (_, i) => userRow(teamId, `race${i}@x.example`));
      for (const u of users) await insertUser(db.storage.db, u);
      await Promise.all(
        users.map((u) =>
          db.storage.db.transaction().execute(async (trx) => {
            await touchGroup(trx, teamId, g.id, T);
            await addMembers(trx, teamId, g.id, [u.id], T);
          }),
        ),
      );
      assert.equal((await memberChunk(db.storage.db, teamId, g.id, false, 1000)).length, 40);
      const row = await db.storage.db.selectFrom('groups').select('version').where('id', '=', g.id).executeTakeFirstOrThrow();
      assert.equal(row.version, 41);
    });

    it('tokens are stored by hash and revoked per user', async () => {
      const u = userRow(teamId, 'tok@x.example');
      await insertUser(db.storage.db, u);
      await insertToken(db.storage.db, { hash: 'h'.repeat(64), kind: 'access', family_id: null, client_id: null, user_id: u.id, team_id: teamId, scope: 'read', created_at: T, expires_at: T, revoked_at: null, secret_id: null, connection_id: null });
      assert.equal((await tokenByHash(db.storage.db, 'h'.repeat(64)))?.scope, 'read');
      assert.equal(await revokeTokensOfUser(db.storage.db, u.id, T), 1);
      assert.equal((await tokenByHash(db.storage.db, 'h'.repeat(64)))?.revoked_at, T);
    });
  });
}
