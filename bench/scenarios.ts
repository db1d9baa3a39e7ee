/**
 * The throughput scenarios of `npm run bench`, as autocannon requests. Each scenario builds, per
 * server, a request whose `setupRequest` varies what must vary (ids spread over a pool, unique
 * userNames for creates and replaces, a fresh membership pair for every group PATCH, an unused
 * refresh token for every refresh grant, an unused Entra assertion for every federated
 * client_credentials grant). The counters live in the closure of one build, never at module
 * level. The reference server gets the same requests, except that it is handed a dummy refresh
 * token and a dummy assertion, so it does not use up the pools Rollcall needs.
 */
import type { Request } from 'autocannon';
import { PATCH_OP } from '../src/scim/schema/urns.ts';
import type { ThroughputFixture } from './fixture.ts';
import { BENCH_DOMAIN } from './fixture.ts';
import { userBody } from '../test/support/rows.ts';

export type Side = 'rollcall' | 'reference';

export interface ScenarioRun {
  readonly requests: Request[];
  /** True once the run must end early (its pool of one-time artifacts is nearly used up). */
  readonly shouldStop?: () => boolean;
}

/** A check of one Rollcall response before the measurement: undefined when fine, else the problem. */
export type Probe = (status: number, body: string) => string | undefined;

export interface Scenario {
  readonly name: string;
  readonly expectStatus: number;
  build(side: Side, connections: number): ScenarioRun;
  readonly probe?: Probe;
}

export const SCENARIO_NAMES = {
  getUser: 'GET /Users/{id}',
  filterEq: 'GET /Users?filter=userName eq',
  postUser: 'POST /Users',
  putUser: 'PUT /Users/{id}',
  patchUser: 'PATCH /Users/{id}',
  addMember: 'PATCH /Groups/{id} add member',
  getGroup: 'GET /Groups/{id}?excludedAttributes=members',
  refresh: 'POST /oauth/token refresh_token',
  clientSecret: 'POST /oauth/token client_credentials, secret',
  clientAssertion: 'POST /oauth/token client_credentials, Entra assertion',
} as const;

/** The JWT bearer client assertion type (RFC 7523 2.2), form-encoded. */
const JWT_BEARER = encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');

const SCIM = '/v2/scim';

const pick = <T>(pool: readonly T[], n: number): T => pool[n % pool.length]!;

/** A request whose path and body come from `next(n)` for the n-th request of this build. */
function varying(base: Request, next: (n: number) => { path: string; body?: string }): Request {
  let n = 0;
  return {
    ...base,
    setupRequest: (request: Request) => ({ ...request, ...next(n++) }),
  };
}

const jsonBody = (value: unknown): string => JSON.stringify(value);

const accessTokenIssued: Probe = (_status, body) => (typeof (JSON.parse(body) as { access_token?: unknown }).access_token === 'string' ? undefined : 'no access_token');

const totalResultsIs = (expected: number): Probe => (_status, body) => {
  const total = (JSON.parse(body) as { totalResults?: unknown }).totalResults;
  return total === expected ? undefined : `totalResults is ${String(total)}, expected ${expected}`;
};

export function throughputScenarios(fixture: ThroughputFixture): Scenario[] {
  const bearer = { authorization: `Bearer ${fixture.accessToken}` };
  const scimWrite = { ...bearer, 'content-type': 'application/scim+json' };
  const basicOf = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  const basic = basicOf(fixture.clientId, fixture.clientSecret);
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const tag = () => Math.random().toString(36).slice(2, 8);

  return [
    {
      name: SCENARIO_NAMES.getUser,
      expectStatus: 200,
      build: () => ({
        requests: [varying({ method: 'GET', headers: bearer }, (n) => ({ path: `${SCIM}/Users/${pick(fixture.readUsers, n).id}` }))],
      }),
    },
    {
      name: SCENARIO_NAMES.filterEq,
      expectStatus: 200,
      probe: totalResultsIs(1),
      build: () => ({
        requests: [
          varying({ method: 'GET', headers: bearer }, (n) => ({
            path: `${SCIM}/Users?filter=${encodeURIComponent(`userName eq "${pick(fixture.readUsers, n).userName}"`)}`,
          })),
        ],
      }),
    },
    {
      name: SCENARIO_NAMES.postUser,
      expectStatus: 201,
      build: () => {
        const naming = { prefix: `post${tag()}-`, domain: BENCH_DOMAIN };
        return { requests: [varying({ method: 'POST', headers: scimWrite, path: `${SCIM}/Users` }, (n) => ({ path: `${SCIM}/Users`, body: jsonBody(userBody(naming, n)) }))] };
      },
    },
    {
      name: SCENARIO_NAMES.putUser,
      expectStatus: 200,
      build: () => {
        // Every replace renames its user to a userName never used before.
        const naming = { prefix: `put${tag()}-`, domain: BENCH_DOMAIN };
        return {
          requests: [
            varying({ method: 'PUT', headers: scimWrite }, (n) => ({
              path: `${SCIM}/Users/${pick(fixture.writeUsers, n).id}`,
              body: jsonBody(userBody(naming, n)),
            })),
          ],
        };
      },
    },
    {
      name: SCENARIO_NAMES.patchUser,
      expectStatus: 200,
      build: () => ({
        requests: [
          varying({ method: 'PATCH', headers: scimWrite }, (n) => ({
            path: `${SCIM}/Users/${pick(fixture.writeUsers, n).id}`,
            body: jsonBody({
              schemas: [PATCH_OP],
              Operations: [
                { op: 'replace', path: 'displayName', value: `Patched ${n}` },
                { op: 'replace', path: 'title', value: `Title ${n % 97}` },
              ],
            }),
          })),
        ],
      }),
    },
    {
      name: SCENARIO_NAMES.addMember,
      expectStatus: 204,
      build: () => ({
        requests: [
          // Request n adds member n mod M to group (n div M) mod G: a new membership each time
          // until M x G requests have run.
          varying({ method: 'PATCH', headers: scimWrite }, (n) => ({
            path: `${SCIM}/Groups/${pick(fixture.groupIds, Math.floor(n / fixture.memberIds.length))}`,
            body: jsonBody({ schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: pick(fixture.memberIds, n) }] }] }),
          })),
        ],
      }),
    },
    {
      name: SCENARIO_NAMES.getGroup,
      expectStatus: 200,
      probe: (_status, body) => ('members' in (JSON.parse(body) as object) ? 'members were returned' : undefined),
      build: () => ({
        requests: [
          varying({ method: 'GET', headers: bearer }, (n) => ({ path: `${SCIM}/Groups/${pick(fixture.groupIds, n)}?excludedAttributes=members` })),
        ],
      }),
    },
    {
      name: SCENARIO_NAMES.refresh,
      expectStatus: 200,
      probe: (_status, body) => (typeof (JSON.parse(body) as { refresh_token?: unknown }).refresh_token === 'string' ? undefined : 'no refresh_token'),
      build: (side, connections) => {
        const pool = side === 'rollcall' ? fixture.refreshTokens : [`rc_rt_${'x'.repeat(43)}`];
        let next = 0;
        const headers = { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' };
        return {
          requests: [
            {
              method: 'POST',
              path: '/oauth/token',
              headers,
              setupRequest: (request: Request) => {
                const token = side === 'rollcall' ? pool[next++] : pool[0];
                // Past the end of the pool a request would replay a token; the run stops first.
                return { ...request, body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(token ?? 'exhausted')}` };
              },
            },
          ],
          // Stop while every connection still has an unused token for its last request.
          ...(side === 'rollcall' ? { shouldStop: () => pool.length - next < connections * 2 } : {}),
        };
      },
    },
    {
      name: SCENARIO_NAMES.clientSecret,
      expectStatus: 200,
      probe: accessTokenIssued,
      build: () => ({
        requests: [{ method: 'POST', path: '/oauth/token', headers: { authorization: basicOf(fixture.serviceClientId, fixture.serviceClientSecret), ...form }, body: 'grant_type=client_credentials' }],
      }),
    },
    {
      name: SCENARIO_NAMES.clientAssertion,
      expectStatus: 200,
      probe: accessTokenIssued,
      build: (side, connections) => {
        // The same length as Entra's, for the reference; Rollcall gets each assertion once.
        const pool = side === 'rollcall' ? fixture.assertions : [`eyJ${'x'.repeat((fixture.assertions[0]?.length ?? 1200) - 3)}`];
        let next = 0;
        const prefix = `grant_type=client_credentials&client_id=${encodeURIComponent(fixture.serviceClientId)}&client_assertion_type=${JWT_BEARER}&client_assertion=`;
        return {
          requests: [
            {
              method: 'POST',
              path: '/oauth/token',
              headers: form,
              setupRequest: (request: Request) => ({ ...request, body: `${prefix}${(side === 'rollcall' ? pool[next++] : pool[0]) ?? 'exhausted'}` }),
            },
          ],
          ...(side === 'rollcall' ? { shouldStop: () => pool.length - next < connections * 2 } : {}),
        };
      },
    },
  ];
}
