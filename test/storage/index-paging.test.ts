/**
 * RFC 7644 3.4.2.4 index paging on both engines (repos/paging.ts): an unfiltered page in
 * creation order walks its offset in the covering index, from the list's end in its second half
 * (the number of rows after the page from the team's counters, in the same statement). Every page
 * must equal the same slice of the full ordered listing, in both of a team's modes and both
 * directions, also after rows are inserted (some with older creation times, as another instance's
 * clock may give), deactivated and deleted between pages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/ids.ts';
import { addCounts, userDelta, userStateOf } from '../../src/storage/repos/counters.ts';
import { FROM_END_AFTER } from '../../src/storage/repos/list/plan.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import { listUsers } from '../../src/storage/repos/users.ts';
import type { UserRow } from '../../src/storage/repos/users.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { userRow } from '../support/rows.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

function row(teamId: string, n: number, createdMs: number, state: 'active' | 'deactivated' | 'deleted'): UserRow {
  return userRow(teamId, `p${n}@x.example`, {
    active: state === 'active' ? 1 : 0,
    created_at: at(createdMs),
    updated_at: at(createdMs),
    deleted_at: state === 'deleted' ? at(createdMs + 1) : null,
  });
}

for (const engine of engines) {
  describe(`index paging on ${engine.name}`, () => {
    let db: TestDatabase;
    const teamId = newId();
    let n = 0;
    before(async () => {
      db = await engine.open();
      await insertTeam(db.storage.db, { id: teamId, name: 'paging', name_key: 'paging', deactivated_users: 'hidden', created_at: at(0) });
    });
    after(() => db.dispose());

    /** Inserts rows as a writer would: the rows and their counts in one transaction. */
    const insert = async (rows: UserRow[]) => {
      await db.storage.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += 500) await trx.insertInto('users').values(rows.slice(i, i + 500)).execute();
        for (const r of rows) await addCounts(trx, teamId, userDelta(undefined, userStateOf(r)), r.created_at);
      });
    };
    const setState = async (id: string, state: 'deactivated' | 'deleted') => {
      await db.storage.db.transaction().execute(async (trx) => {
        const current = await trx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        const next = { active: 0, deleted_at: state === 'deleted' ? at(9_999_999) : null };
        await trx.updateTable('users').set({ ...next, user_name_claim: null }).where('id', '=', id).execute();
        await addCounts(trx, teamId, userDelta(userStateOf(current), userStateOf(next)), current.created_at);
      });
    };
    const fullListing = async (onlyActive: boolean, descending: boolean): Promise<string[]> => {
      const d = sql.raw(descending ? 'desc' : 'asc');
      const listed = onlyActive ? sql`active = 1 and deleted_at is null` : sql`deleted_at is null`;
      return (await sql<{ id: string }>`select id from users where team_id = ${teamId} and ${listed} order by created_at ${d}, id ${d}`.execute(db.storage.db)).rows.map((r) => r.id);
    };
    const agree = async () => {
      for (const onlyActive of [true, false]) {
        for (const descending of [false, true]) {
          const all = await fullListing(onlyActive, descending);
          const total = all.length;
          assert.ok(total > FROM_END_AFTER * 2, `${total} rows: the second half must lie beyond ${FROM_END_AFTER}`);
          for (const offset of [0, 1, 99, FROM_END_AFTER - 1, FROM_END_AFTER, Math.floor(total / 2), Math.floor(total / 2) + 1, total - 150, total - 100, total - 99, total - 1, total, total + 7]) {
            const page = await listUsers(db.storage.db, teamId, { onlyActive, descending, offset, limit: 100 });
            const what = `${onlyActive ? 'hiding' : 'showing'} ${descending ? 'desc' : 'asc'} offset ${offset} of ${total}`;
            assert.deepEqual(page.rows.map((r) => r.id), all.slice(offset, offset + 100), what);
            assert.equal(page.total, total, what);
          }
        }
      }
    };

    it('every page equals its slice of the full ordered listing, from either end of the index', async () => {
      const rows: UserRow[] = [];
      // Three rows per creation time (ties are ordered by id), 4.7 s apart: over two hours, so
      // the page's start is found through several hour and second buckets.
      for (let i = 0; i < 2600; i++, n++) rows.push(row(teamId, n, Math.floor(i / 3) * 4_700, i % 11 === 0 ? 'deactivated' : i % 13 === 0 ? 'deleted' : 'active'));
      await insert(rows);
      await agree();
    });

    it('pages still agree after inserts (some older than rows already listed), deactivations and deletions between pages', async () => {
      const rows: UserRow[] = [];
      for (let i = 0; i < 40; i++, n++) rows.push(row(teamId, n, i % 2 === 0 ? 5_000_000 + i * 900 : 300 + i * 97_000, 'active'));
      await insert(rows);
      const ids = (await fullListing(true, false)).filter((_, i) => i % 97 === 5);
      for (const [i, id] of ids.entries()) await setState(id, i % 2 === 0 ? 'deactivated' : 'deleted');
      await agree();
    });
  });
}
