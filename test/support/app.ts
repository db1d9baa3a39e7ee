/**
 * Builds a Rollcall app on a fresh database of one engine, with a team and an access token, for
 * inject()-based HTTP tests. Each call is independent: nothing is shared between tests.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import type { AppConfig, AppDeps } from '../../src/app.ts';
import type { LimitSettings } from '../../src/oauth/limits.ts';
import type { Clock } from '../../src/clock.ts';
import { iso } from '../../src/clock.ts';
import { newId } from '../../src/ids.ts';
import { issueAccessToken } from '../../src/oauth/tokens.ts';
import type { Scope } from '../../src/oauth/tokens.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import type { TeamRow } from '../../src/storage/repos/teams.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { engines } from './engines.ts';
import { installResponseCheck } from './openapi-check.ts';
import type { TestEngine } from './engines.ts';

export const BASE_URL = 'https://rollcall.test';

/** SECRET_KEY for tests (test/support/processes.ts passes it to server processes too). */
export const TEST_SECRET_KEY = 'test-instance-secret-0123456789abcdef-0123456789';

/**
 * A clock that tests move by hand. Each reading also moves it 1 ms forward, so resources
 * created one after another have distinct, ordered timestamps, as on a real server.
 */
export class TestClock implements Clock {
  #ms: number;
  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.#ms = start;
  }
  now(): Date {
    this.#ms += 1;
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly storage: Storage;
  /** The database's URL (a second app may connect to it: two instances on one PostgreSQL). */
  readonly url: string;
  readonly clock: TestClock;
  readonly team: TeamRow;
  readonly token: string;
  /** A request with the team's token; `body` objects are sent as application/scim+json. */
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Another team in the same database, with its own token. */
  addTeam(name: string, options?: { deactivatedUsers?: TeamRow['deactivated_users'] }): Promise<{ team: TeamRow; token: string }>;
  tokenFor(teamId: string, scope: readonly Scope[], ttlSeconds?: number): Promise<string>;
  close(): Promise<void>;
}

/** ALLOW_RECEIVERS=127.0.0.0/8,::1 as config.ts parses it: what test apps and servers allow. */
export const LOOPBACK_RECEIVERS: NonNullable<AppConfig['allowReceivers']> = [
  { kind: 'network', address: '127.0.0.0', prefix: 8, family: 4 },
  { kind: 'network', address: '::1', prefix: 128, family: 6 },
];

/** The configuration test apps run with (no Redis: rate limits in memory). */
export const TEST_CONFIG: AppConfig = {
  publicBaseUrl: BASE_URL,
  logLevel: 'silent',
  accessTokenTtl: 3600,
  refreshTokenTtl: 30 * 86_400,
  passwordGrant: true,
  redisUrl: undefined,
  // Every test app shares one instance secret, as instances of one deployment do (the
  // PostgreSQL engine needs one; two apps on one database must agree on it).
  secretKey: TEST_SECRET_KEY,
  // The events tests' receivers listen on loopback (receiver.ts), which push delivery refuses
  // unless allowed (ALLOW_RECEIVERS); tests of that refusal set their own list.
  allowReceivers: LOOPBACK_RECEIVERS,
};

export interface TestAppOptions {
  readonly engine?: TestEngine;
  readonly config?: Partial<AppConfig>;
  readonly limits?: Partial<LimitSettings>;
  readonly logStream?: { write(line: string): void };
  readonly deactivatedUsers?: TeamRow['deactivated_users'];
  /** Puts something between the app and its database (e.g. a query-watching plugin). */
  readonly wrapStorage?: (storage: Storage) => Storage;
  /** Where the test clock starts (ms since the epoch; default 2026-01-01): now, for a peer that checks times against the real clock. */
  readonly clockStart?: number;
  /** Other app dependencies (hashing queue, deadlines, ...). */
  readonly deps?: Partial<Omit<AppDeps, 'config' | 'storage' | 'clock'>>;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const engine = options.engine ?? engines[0]!;
  const database = await engine.open();
  const storage = options.wrapStorage ? options.wrapStorage(database.storage) : database.storage;
  const clock = new TestClock(options.clockStart);
  // Event push delivery and the asynchronous requests' worker poll the database in the
  // background: off unless a test asks for them, so tests that count queries see only their own.
  const app = await buildApp({ config: { ...TEST_CONFIG, ...options.config }, storage, clock, delivery: false, asyncRequests: false, ...(options.limits ? { limits: options.limits } : {}), ...(options.logStream ? { logStream: options.logStream } : {}), ...options.deps });
  // Every response of this app is checked against the app's OpenAPI document (openapi-check.ts).
  installResponseCheck(app);

  const tokenFor = async (teamId: string, scope: readonly Scope[], ttlSeconds = 3600) =>
    (await issueAccessToken(storage.db, clock, { teamId, userId: null, clientId: null, scope, ttlSeconds })).token;

  const addTeam = async (name: string, teamOptions: { deactivatedUsers?: TeamRow['deactivated_users'] } = {}) => {
    const team: TeamRow = {
      id: newId(),
      name,
      name_key: name.toLowerCase(),
      deactivated_users: teamOptions.deactivatedUsers ?? 'hidden',
      created_at: iso(clock),
    };
    await insertTeam(storage.db, team);
    return { team, token: await tokenFor(team.id, ['read', 'write']) };
  };

  const { team, token } = await addTeam('acme', { deactivatedUsers: options.deactivatedUsers ?? 'hidden' });

  return {
    app,
    storage,
    url: database.url,
    clock,
    team,
    token,
    addTeam,
    tokenFor,
    request: (method, url, body, headers = {}) =>
      app.inject({
        method: method as 'GET',
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      }),
    async close() {
      await app.close();
      await database.dispose();
    },
  };
}

/** The JSON body of a response. */
export const json = (response: LightMyRequestResponse): Record<string, unknown> => response.json() as Record<string, unknown>;
