/**
 * Rate-limit state shared across instances through Redis (REDIS_URL): failed sign-ins counted by
 * one instance lock the account on another. Two apps share one database and one Redis here, as
 * two processes would. CI starts Redis and sets REQUIRE_REDIS=1; elsewhere the test is skipped
 * when nothing answers on 127.0.0.1:6379.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
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
  const userName = `shared-${randomBytes(6).toString('hex')}@acme.example`;
  const password = 'the right password';

  before(async () => {
    database = await engines[0]!.open();
    const clock = new TestClock();
    const limits = {
      accountFailures: { points: 3, seconds: 600 },
      clientFailures: { points: 100, seconds: 600 },
      passwordPerClient: { points: 100, seconds: 600 },
      signinPerAddress: { points: 100, seconds: 600 },
    };
    apps = await Promise.all([0, 1].map(() => buildApp({ config: { ...TEST_CONFIG, redisUrl: REDIS_URL }, storage: database.storage, clock, limits })));
    const deps = { storage: database.storage, clock, baseUrl: TEST_CONFIG.publicBaseUrl };
    await createTeam(deps, 'acme');
    await createTeamUser(deps, 'acme', userName, { password, admin: true });
    client = await createClient(deps, { name: 'Shared', redirectUris: ['https://app.example/cb'] });
  });
  after(async () => {
    await Promise.all((apps ?? []).map((a) => a.close()));
    await database?.dispose();
  });

  const grant = (app: FastifyInstance, pw: string) =>
    app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
      payload: new URLSearchParams({ grant_type: 'password', username: userName, password: pw }).toString(),
    });

  it('failures on one instance lock the account on the other', async () => {
    assert.equal((await grant(apps[0]!, 'wrong 1')).statusCode, 400);
    assert.equal((await grant(apps[1]!, 'wrong 2')).statusCode, 400);
    assert.equal((await grant(apps[0]!, 'wrong 3')).statusCode, 400);
    const locked = await grant(apps[1]!, password);
    assert.equal(locked.statusCode, 429, locked.body);
    assert.match(String(locked.headers['retry-after']), /^\d+$/);
  });
});
