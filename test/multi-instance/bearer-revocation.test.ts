/**
 * Issue 14 item 1 across processes: each server keeps verified tokens in memory, so a revocation
 * made elsewhere must reach it. On PostgreSQL: a token revoked through one instance, or by the
 * CLI, is refused by the other before its cache entry expires (LISTEN/NOTIFY); while an
 * instance's LISTEN connection is down it serves nothing from memory (fail safe) and caches again
 * once it is back. On an SQLite file: `rollcall token revoke` (another process) is seen by the
 * server before its cache entry expires (PRAGMA data_version, polled).
 *
 * Each test first shows the server really answers from memory: a token revoked behind its back
 * (a plain UPDATE that announces nothing) still works there. That is the cache this file holds
 * to account, not a behaviour anyone relies on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTeamUser, issueToken } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { sha256 } from '../../src/ids.ts';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { REVOCATION_CHANNEL } from '../../src/storage/revocations.ts';
import { createTestApp } from '../support/app.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import type { TestEngine } from '../support/engines.ts';
import { scimStatus } from '../support/oauth.ts';
import { rollcall, scim, seedTeamToken, startServer } from '../support/processes.ts';
import type { ServerProcess } from '../support/processes.ts';
import { until } from '../support/wait.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/**
 * The servers keep verified tokens this long (the most BEARER_CACHE_SECONDS allows): a refusal
 * seen before then came from a revocation notice, not from the entry expiring.
 */
const CACHE = { BEARER_CACHE_SECONDS: '300' };
/**
 * What a revocation wait names: the wait's guard (test/support/wait.ts) is far below the cache
 * lifetime, so passing it means the notice never came.
 */
const CACHE_NOTE = `the refusal (the cache keeps entries ${CACHE.BEARER_CACHE_SECONDS} s)`;

const status = async (base: string, token: string) => (await scim(base, token, 'GET', '/Users?count=1')).status;

/** Revokes a token with a plain UPDATE: no notice, so only a server that reads the row sees it. */
const revokeBehindTheBack = (storage: Storage, token: string) =>
  storage.db.updateTable('oauth_tokens').set({ revoked_at: new Date().toISOString() }).where('hash', '=', sha256(token)).execute();

async function userToken(storage: Storage, userName: string): Promise<{ token: string; id: string; userId: string }> {
  const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
  await createTeamUser(deps, 'acme', userName, {});
  const issued = await issueToken(deps, 'acme', userName, { scope: ['read', 'write'], ttlSeconds: 3600 });
  return { token: issued.token, id: issued.id, userId: issued.userId };
}

describe('bearer cache: revocations across instances on PostgreSQL', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let schema: { url: string; drop(): Promise<void> };
  let servers: ServerProcess[];
  let owner: string;
  let storage: Storage;

  before(async () => {
    schema = await createPgSchema(postgresUrl!);
    owner = await seedTeamToken(schema.url);
    servers = await Promise.all([startServer(schema.url, CACHE), startServer(schema.url, CACHE)]);
    storage = connect(schema.url);
  });
  after(async () => {
    await storage?.close();
    await Promise.all((servers ?? []).map((s) => s.stop()));
    await schema?.drop();
  });

  it('a token revoked through one instance (user deactivated) is refused by the other before its cache entry expires', async () => {
    const [a, b] = servers.map((s) => s.url) as [string, string];
    const probe = await userToken(storage, 'probe@acme.example');
    const victim = await userToken(storage, 'victim@acme.example');
    assert.equal(await status(b, probe.token), 200);
    await revokeBehindTheBack(storage, probe.token);
    assert.equal(await status(b, probe.token), 200, 'instance B answers from its cache');

    assert.equal(await status(b, victim.token), 200);
    const res = await scim(a, owner, 'PATCH', `/Users/${victim.userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
    assert.equal(res.status, 200);
    assert.equal(await status(a, victim.token), 401, 'the instance that did it refuses it at once');
    await until(async () => (await status(b, victim.token)) === 401, CACHE_NOTE);
    // The probe, cached before the victim and revoked without a notice, is still served from
    // memory: the victim's entry did not expire, the notice removed it.
    assert.equal(await status(b, probe.token), 200, 'instance B still answers the probe from its cache');
  });

  it('rollcall token revoke (a third process) is refused by both instances before its cache entry expires', async () => {
    const victim = await userToken(storage, 'cli@acme.example');
    for (const s of servers) assert.equal(await status(s.url, victim.token), 200);
    const out = rollcall(['token', 'revoke', '--team', 'acme', '--id', victim.id, '--json', '--database', schema.url]);
    assert.equal(out.code, 0, out.stderr);
    for (const s of servers) await until(async () => (await status(s.url, victim.token)) === 401, CACHE_NOTE);
  });
});

const appName = `bearer-drop-${process.pid}`;
const withApplicationName = (url: string): string => {
  const u = new URL(url);
  u.searchParams.set('application_name', appName);
  return u.toString();
};

describe('bearer cache: the LISTEN connection drops (PostgreSQL)', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('while it is down nothing is served from memory; once it is back tokens are cached again', async () => {
    let dispose: () => Promise<void> = async () => {};
    const engine: TestEngine = {
      name: 'postgres',
      async open() {
        const created = await createPgSchema(postgresUrl!);
        // A slow reconnect, so the test can act while the connection is down.
        const s = connect(withApplicationName(created.url), { listen: { retryMs: 1500 } });
        await migrate(s);
        dispose = async () => {
          await s.close();
          await created.drop();
        };
        return { storage: s, url: created.url, dispose: () => dispose() };
      },
    };
    const t = await createTestApp({ engine });
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    try {
      const first = await t.tokenFor(t.team.id, ['read']);
      assert.equal(await scimStatus(t, first), 200);
      await revokeBehindTheBack(t.storage, first);
      assert.equal(await scimStatus(t, first), 200, 'served from memory');

      // This app's LISTEN connection (named by application_name), not those of other tests.
      const killed = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and query = 'LISTEN ${REVOCATION_CHANNEL}'`, [appName]);
      assert.equal(killed.rowCount, 1);
      await until(async () => !t.storage.revocations.live);
      assert.equal(await scimStatus(t, first), 401, 'down: the row is read, and it says revoked');

      const second = await t.tokenFor(t.team.id, ['read']);
      assert.equal(await scimStatus(t, second), 200);
      await revokeBehindTheBack(t.storage, second);
      assert.equal(await scimStatus(t, second), 401, 'down: nothing was cached');

      await until(async () => t.storage.revocations.live);
      const third = await t.tokenFor(t.team.id, ['read']);
      assert.equal(await scimStatus(t, third), 200);
      await revokeBehindTheBack(t.storage, third);
      assert.equal(await scimStatus(t, third), 200, 'back: cached again');
    } finally {
      await admin.end();
      await t.close();
    }
  });
});

describe('bearer cache: another process on the same SQLite file', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-bearer-'));
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rollcall token revoke while the server runs: refused before its cache entry expires', async () => {
    const url = `sqlite:${join(dir, 'rollcall.db')}`;
    await seedTeamToken(url);
    const storage = connect(url);
    let victim: { token: string; id: string };
    try {
      victim = await userToken(storage, 'cli@acme.example');
    } finally {
      await storage.close();
    }
    server = await startServer(url, CACHE);
    assert.equal(await status(server.url, victim.token), 200);
    assert.equal(await status(server.url, victim.token), 200);
    const out = rollcall(['token', 'revoke', '--team', 'acme', '--id', victim.id, '--json', '--database', url]);
    assert.equal(out.code, 0, out.stderr);
    await until(async () => (await status(server!.url, victim.token)) === 401, CACHE_NOTE);
  });
});
