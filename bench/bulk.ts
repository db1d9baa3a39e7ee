/**
 * Bulk benchmark (issue 32), run by `npm run bench` after the events benchmark (or alone:
 * `node bench/bulk.ts [--smoke] [--postgres URL] [--no-sqlite] [--rounds N] [--users N]
 * [--members N] [--cpu-prof DIR]`):
 *
 * 1. Users: the same users (the ~600-byte documents of test/support/rows.ts `userBody`) created
 *    by single POST /Users, sent as an identity provider sends them (one connection, one request
 *    at a time; and a pool of 8 keep-alive connections), against Bulk requests of 1,000 POST
 *    operations (one at a time; and 2 at once, the `bulk.concurrent` default). Each scenario on
 *    a team of its own; each round runs the four in another order, so a database that grows
 *    during the run favours none of them.
 * 2. Memberships: a team with `members` users (loaded as rows before the server starts, not
 *    measured) and empty groups; `members` memberships added by Bulk requests of 1,000 PATCH
 *    operations adding 1 member each, by Bulk PATCH operations adding 100 members each, and by
 *    the same 100-member PATCHes sent alone; the 1-member PATCH sent alone on a sample (a
 *    twentieth of `members`) added to a group already holding the rest, so the sample meets a
 *    group of the full size, compared per member.
 *
 * Rollcall runs as `rollcall serve` in a process of its own (bench/processes.ts); the load comes
 * from this process over node:http keep-alive connections (bench/bulk-client.ts). CPU µs per user (or member) is the
 * server process's CPU time (user + system, /proc) over the scenario, over the units it added;
 * SQLite's work is in it, PostgreSQL's is not. The team has no push subscription here: a write's
 * feed event is recorded as always, nothing is delivered.
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { createTeam, createTeamUser, issueToken } from '../src/admin.ts';
import type { AdminDeps } from '../src/admin.ts';
import { systemClock } from '../src/clock.ts';
import { PATCH_OP } from '../src/scim/schema/urns.ts';
import type { Storage } from '../src/storage/connect.ts';
import { loadUsers, userBody } from '../test/support/rows.ts';
import type { UserNaming } from '../test/support/rows.ts';
import { Client, runJobs, Tally } from './bulk-client.ts';
import { createBenchDatabase } from './database.ts';
import { Servers } from './processes.ts';
import type { ServerProcess } from './processes.ts';
import { loadGroup } from './scale-loader.ts';
import { count, ratio, rate, renderTable } from './table.ts';

const BULK_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
const BASE_URL = 'http://127.0.0.1';
const DOMAIN = 'bulk.example';

export interface BulkBenchSizes {
  /** Users created per users scenario. */
  readonly users: number;
  /** Operations per Bulk request. */
  readonly perRequest: number;
  /** Memberships added per membership scenario (and users loaded for them). */
  readonly members: number;
  /** Members added by one PATCH operation in the "100 members" scenarios. */
  readonly membersPerOperation: number;
  /** Connections of the single-POST pool. */
  readonly pool: number;
  /** Rounds of the four users scenarios. */
  readonly rounds: number;
}

export const FULL_SIZES: BulkBenchSizes = { users: 10_000, perRequest: 1_000, members: 100_000, membersPerOperation: 100, pool: 8, rounds: 1 };
export const SMOKE_SIZES: BulkBenchSizes = { users: 200, perRequest: 100, members: 1_000, membersPerOperation: 10, pool: 4, rounds: 1 };

/** Scenario names as the tables print them (the smoke test looks rows up by these). */
export const BULK_SCENARIO_NAMES = {
  singles1: 'POST /Users alone, 1 connection',
  singlesPool: 'POST /Users alone, pool',
  bulk1: 'Bulk POST, 1 request at a time',
  bulk2: 'Bulk POST, 2 requests at once',
  memberBulk1: 'Bulk PATCH, 1 member per operation',
  memberBulk100: 'Bulk PATCH, many members per operation',
  memberAlone100: 'PATCH alone, many members per request',
  memberAlone1: 'PATCH alone, 1 member per request (sample)',
} as const;

/** One measured scenario. */
interface Outcome {
  readonly name: string;
  /** Users created or members added. */
  readonly units: number;
  readonly requests: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** Requests or Bulk operations answered with another status than expected. */
  readonly errors: number;
  readonly firstError: string | undefined;
  /** Printed under the table. */
  readonly note?: string;
}

/** Times `work` and the server's CPU over it. */
async function measure(name: string, server: ServerProcess, units: number, requests: number, tally: Tally, work: () => Promise<void>): Promise<Outcome> {
  const cpuBefore = server.cpuSeconds() ?? Number.NaN;
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = (server.cpuSeconds() ?? Number.NaN) - cpuBefore;
  return { name, units, requests, seconds, cpuSeconds, errors: tally.errors, firstError: tally.first };
}

const chunks = <T>(items: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

interface TeamAccess {
  readonly token: string;
}

async function seedTeam(storage: Storage, name: string): Promise<TeamAccess & { team: Awaited<ReturnType<typeof createTeam>> }> {
  const deps: AdminDeps = { storage, clock: systemClock, baseUrl: BASE_URL };
  const team = await createTeam(deps, name);
  const owner = `owner@${DOMAIN}`;
  await createTeamUser(deps, name, owner, {});
  const token = (await issueToken(deps, name, owner, { scope: ['read', 'write'], ttlSeconds: 86_400 })).token;
  return { team, token };
}

async function singlePosts(name: string, server: ServerProcess, access: TeamAccess, naming: UserNaming, users: number, connections: number): Promise<Outcome> {
  const client = new Client(server.url, access.token, connections);
  const tally = new Tally();
  const jobs = Array.from({ length: users }, (_, n) => async () => tally.single(await client.send('POST', '/v2/scim/Users', userBody(naming, n)), 201));
  try {
    return await measure(name, server, users, users, tally, () => runJobs(jobs, connections));
  } finally {
    client.close();
  }
}

async function bulkPosts(name: string, server: ServerProcess, access: TeamAccess, naming: UserNaming, sizes: BulkBenchSizes, parallel: number): Promise<Outcome> {
  const client = new Client(server.url, access.token, parallel);
  const tally = new Tally();
  const numbers = Array.from({ length: sizes.users }, (_, n) => n);
  // Bodies built before the clock starts, as an identity provider has its batch ready.
  const bodies = chunks(numbers, sizes.perRequest).map((batch) => ({
    schemas: [BULK_REQUEST],
    Operations: batch.map((n) => ({ method: 'POST', path: '/Users', bulkId: `u${n}`, data: userBody(naming, n) })),
  }));
  const jobs = bodies.map((body) => async () => tally.bulk(await client.send('POST', '/v2/scim/Bulk', body), body.Operations.length, 201));
  try {
    return await measure(name, server, sizes.users, bodies.length, tally, () => runJobs(jobs, parallel));
  } finally {
    client.close();
  }
}

const addMembers = (ids: readonly string[]) => ({ schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }] });

/** Memberships added by Bulk PATCH operations of `perOperation` members each, one Bulk request at a time. */
async function bulkMembers(name: string, server: ServerProcess, access: TeamAccess, groupId: string, memberIds: readonly string[], perOperation: number, perRequest: number): Promise<Outcome> {
  const client = new Client(server.url, access.token, 1);
  const tally = new Tally();
  const operations = chunks(memberIds, perOperation).map((ids) => ({ method: 'PATCH', path: `/Groups/${groupId}`, data: addMembers(ids) }));
  const bodies = chunks(operations, perRequest).map((ops) => ({ schemas: [BULK_REQUEST], Operations: ops }));
  const took: number[] = [];
  const jobs = bodies.map((body) => async () => {
    const started = performance.now();
    tally.bulk(await client.send('POST', '/v2/scim/Bulk', body), body.Operations.length, 204);
    took.push((performance.now() - started) / 1000);
  });
  try {
    const outcome = await measure(name, server, memberIds.length, bodies.length, tally, () => runJobs(jobs, 1));
    // Whether an operation costs more as the group grows: the first and the last Bulk request.
    if (took.length > 1) return { ...outcome, note: `first Bulk request ${took[0]!.toFixed(2)} s, last ${took.at(-1)!.toFixed(2)} s` };
    return outcome;
  } finally {
    client.close();
  }
}

/** Memberships added by PATCH /Groups/{id} requests of `perRequest` members each, one at a time. */
async function singleMembers(name: string, server: ServerProcess, access: TeamAccess, groupId: string, memberIds: readonly string[], perRequest: number): Promise<Outcome> {
  const client = new Client(server.url, access.token, 1);
  const tally = new Tally();
  const jobs = chunks(memberIds, perRequest).map((ids) => async () => tally.single(await client.send('PATCH', `/v2/scim/Groups/${groupId}`, addMembers(ids)), 204));
  try {
    return await measure(name, server, memberIds.length, jobs.length, tally, () => runJobs(jobs, 1));
  } finally {
    client.close();
  }
}

const perSecond = (o: Outcome) => o.units / o.seconds;
const cpuMicros = (o: Outcome) => (o.cpuSeconds / o.units) * 1e6;

/** Sums the rounds of one scenario. */
function pooled(outcomes: readonly Outcome[]): Outcome {
  const first = outcomes[0]!;
  return {
    name: first.name,
    units: outcomes.reduce((n, o) => n + o.units, 0),
    requests: outcomes.reduce((n, o) => n + o.requests, 0),
    seconds: outcomes.reduce((n, o) => n + o.seconds, 0),
    cpuSeconds: outcomes.reduce((n, o) => n + o.cpuSeconds, 0),
    errors: outcomes.reduce((n, o) => n + o.errors, 0),
    firstError: outcomes.find((o) => o.firstError !== undefined)?.firstError,
  };
}

/** A table of outcomes; `baseline` names the row each ratio is taken against. */
function outcomeTable(unit: string, rows: readonly Outcome[], baseline: (o: Outcome) => Outcome | undefined): string {
  return renderTable(
    [
      { title: 'scenario', align: 'left' },
      { title: `${unit}s`, align: 'right' },
      { title: 'requests', align: 'right' },
      { title: 'wall s', align: 'right' },
      { title: `${unit}s/s`, align: 'right' },
      { title: `CPU µs/${unit}`, align: 'right' },
      { title: 'speed vs alone', align: 'right' },
      { title: 'CPU vs alone', align: 'right' },
      { title: 'errors', align: 'right' },
    ],
    rows.map((o) => {
      const base = baseline(o);
      return [
        o.name,
        count(o.units),
        count(o.requests),
        o.seconds.toFixed(2),
        rate(perSecond(o)),
        rate(cpuMicros(o)),
        base === undefined ? '' : ratio(perSecond(o) / perSecond(base)),
        base === undefined ? '' : ratio(cpuMicros(base) / cpuMicros(o)),
        count(o.errors),
      ];
    }),
  );
}

export interface BulkBenchOptions {
  readonly smoke: boolean;
  readonly postgres: string | undefined;
  readonly sqlite?: boolean;
  readonly sizes?: Partial<BulkBenchSizes>;
  readonly cpuProfDir?: string | undefined;
  /** Which parts run (both by default). */
  readonly parts?: { readonly users: boolean; readonly members: boolean };
  /** The users scenarios that run (all four by default), e.g. one alone to profile it. */
  readonly usersScenarios?: readonly UsersScenario[];
}

const USERS_SCENARIOS = ['singles1', 'bulk1', 'singlesPool', 'bulk2'] as const;
type UsersScenario = (typeof USERS_SCENARIOS)[number];
const isUsersScenario = (s: string): s is UsersScenario => (USERS_SCENARIOS as readonly string[]).includes(s);

async function runEngine(engine: string, postgres: string | undefined, sizes: BulkBenchSizes, options: BulkBenchOptions): Promise<boolean> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const parts = options.parts ?? { users: true, members: true };
  const database = await createBenchDatabase({ label: 'bulk', ...(postgres ? { postgres } : {}) });
  const servers = new Servers();
  const problems: string[] = [];
  try {
    // Everything seeded before the server starts: teams (one per users scenario and round), the
    // membership team's users and its groups (one of them already holding all but the sample).
    const storage = await database.open();
    const order = USERS_SCENARIOS.filter((key) => options.usersScenarios === undefined || options.usersScenarios.includes(key));
    const teams: Record<string, TeamAccess>[] = [];
    let members: { access: TeamAccess; ids: string[]; groups: string[]; sampleGroup: string } | undefined;
    try {
      if (parts.users) {
        for (let round = 0; round < sizes.rounds; round++) {
          const byScenario: Record<string, TeamAccess> = {};
          for (const key of order) byScenario[key] = await seedTeam(storage, `${key.toLowerCase()}-${round}`);
          teams.push(byScenario);
        }
      }
      if (parts.members) {
        const seeded = await seedTeam(storage, 'members');
        log(`bulk bench (${engine}): loading ${count(sizes.members)} users for the membership scenarios`);
        const ids = (await loadUsers(storage, seeded.team, { naming: { prefix: 'm', domain: DOMAIN }, count: sizes.members })).ids;
        const groups: string[] = [];
        for (let g = 0; g < 3; g++) groups.push(await loadGroup(storage, seeded.team, `bulk group ${g}`, []));
        const sample = Math.floor(sizes.members / 20);
        const sampleGroup = await loadGroup(storage, seeded.team, 'bulk group sample', ids.slice(0, sizes.members - sample));
        members = { access: seeded, ids, groups, sampleGroup };
      }
    } finally {
      await storage.close();
    }
    const nodeArgs = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [];
    const server = await servers.rollcall({ databaseUrl: database.url, nodeArgs, label: 'rollcall-bulk' });

    if (parts.users) {
      const results = new Map<string, Outcome[]>();
      for (let round = 0; round < sizes.rounds; round++) {
        // Each round in another order (rotated), so no scenario always meets the largest database.
        const rotated = [...order.slice(round % order.length), ...order.slice(0, round % order.length)];
        for (const key of rotated) {
          const access = teams[round]![key]!;
          const naming = { prefix: `${key.toLowerCase()}${round}-`, domain: DOMAIN };
          const name = BULK_SCENARIO_NAMES[key] + (key === 'singlesPool' ? ` of ${sizes.pool}` : '');
          const outcome =
            key === 'singles1' ? await singlePosts(name, server, access, naming, sizes.users, 1)
            : key === 'singlesPool' ? await singlePosts(name, server, access, naming, sizes.users, sizes.pool)
            : key === 'bulk1' ? await bulkPosts(name, server, access, naming, sizes, 1)
            : await bulkPosts(name, server, access, naming, sizes, 2);
          log(`bulk bench (${engine}) round ${round + 1}: ${name}: ${rate(perSecond(outcome))} users/s, ${rate(cpuMicros(outcome))} CPU µs/user, ${outcome.errors} errors`);
          results.set(key, [...(results.get(key) ?? []), outcome]);
        }
      }
      const rows = order.map((key) => pooled(results.get(key)!));
      for (const r of rows) if (r.errors > 0) problems.push(`${engine}: ${r.name}: ${r.errors} errors; first: ${r.firstError}`);
      if (order.length < USERS_SCENARIOS.length) {
        // Some scenarios only (a profile of one): their rows, no comparison.
        process.stdout.write(`\nBulk: ${count(sizes.users)} users created per scenario (${engine}; ${order.join(', ')} only)\n${outcomeTable('user', rows, () => undefined)}\n`);
      }
      const [singles1, bulk1, singlesPool, bulk2] = USERS_SCENARIOS.map((key) => (results.has(key) ? pooled(results.get(key)!) : undefined));
      if (singles1 && bulk1 && singlesPool && bulk2) {
        process.stdout.write(
          `\nBulk: ${count(sizes.users)} users created per scenario (${engine}; ${sizes.rounds} round(s); Bulk requests of ${count(sizes.perRequest)} POST operations; ratios against the single POSTs on as many connections: Bulk 1 at a time vs 1 connection, Bulk 2 at once vs the pool of ${sizes.pool})\n`,
        );
        process.stdout.write(`${outcomeTable('user', [singles1, singlesPool, bulk1, bulk2], (o) => (o === bulk1 ? singles1 : o === bulk2 ? singlesPool : undefined))}\n`);
        process.stdout.write(
          `Bulk vs single POSTs, best of each (${engine}): speed ${ratio(Math.max(perSecond(bulk1), perSecond(bulk2)) / Math.max(perSecond(singles1), perSecond(singlesPool)))}x, ` +
            `CPU per user ${ratio(Math.min(cpuMicros(singles1), cpuMicros(singlesPool)) / Math.min(cpuMicros(bulk1), cpuMicros(bulk2)))}x less (target: at least 2x faster)\n`,
        );
      }
    }

    if (members) {
      const { access, ids, groups, sampleGroup } = members;
      const per = sizes.membersPerOperation;
      const sample = Math.floor(sizes.members / 20);
      const rows: Outcome[] = [];
      const note = (o: Outcome) => {
        log(`bulk bench (${engine}): ${o.name}: ${rate(perSecond(o))} members/s, ${rate(cpuMicros(o))} CPU µs/member, ${o.errors} errors`);
        rows.push(o);
        if (o.errors > 0) problems.push(`${engine}: ${o.name}: ${o.errors} errors; first: ${o.firstError}`);
      };
      note(await bulkMembers(BULK_SCENARIO_NAMES.memberBulk1, server, access, groups[0]!, ids, 1, sizes.perRequest));
      note(await bulkMembers(`${BULK_SCENARIO_NAMES.memberBulk100} (${per})`, server, access, groups[1]!, ids, per, sizes.perRequest));
      note(await singleMembers(`${BULK_SCENARIO_NAMES.memberAlone100} (${per})`, server, access, groups[2]!, ids, per));
      note(await singleMembers(BULK_SCENARIO_NAMES.memberAlone1, server, access, sampleGroup, ids.slice(sizes.members - sample), 1));
      const [bulk1, bulk100, alone100, alone1] = rows;
      process.stdout.write(
        `\nBulk: ${count(sizes.members)} memberships added to one group per scenario, from empty to ${count(sizes.members)} members (${engine}; Bulk requests of up to ${count(sizes.perRequest)} PATCH operations, one at a time; ` +
          `the 1-member PATCH alone is a sample of ${count(sample)} added to a group already holding ${count(sizes.members - sample)}; ratios against the PATCHes alone adding as many members each)\n`,
      );
      process.stdout.write(`${outcomeTable('member', rows, (o) => (o === bulk1 ? alone1 : o === bulk100 ? alone100 : undefined))}\n`);
      for (const o of rows) if (o.note !== undefined) process.stdout.write(`${o.name}: ${o.note}\n`);
    }
  } finally {
    await servers.stopAll();
    await database.dispose();
  }
  for (const p of problems) process.stdout.write(`error: ${p}\n`);
  return problems.length === 0;
}

/** The Bulk benchmark on SQLite (unless `sqlite` is false) and on PostgreSQL when given; false when a request or operation failed. */
export async function runBulkBench(options: BulkBenchOptions): Promise<boolean> {
  const sizes: BulkBenchSizes = { ...(options.smoke ? SMOKE_SIZES : FULL_SIZES), ...options.sizes };
  const engines: [string, string | undefined][] = [...(options.sqlite === false ? [] : [['SQLite', undefined] as [string, undefined]]), ...(options.postgres ? [['PostgreSQL', options.postgres] as [string, string]] : [])];
  let ok = true;
  for (const [engine, postgres] of engines) ok = (await runEngine(engine, postgres, sizes, options)) && ok;
  return ok;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      postgres: { type: 'string' },
      'no-sqlite': { type: 'boolean', default: false },
      rounds: { type: 'string' },
      users: { type: 'string' },
      members: { type: 'string' },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
    },
  });
  const sizes: Partial<{ -readonly [K in keyof BulkBenchSizes]: number }> = {};
  if (values.rounds !== undefined) sizes.rounds = Number(values.rounds);
  if (values.users !== undefined) sizes.users = Number(values.users);
  if (values.members !== undefined) sizes.members = Number(values.members);
  // --only users | members | one users scenario (singles1, singlesPool, bulk1, bulk2; comma-separated).
  const only = values.only;
  const scenarios = only?.split(',').filter(isUsersScenario);
  const ok = await runBulkBench({
    smoke: values.smoke === true,
    postgres: values.postgres,
    sqlite: !values['no-sqlite'],
    sizes,
    cpuProfDir: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    parts: { users: only === undefined || only === 'users' || (scenarios?.length ?? 0) > 0, members: only === undefined || only === 'members' },
    ...(scenarios !== undefined && scenarios.length > 0 ? { usersScenarios: scenarios } : {}),
  });
  process.exit(ok ? 0 : 1);
}
