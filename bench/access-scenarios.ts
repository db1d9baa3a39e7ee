/**
 * The effective-access scenarios of `npm run bench:scale` (issue 31 item 7): a user's effective
 * access (`GET /v2/access/users/{id}`, members of the big group, which is mapped to a role and an
 * entitlement), "who holds this role" first page of 100 (`GET /v2/access/roles/{role}/users`, the
 * role mapped from the big group plus direct holders: one user in 1,296), and a group mapped to a
 * role through the mapping domain (src/access/mappings.ts `mapGroup`, as the admin API's
 * `POST /v2/admin/Catalog/mappings` and the CLI run it: one transaction with its access_mappings
 * row, its audit row and its feed event, nothing per member), timed in this process against the
 * bench database, each mapping followed by an untimed `unmapGroup`.
 *
 * `loadAccess` seeds the catalog, the mappings and the direct grants once per database (a kept
 * database reuses them).
 */
import type { Request } from 'autocannon';
import { sql } from 'kysely';
import { mapGroup, unmapGroup } from '../src/access/mappings.ts';
import { CLI_ACTOR } from '../src/audit/events.ts';
import { iso, systemClock } from '../src/clock.ts';
import type { Storage } from '../src/storage/connect.ts';
import { catalogChanged, upsertCatalogEntry, upsertCatalogType } from '../src/storage/repos/catalog.ts';
import type { TeamRow } from '../src/storage/repos/teams.ts';
import { summarize } from './load.ts';
import type { Measurement } from './load.ts';
import type { ScaleFixture, ScaleScenario } from './scale-scenarios.ts';

export const ACCESS_SCENARIO_NAMES = {
  userAccess: 'GET /v2/access/users/{id} (effective access of one user)',
  holdersFirst: 'GET /v2/access/roles/{role}/users first page of 100',
  mapGroup: 'access mapping added to the big group by mapGroup (row, audit row and event; in process)',
} as const;

/** The role the big group is mapped to (plus direct holders). */
export const BENCH_ROLE = 'bench-admin';
/** The role the mapping scenario maps to the big group and unmaps again. */
const TOGGLED_ROLE = 'bench-auditor';
const TYPE = { name: 'License', endpoint: '/Licenses' };
const ENTITLEMENT = 'bench-e5';

/**
 * The catalog (roles bench-admin and bench-auditor, type License with bench-e5), the big group
 * mapped to bench-admin and bench-e5, and bench-admin granted directly to one user in 1,296 (ids
 * ending in "77": random characters, so spread over the id order). Nothing when loaded already.
 */
export async function loadAccess(storage: Storage, team: TeamRow, groupId: string): Promise<boolean> {
  const loaded = await storage.db.selectFrom('catalog_entries').select('value').where('team_id', '=', team.id).where('kind', '=', 'role').where('value', '=', BENCH_ROLE).executeTakeFirst();
  if (loaded) return false;
  const at = iso(systemClock);
  await storage.db.transaction().execute(async (trx) => {
    for (const value of [BENCH_ROLE, TOGGLED_ROLE]) {
      await upsertCatalogEntry(trx, { team_id: team.id, kind: 'role', type_key: '', value, display_name: value, description: null, created_at: at, updated_at: at });
    }
    await upsertCatalogType(trx, { team_id: team.id, name: TYPE.name, name_key: TYPE.name.toLowerCase(), endpoint: TYPE.endpoint, endpoint_key: TYPE.endpoint.toLowerCase(), description: null, required: 0, multi_valued: 1, created_at: at, updated_at: at });
    await upsertCatalogEntry(trx, { team_id: team.id, kind: 'entitlement', type_key: TYPE.name.toLowerCase(), value: ENTITLEMENT, display_name: 'Bench E5', description: null, created_at: at, updated_at: at });
    await catalogChanged(trx, team.id);
    await trx.insertInto('access_mappings').values([
      { team_id: team.id, kind: 'role', type_key: '', value: BENCH_ROLE, group_id: groupId, created_at: at },
      { team_id: team.id, kind: 'entitlement', type_key: TYPE.name.toLowerCase(), value: ENTITLEMENT, group_id: groupId, created_at: at },
    ]).execute();
    await sql`insert into user_grants (team_id, kind, value, type, user_id, is_primary)
      select team_id, 'role', ${BENCH_ROLE}, '', id, 0 from users where team_id = ${team.id} and id like '%77'`.execute(trx);
  });
  if (storage.hooks.name === 'postgres') await sql`VACUUM ANALYZE user_grants, access_mappings`.execute(storage.db);
  return true;
}

function varying(base: Request, next: (n: number) => { path: string }): Request {
  let n = 0;
  return { ...base, setupRequest: (request: Request) => ({ ...request, ...next(n++) }) };
}

export function accessScenarios(fixture: ScaleFixture): ScaleScenario[] {
  const bearer = { authorization: `Bearer ${fixture.accessToken}` };
  const members = fixture.memberIds;
  return [
    {
      name: ACCESS_SCENARIO_NAMES.userAccess,
      expectStatus: 200,
      probe: (_status, text) => {
        const body = JSON.parse(text) as { roles?: { value: string }[]; entitlements?: { value: string }[] };
        return body.roles?.some((r) => r.value === BENCH_ROLE) && body.entitlements?.some((e) => e.value === ENTITLEMENT) ? undefined : `the member holds neither ${BENCH_ROLE} nor ${ENTITLEMENT}: ${text.slice(0, 200)}`;
      },
      build: () => [varying({ method: 'GET', headers: bearer }, (n) => ({ path: `/v2/access/users/${members[(n * 7_919) % members.length]}` }))],
    },
    {
      name: ACCESS_SCENARIO_NAMES.holdersFirst,
      expectStatus: 200,
      probe: (_status, text) => {
        const body = JSON.parse(text) as { users?: { id: string }[]; nextCursor?: string };
        const expected = Math.min(100, members.length);
        return body.users?.length === expected && (members.length <= 100 || body.nextCursor !== undefined) ? undefined : `expected ${expected} holders and a next cursor, got ${String(body.users?.length)}`;
      },
      build: () => [{ method: 'GET', headers: bearer, path: `/v2/access/roles/${BENCH_ROLE}/users?count=100` }],
    },
  ];
}

/**
 * Maps TOGGLED_ROLE to the big group with `mapGroup` (timed), then unmaps it with `unmapGroup`
 * (untimed), for `seconds` (at least three mappings).
 */
export async function measureMapping(storage: Storage, team: TeamRow, groupId: string, seconds: number): Promise<Measurement> {
  const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
  const input = { group: groupId, kind: 'role', value: TOGGLED_ROLE };
  const change = { actor: CLI_ACTOR };
  const latencies: number[] = [];
  const started = performance.now();
  // A mapping left by an interrupted run goes first (404 when there is none).
  await unmapGroup(deps, team, input, change).catch(() => undefined);
  while (latencies.length < 3 || performance.now() - started < seconds * 1000) {
    const t0 = performance.now();
    const { created } = await mapGroup(deps, team, input, change);
    latencies.push(performance.now() - t0);
    if (!created) throw new Error(`${TOGGLED_ROLE} was already mapped to the big group`);
    await unmapGroup(deps, team, input, change);
  }
  return summarize([{ latencies: Float64Array.from(latencies), errors: 0, unexpected: {}, seconds: (performance.now() - started) / 1000, stoppedEarly: false }]);
}
