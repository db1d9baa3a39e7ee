/**
 * Crash safety (DESIGN.md section 3: every write is one transaction with its audit event), on
 * SQLite and PostgreSQL: a server killed with SIGKILL in the middle of a stream of writes is
 * restarted on the same database, and every acknowledged write is there, while nothing half
 * written is: no membership without its user, no user without its create event. And SIGTERM
 * drains: requests in flight when it arrives complete, then the process exits 0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connect } from '../../src/storage/connect.ts';
import { lastSeq } from '../../src/storage/repos/events.ts';
import { NO_POSTGRES, processDatabases } from '../support/engines.ts';
import { scim, seedTeamToken, startServer } from '../support/processes.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const targets = processDatabases('rollcall-crash');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (NO_POSTGRES) describe('crash safety on postgres', { skip: NO_POSTGRES }, () => {});

for (const target of targets) {
  describe(`crash safety on ${target.name}`, () => {
    let db: { url: string; dispose(): Promise<void> };
    let token: string;
    before(async () => {
      db = await target.open();
      token = await seedTeamToken(db.url);
    });
    after(() => db.dispose());

    it('SIGKILL mid-stream: every acknowledged write survives, nothing is half-written', async () => {
      let server = await startServer(db.url);
      const group = await scim(server.url, token, 'POST', '/Groups', { displayName: 'Crash' });
      const gid = String(group.body!.id);
      const acknowledged: string[] = [];
      const members: string[] = [];
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          try {
            const created = await scim(server.url, token, 'POST', '/Users', { userName: `w${w}-${i}@acme.example`, title: 'x' });
            if (created.status !== 201) continue;
            const id = String(created.body!.id);
            acknowledged.push(id);
            const added = await scim(server.url, token, 'PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] });
            if (added.status === 204) members.push(id);
          } catch {
            return; // the connection died with the server
          }
        }
      };
      const workers = Array.from({ length: 6 }, (_, w) => worker(w));
      while (acknowledged.length < 60) await sleep(10);
      killed = true;
      server.child.kill('SIGKILL');
      assert.equal(await server.exited, null, 'killed by a signal');
      await Promise.all(workers);

      server = await startServer(db.url);
      try {
        for (const id of acknowledged) assert.equal((await scim(server.url, token, 'GET', `/Users/${id}?attributes=id`)).status, 200, id);
        const inGroup = new Set(((await scim(server.url, token, 'GET', `/Groups/${gid}`)).body!.members as { value: string }[]).map((m) => m.value));
        for (const id of members) assert.ok(inGroup.has(id), `membership of ${id} was acknowledged`);
      } finally {
        assert.equal(await server.stop(), 0);
      }
      const storage = connect(db.url);
      try {
        const orphans = await sql<{ n: string | number }>`select count(*) as n from group_members m left join users u on u.id = m.user_id where u.id is null`.execute(storage.db);
        assert.equal(Number(orphans.rows[0]!.n), 0, 'no membership without its user');
        const unaudited = await sql<{ n: string | number }>`select count(*) as n from users u where not exists (select 1 from audit_events a where a.resource_id = u.id and a.action = 'create')`.execute(storage.db);
        assert.equal(Number(unaudited.rows[0]!.n), 0, 'no user without its create event');
        // DESIGN.md section 8: every user has its feed event, and the feed that survived is
        // gap-free: seq 1..N with N the last seq handed out.
        const unfed = await sql<{ n: string | number }>`select count(*) as n from users u where not exists (select 1 from events e where e.resource_id = u.id and e.type = 'create')`.execute(storage.db);
        assert.equal(Number(unfed.rows[0]!.n), 0, 'no user without its feed event');
        const feed = await sql<{ team_id: string; n: string | number; lo: string | number; hi: string | number }>`select team_id, count(*) as n, min(seq) as lo, max(seq) as hi from events group by team_id`.execute(storage.db);
        assert.equal(feed.rows.length, 1, 'one team wrote');
        const f = feed.rows[0]!;
        assert.deepEqual([Number(f.lo), Number(f.hi), await lastSeq(storage.db, f.team_id)], [1, Number(f.n), Number(f.n)], 'seq 1..N, no gap, the last seq handed out N');
      } finally {
        await storage.close();
      }
    });

    it('SIGTERM drains the requests in flight, then exits 0', async () => {
      const server = await startServer(db.url, { LOG_LEVEL: 'debug' });
      // Creating users with passwords is slow (scrypt), so these are still in flight when SIGTERM
      // lands: it is sent once the server has logged receiving all four.
      const inFlight = Array.from({ length: 4 }, (_, i) => scim(server.url, token, 'POST', '/Users', { userName: `drain${i}@acme.example`, password: `drain password ${i}` }));
      while ((server.output().match(/"msg":"incoming request"/g) ?? []).length < 4) await sleep(5);
      const code = server.stop('SIGTERM');
      const results = await Promise.all(inFlight);
      assert.deepEqual(results.map((r) => r.status), Array(4).fill(201));
      assert.equal(await code, 0);
    });
  });
}
