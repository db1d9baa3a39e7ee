/**
 * Asynchronous requests with two server processes on one PostgreSQL (issue 32 item 4): both
 * accept requests and both run the worker. Several teams each send a run of asynchronous PATCHes
 * of one user and a few creates, alternating between the instances; every request runs exactly
 * once (one asyncresp event per txn, each create answered 201) and each team's requests run in
 * the order they were accepted (the user's patch events carry the txns in that order, their
 * versions one after another, the last title wins).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTeam, createTeamUser, issueToken } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { connect } from '../../src/storage/connect.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { scim, seedTeamToken, startServer } from '../support/processes.ts';
import type { ServerProcess } from '../support/processes.ts';

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ASYNC = { prefer: 'respond-async' };
const TEAMS = ['beta', 'gamma', 'delta'];
const PATCHES = 10;
const CREATES = 4;
type Json = Record<string, unknown>;

/** Teams besides the seeded `acme`, each with a read-write token. */
async function seedTeams(database: string, names: readonly string[]): Promise<string[]> {
  const storage = connect(database);
  try {
    const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
    const tokens: string[] = [];
    for (const name of names) {
      await createTeam(deps, name);
      await createTeamUser(deps, name, `owner@${name}.example`, {});
      tokens.push((await issueToken(deps, name, `owner@${name}.example`, { scope: ['read', 'write'], ttlSeconds: 3600 })).token);
    }
    return tokens;
  } finally {
    await storage.close();
  }
}

describe('asynchronous requests: two instances on one PostgreSQL', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });

  it('every request runs exactly once, and each team\'s in the order accepted, whichever instance accepted or ran it', async () => {
    const schema = await createPgSchema(postgresUrl!);
    cleanup.push(() => schema.drop());
    const tokens = [await seedTeamToken(schema.url), ...(await seedTeams(schema.url, TEAMS))];
    const env = { ASYNC_LEASE_SECONDS: '2' };
    const servers: ServerProcess[] = await Promise.all([startServer(schema.url, env), startServer(schema.url, env)]);
    cleanup.push(() => Promise.all(servers.map((s) => s.stop('SIGKILL'))));

    const plans = await Promise.all(
      tokens.map(async (token, team) => {
        const created = await scim(servers[0]!.url, token, 'POST', '/Users', { userName: `patched@team${team}.example` });
        assert.equal(created.status, 201);
        return { token, id: String(created.body!.id), patches: [] as string[], creates: [] as string[] };
      }),
    );
    // The teams' requests interleaved, each team's sent one after another to alternating instances.
    await Promise.all(
      plans.map(async (plan, team) => {
        for (let k = 0; k < PATCHES; k++) {
          const server = servers[k % 2]!;
          const r = await scim(server.url, plan.token, 'PATCH', `/Users/${plan.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: `t${k}` }] }, ASYNC);
          assert.equal(r.status, 202);
          plan.patches.push(r.headers.get('set-txn')!);
          if (k < CREATES) {
            const c = await scim(servers[(k + 1) % 2]!.url, plan.token, 'POST', '/Users', { userName: `new${k}@team${team}.example` }, ASYNC);
            assert.equal(c.status, 202);
            plan.creates.push(c.headers.get('set-txn')!);
          }
        }
      }),
    );

    const deadline = Date.now() + 60_000;
    for (const plan of plans) {
      for (const txn of [...plan.patches, ...plan.creates]) {
        for (;;) {
          const s = await scim(servers[0]!.url, plan.token, 'GET', `/AsyncRequests/${txn}`);
          assert.equal(s.status, 200);
          if (s.body!.status === 'done') {
            assert.match(String((s.body!.response as Json).status), /^20[01]$/, `request ${txn} succeeded`);
            break;
          }
          assert.ok(Date.now() < deadline, `request ${txn} done within the guard`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      const user = await scim(servers[1]!.url, plan.token, 'GET', `/Users/${plan.id}`);
      assert.equal(user.body!.title, `t${PATCHES - 1}`, 'the last PATCH sent is the last applied');
    }

    const storage = connect(schema.url);
    try {
      for (const plan of plans) {
        // In the order they were applied: by the version each produced.
        const patches = await storage.db.selectFrom('events').select(['txn', 'version']).where('resource_id', '=', plan.id).where('type', '=', 'patch').orderBy('version').execute();
        assert.deepEqual(patches.map((e) => e.txn), plan.patches, 'the team\'s PATCHes ran in the order accepted, each once');
        assert.deepEqual(patches.map((e) => Number(e.version)), Array.from({ length: PATCHES }, (_, k) => k + 2));
      }
      const responses = await sql<{ txn: string; n: string | number }>`select txn, count(*) as n from events where type = 'asyncresp' group by txn`.execute(storage.db);
      const expected = plans.flatMap((p) => [...p.patches, ...p.creates]);
      assert.equal(responses.rows.length, expected.length);
      const perTxn = new Map(responses.rows.map((r) => [r.txn, Number(r.n)]));
      for (const txn of expected) assert.equal(perTxn.get(txn), 1, `one asyncresp event with txn ${txn}`);
      const created = await sql<{ n: string | number }>`select count(*) as n from users where user_name like 'new%'`.execute(storage.db);
      assert.equal(Number(created.rows[0]!.n), plans.length * CREATES);
    } finally {
      await storage.close();
    }
  });
});
