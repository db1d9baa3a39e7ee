/**
 * Rate-limit state shared across instances through Redis (REDIS_URL): failed sign-ins counted by
 * one instance lock the account on another, parallel guesses spread over both cannot exceed the
 * limit (issue 13.5), and the counters are per (identity, address), so an attacker's failures on
 * one instance lock out neither the admin nor the client at another address on the other. Two
 * apps share one database and one Redis here (under a random key prefix), as two processes would. CI starts Redis and sets REQUIRE_REDIS=1; elsewhere the test is skipped
 * when nothing answers on 127.0.0.1:6379.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.ts';
import type { FastifyInstance } from 'fastify';
import { createClient, createTeam, createTeamUser } from '../../src/admin.ts';
import { TEST_CONFIG, TestClock } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';

async function redisAnswers(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const available = await redisAnswers();
if (!available && process.env.REQUIRE_REDIS === '1') throw new Error(`REQUIRE_REDIS=1 but Redis does not answer at ${REDIS_URL}`);

describe('rate limits shared through Redis', { skip: available ? false : `no Redis at ${REDIS_URL}` }, () => {
  let database: TestDatabase;
  let apps: FastifyInstance[];
  let client: { client_id: string; client_secret: string };
  let victim: { client_id: string; client_secret: string };
  const otherAdmin = `owner-${randomBytes(6).toString('hex')}@acme.example`;
  const lateAdmin = `late-${randomBytes(6).toString('hex')}@acme.example`;
  let clock: TestClock;
  const limits = {
    accountFailures: { points: 3, seconds: 600 },
    clientFailures: { points: 3, seconds: 600 },
    passwordPerClient: { points: 100, seconds: 600 },
    signinPerAddress: { points: 100, seconds: 600 },
  };
  const userName = `shared-${randomBytes(6).toString('hex')}@acme.example`;
  const password = 'the right password';

  before(async () => {
    database = await engines[0]!.open();
    clock = new TestClock();
    const limitKeyPrefix = `test-${randomBytes(8).toString('hex')}`;
    apps = await Promise.all([0, 1].map(() => buildApp({ config: { ...TEST_CONFIG, redisUrl: REDIS_URL }, storage: database.storage, clock, limits, limitKeyPrefix })));
    const deps = { storage: database.storage, clock, baseUrl: TEST_CONFIG.publicBaseUrl };
    await createTeam(deps, 'acme');
    await createTeamUser(deps, 'acme', userName, { password, admin: true });
    await createTeamUser(deps, 'acme', otherAdmin, { password, admin: true });
    client = await createClient(deps, { name: 'Shared', redirectUris: ['https://app.example/cb'] });
    victim = await createClient(deps, { name: 'Entra provisioning', redirectUris: ['https://app.example/cb'] });
  });
  after(async () => {
    await Promise.all((apps ?? []).map((a) => a.close()));
    await database?.dispose();
  });

  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  const grant = (app: FastifyInstance, pw: string, user = userName, remoteAddress = '127.0.0.1') =>
    app.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
      payload: new URLSearchParams({ grant_type: 'password', username: user, password: pw }).toString(),
    });
  const introspect = (app: FastifyInstance, secret: string, remoteAddress: string) =>
    app.inject({
      method: 'POST',
      url: '/oauth/introspect',
      remoteAddress,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(victim.client_id, secret) },
      payload: 'token=nothing',
    });

  it('failures on one instance lock the account on the other', async () => {
    assert.equal((await grant(apps[0]!, 'wrong 1')).statusCode, 400);
    assert.equal((await grant(apps[1]!, 'wrong 2')).statusCode, 400);
    assert.equal((await grant(apps[0]!, 'wrong 3')).statusCode, 400);
    const locked = await grant(apps[1]!, password);
    assert.equal(locked.statusCode, 429, locked.body);
    assert.match(String(locked.headers['retry-after']), /^\d+$/);
  });

  it('13.5: parallel guesses over both instances evaluate at most the limit; an attacker at one address locks out neither the admin nor the client elsewhere', async () => {
    const guesses = Array.from({ length: 20 }, (_, i) => grant(apps[i % 2]!, `wrong ${i}`, otherAdmin, '203.0.113.50'));
    const all = await Promise.all([...guesses, grant(apps[1]!, password, otherAdmin, '203.0.113.50')]);
    const evaluated = all.filter((r) => r.statusCode !== 429).length;
    assert.ok(evaluated <= 3, `${evaluated} guesses were evaluated (limit 3)`);
    const owner = await grant(apps[0]!, password, otherAdmin, '198.51.100.60');
    assert.equal(owner.statusCode, 200, owner.body);

    const attacks: number[] = [];
    for (let i = 0; i < 6; i++) {
      attacks.push((await introspect(apps[i % 2]!, 'rc_cs_wrong', '203.0.113.50')).statusCode);
      assert.equal((await introspect(apps[(i + 1) % 2]!, victim.client_secret, '198.51.100.60')).statusCode, 200);
    }
    assert.deepEqual(attacks, [401, 401, 401, 429, 429, 429]);
  });

  /**
   * A loopback proxy to Redis that starts late: with `hold`, it listens at once and holds every
   * connection for 400 ms before it forwards anything (the apps' connections are open but not
   * ready); with `refuse`, nothing listens on its port for the first 400 ms (the apps' first
   * attempts are refused, as when Redis starts alongside them or restarts). A loaded CI host once
   * did the first: an app counted its first failures in its own memory.
   */
  async function lateRedis(kind: 'hold' | 'refuse'): Promise<{ url: string; close: () => Promise<void> }> {
    const sockets = new Set<Socket>();
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, run: () => void) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        run();
      }, ms);
      timers.add(timer);
    };
    const proxy: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      const forward = () => {
        if (socket.destroyed) return;
        const upstream = connect(6379, '127.0.0.1');
        upstream.on('error', () => socket.destroy());
        socket.on('close', () => upstream.destroy());
        socket.pipe(upstream).pipe(socket);
      };
      if (kind === 'hold') later(400, forward);
      else forward();
    });
    // A free port: taken, let go, and listened on again at once (hold) or 400 ms later (refuse).
    const port = await new Promise<number>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve((proxy.address() as AddressInfo).port)));
    if (kind === 'refuse') {
      await new Promise((resolve) => proxy.close(resolve));
      later(400, () => proxy.listen(port, '127.0.0.1'));
    }
    return {
      url: `redis://127.0.0.1:${port}`,
      close: async () => {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        if (proxy.listening) await new Promise((resolve) => proxy.close(resolve));
      },
    };
  }

  for (const kind of ['hold', 'refuse'] as const) {
    it(`an instance whose Redis answers late (${kind === 'hold' ? 'a slow connection' : 'the first attempts refused'}) still counts with the others from its first request`, async () => {
      const redis = await lateRedis(kind);
      const user = `${kind}-${lateAdmin}`;
      await createTeamUser({ storage: database.storage, clock, baseUrl: TEST_CONFIG.publicBaseUrl }, 'acme', user, { password, admin: true });
      const limitKeyPrefix = `test-${randomBytes(8).toString('hex')}`;
      const late = await Promise.all([0, 1].map(() => buildApp({ config: { ...TEST_CONFIG, redisUrl: redis.url }, storage: database.storage, clock, limits, limitKeyPrefix })));
      try {
        assert.equal((await grant(late[0]!, 'wrong 1', user)).statusCode, 400);
        assert.equal((await grant(late[1]!, 'wrong 2', user)).statusCode, 400);
        assert.equal((await grant(late[0]!, 'wrong 3', user)).statusCode, 400);
        const locked = await grant(late[1]!, password, user);
        assert.equal(locked.statusCode, 429, locked.body);
        for (const app of late) assert.equal(JSON.parse((await app.inject({ method: 'GET', url: '/readyz' })).body).rateLimits, 'redis');
      } finally {
        await Promise.all(late.map((a) => a.close()));
        await redis.close();
      }
    });
  }
});
