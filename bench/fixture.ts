/**
 * The data the throughput benchmark runs against, written before any server starts: a team, an
 * admin who may sign in (so refresh grants stay valid), an OAuth client, a long-lived access
 * token for the SCIM scenarios, pools of users (read, write and member pools, so that writes
 * never change what reads look up), a few groups, and a pool of unused refresh tokens. Each
 * refresh token is a grant of its own, minted by the same `issueGrant` the token endpoint uses,
 * so the refresh scenario never presents a token twice (which would revoke its family) and never
 * goes through the rate-limited, scrypt-bound password grant. The team has one active push
 * subscription to every event (created through the events service, as the API creates one) when
 * a receiver URL is given, so each write pays the feed and the delivery work a live team pays.
 * A second client, bound to the team, serves the client_credentials scenarios: with its secret,
 * and, when an Entra stand-in is given (test/support/entra-standin.ts, serving its keys on
 * loopback), with a federated credential trusting the stand-in and a pool of assertions it
 * signed, each with its own `uti` (an assertion is accepted once).
 */
import { randomBytes } from 'node:crypto';
import { createClient, createTeam, createTeamUser, issueToken } from '../src/admin.ts';
import type { AdminDeps } from '../src/admin.ts';
import { systemClock } from '../src/clock.ts';
import { createSubscription } from '../src/events/subscriptions.ts';
import { addFederation } from '../src/oauth/client-trust.ts';
import { ReceiverPolicy } from '../src/events/receivers.ts';
import { issueGrant } from '../src/oauth/tokens.ts';
import type { Storage } from '../src/storage/connect.ts';
import { loadGroup } from './scale-loader.ts';
import { loadUsers } from '../test/support/rows.ts';
import type { LoadedUser } from '../test/support/rows.ts';
import type { EntraStandIn } from '../test/support/entra-standin.ts';

export interface FixtureSizes {
  readonly readUsers: number;
  readonly writeUsers: number;
  readonly memberUsers: number;
  readonly groups: number;
  readonly refreshTokens: number;
  /** Entra-signed assertions for the federated client_credentials scenario (with `entra` only). */
  readonly assertions: number;
}

export interface FixtureOptions {
  /** The push receiver of the team's one subscription (bench/receiver.ts); none when undefined. */
  readonly receiverUrl?: string;
  /** The Entra stand-in whose assertions the team's service client trusts; none when undefined. */
  readonly entra?: EntraStandIn;
}

export interface ThroughputFixture {
  readonly accessToken: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Looked up by GET and filters; never written. */
  readonly readUsers: readonly LoadedUser[];
  /** Replaced and patched. */
  readonly writeUsers: readonly LoadedUser[];
  /** Added to groups. */
  readonly memberIds: readonly string[];
  readonly groupIds: readonly string[];
  /** Unused refresh tokens, each its own grant. */
  readonly refreshTokens: readonly string[];
  /** A client bound to the team (client_credentials), and its secret. */
  readonly serviceClientId: string;
  readonly serviceClientSecret: string;
  /** Unused assertions the Entra stand-in signed for the service client (empty without one). */
  readonly assertions: readonly string[];
  /** The team's push subscription, when one was created. */
  readonly subscriptionId: string | undefined;
}

export const BENCH_DOMAIN = 'bench.example';
const BASE_URL = 'http://127.0.0.1';

/** Mints `count` refresh grants for the admin, a thousand a transaction (several at once on PostgreSQL). */
async function mintRefreshTokens(storage: Storage, grant: { teamId: string; userId: string; clientId: string }, count: number): Promise<string[]> {
  const lifetimes = { accessTokenTtl: 3600, refreshTokenTtl: 86_400 };
  const chunk = 1000;
  const parallel = storage.hooks.name === 'postgres' ? 4 : 1;
  const tokens: string[] = [];
  const mintChunk = (n: number) =>
    storage.db.transaction().execute(async (trx) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        const issued = await issueGrant(trx, systemClock, lifetimes, { ...grant, scope: ['read', 'write'], withRefresh: true });
        out.push(issued.refreshToken!);
      }
      return out;
    });
  for (let done = 0; done < count; ) {
    const batch: Promise<string[]>[] = [];
    for (let p = 0; p < parallel && done < count; p++) {
      const n = Math.min(chunk, count - done);
      done += n;
      batch.push(mintChunk(n));
    }
    for (const minted of await Promise.all(batch)) tokens.push(...minted);
  }
  return tokens;
}

/** Signs `count` Entra assertions for `audience`, a hundred at a time (signing runs off the main thread). */
async function signAssertions(entra: EntraStandIn, audience: string, count: number): Promise<string[]> {
  const out: string[] = [];
  while (out.length < count) {
    const n = Math.min(100, count - out.length);
    out.push(...(await Promise.all(Array.from({ length: n }, () => entra.assertion({ audience })))));
  }
  return out;
}

export async function seedThroughputFixture(storage: Storage, sizes: FixtureSizes, options: FixtureOptions = {}): Promise<ThroughputFixture> {
  const deps: AdminDeps = { storage, clock: systemClock, baseUrl: BASE_URL };
  const team = await createTeam(deps, 'bench');
  const adminName = `admin@${BENCH_DOMAIN}`;
  const admin = await createTeamUser(deps, team.name, adminName, { password: randomBytes(12).toString('base64url'), admin: true });
  const client = await createClient(deps, { name: 'bench', redirectUris: ['http://127.0.0.1/callback'] });
  const access = await issueToken(deps, team.name, adminName, { scope: ['read', 'write'], ttlSeconds: 86_400 });

  const readUsers = (await loadUsers(storage, team, { naming: { prefix: 'read', domain: BENCH_DOMAIN }, count: sizes.readUsers, collect: true })).users;
  const writeUsers = (await loadUsers(storage, team, { naming: { prefix: 'write', domain: BENCH_DOMAIN }, count: sizes.writeUsers, collect: true })).users;
  const memberIds = (await loadUsers(storage, team, { naming: { prefix: 'member', domain: BENCH_DOMAIN }, count: sizes.memberUsers })).ids;
  const groupIds: string[] = [];
  for (let g = 0; g < sizes.groups; g++) {
    groupIds.push(await loadGroup(storage, team, `bench group ${String(g).padStart(2, '0')}`, []));
  }
  // Last, so that it starts at the end of the seeded feed: it receives what the scenarios write.
  // The bench's receiver listens on loopback (bench/receiver.ts), which only an allow list admits.
  const receivers = new ReceiverPolicy([{ kind: 'network', address: '127.0.0.1', prefix: 32, family: 4 }]);
  const subscription = options.receiverUrl === undefined ? undefined : (await createSubscription({ ...deps, receivers }, team, { method: 'push', url: options.receiverUrl })).subscription;
  const refreshTokens = await mintRefreshTokens(storage, { teamId: team.id, userId: String(admin.id), clientId: client.client_id }, sizes.refreshTokens);
  const service = await createClient(deps, { name: 'bench service', redirectUris: [], team: team.name });
  let assertions: string[] = [];
  if (options.entra !== undefined) {
    // Keys from the issuer's OpenID configuration, as for Entra; the server fetches them on the first assertion.
    await addFederation(deps, service.client_id, { issuer: options.entra.issuer, subject: options.entra.objectId });
    assertions = await signAssertions(options.entra, service.client_id, sizes.assertions);
  }
  return {
    accessToken: access.token,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    readUsers,
    writeUsers,
    memberIds,
    groupIds,
    refreshTokens,
    serviceClientId: service.client_id,
    serviceClientSecret: service.client_secret,
    assertions,
    subscriptionId: subscription?.id,
  };
}
