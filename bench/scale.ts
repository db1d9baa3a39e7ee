/**
 * `npm run bench:scale`: Rollcall at size. Loads one team of 1,000,000 users through the storage
 * layer (with a progress bar) and a group of 100,000 members, starts one Rollcall process on the
 * database, and measures each scale scenario at low concurrency (2 connections): p50/p99 per
 * scenario, then the server's peak resident memory, then the targets. The effective-access
 * scenarios (access-scenarios.ts) map the big group to a role and grant it directly to some
 * users; adding a mapping is timed in this process. `--smoke` loads 5,000
 * users and 1,000 members and runs a second per scenario (CI). Flags: --users N, --members N,
 * --connections N, --duration S, --warmup S, --only TEXT, --postgres URL (a fresh schema),
 * --database URL (reuse a database loaded by an earlier run with --keep; nothing is loaded when
 * it holds the scale team), --keep, --cpu-prof DIR. Exits 1 on any request error or failed probe.
 */
import { availableParallelism, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createTeam } from '../src/admin.ts';
import { systemClock } from '../src/clock.ts';
import { issueAccessToken } from '../src/oauth/tokens.ts';
import type { Storage } from '../src/storage/connect.ts';
import { teamByName } from '../src/storage/repos/teams.ts';
import { createBenchDatabase, existingBenchDatabase, keptDatabaseSecret } from './database.ts';
import type { BenchDatabase } from './database.ts';
import { drive, probeOnce, summarize } from './load.ts';
import type { Measurement } from './load.ts';
import { Servers } from './processes.ts';
import { progressBar } from './progress.ts';
import { loadBadges, loadGroup } from './scale-loader.ts';
import { loadUsers } from '../test/support/rows.ts';
import type { UserNaming } from '../test/support/rows.ts';
import { CURSOR_SCENARIO_NAMES, cursorPagingScenarios, FIRST_BYTE_SCENARIO, firstByte, scaleScenarios } from './scale-scenarios.ts';
import type { ScaleFixture, ScaleScenario } from './scale-scenarios.ts';
import { count, mebibytes, ms, rate, renderTable } from './table.ts';
import { ACCESS_SCENARIO_NAMES, accessScenarios, loadAccess, measureMapping } from './access-scenarios.ts';
import { scaleTargetsTable } from './targets.ts';

interface ScaleOptions {
  readonly smoke: boolean;
  readonly users: number;
  readonly members: number;
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly only: string | undefined;
  readonly postgres: string | undefined;
  readonly database: string | undefined;
  readonly keep: boolean;
  readonly cpuProfDir: string | undefined;
}

const TEAM = 'scale';
const GROUP = 'big group';
const NAMING: UserNaming = { prefix: 'user', domain: 'scale.example' };
/** Users outside the big group kept ready to be added: more than any run adds. */
const ADD_CANDIDATES = 200_000;

function parseOptions(argv: readonly string[]): ScaleOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      smoke: { type: 'boolean', default: false },
      users: { type: 'string' },
      members: { type: 'string' },
      connections: { type: 'string', default: '2' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      only: { type: 'string' },
      postgres: { type: 'string' },
      database: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
    },
  });
  const number = (name: string, raw: string, min: number): number => {
    const n = Number(raw.replace(/[_,]/g, ''));
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got "${raw}"`);
    return n;
  };
  const smoke = values.smoke === true;
  const users = Math.floor(number('users', values.users ?? (smoke ? '5000' : '1000000'), 200));
  const members = Math.floor(number('members', values.members ?? (smoke ? '1000' : '100000'), 1));
  if (members >= users) throw new Error('--members must be fewer than --users (some users stay outside the group to be added)');
  if (values.postgres !== undefined && values.database !== undefined) throw new Error('give --postgres (a fresh schema) or --database (reuse), not both');
  return {
    smoke,
    users,
    members,
    connections: Math.floor(number('connections', values.connections, 1)),
    seconds: number('duration', values.duration ?? (smoke ? '1' : '10'), 0.1),
    warmupSeconds: number('warmup', values.warmup ?? (smoke ? '0.25' : '1'), 0),
    only: values.only,
    postgres: values.postgres,
    database: values.database,
    keep: values.keep === true || values.database !== undefined,
    cpuProfDir: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
  };
}

/** Loads the scale team unless the database has it; returns how long loading took (0 if reused). */
async function ensureLoaded(storage: Storage, options: ScaleOptions): Promise<number> {
  if (await teamByName(storage.db, TEAM)) return 0;
  const started = performance.now();
  const team = await createTeam({ storage, clock: systemClock, baseUrl: 'http://127.0.0.1' }, TEAM);
  const { ids } = await loadUsers(storage, team, { naming: NAMING, count: options.users, progress: progressBar('users  ', options.users) });
  await loadGroup(storage, team, GROUP, ids.slice(0, options.members), progressBar('members', options.members));
  // PostgreSQL's autovacuum would vacuum and analyze tables this size soon after (the vacuum
  // sets the visibility map that index-only scans, such as an index page's offset walk, rely
  // on); SQLite never analyzes by itself.
  if (storage.hooks.name === 'postgres') await sql`VACUUM ANALYZE users, groups, group_members, team_counters`.execute(storage.db);
  return (performance.now() - started) / 1000;
}

/** What the scenarios address, read back from the database (so a reused one works too). */
async function readFixture(storage: Storage): Promise<ScaleFixture> {
  const team = await teamByName(storage.db, TEAM);
  if (!team) throw new Error(`no team "${TEAM}" in the database`);
  const group = await storage.db.selectFrom('groups').select('id').where('team_id', '=', team.id).where('display_name', '=', GROUP).executeTakeFirstOrThrow();
  const users = Number((await storage.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).where('team_id', '=', team.id).executeTakeFirstOrThrow()).n);
  const memberIds = (await storage.db.selectFrom('group_members').select('user_id').where('group_id', '=', group.id).orderBy('created_at').orderBy('user_id').execute()).map((r) => r.user_id);
  const members = new Set(memberIds);
  const newest = await storage.db
    .selectFrom('users')
    .select('id')
    .where('team_id', '=', team.id)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(ADD_CANDIDATES + members.size)
    .execute();
  const nonMemberIds = newest.map((r) => r.id).filter((id) => !members.has(id)).slice(0, ADD_CANDIDATES);
  const token = await issueAccessToken(storage.db, systemClock, { teamId: team.id, userId: null, clientId: null, scope: ['read', 'write'], ttlSeconds: 86_400 });
  return { accessToken: token.token, naming: NAMING, users, groupId: group.id, memberIds, nonMemberIds };
}

interface Row {
  readonly scenario: string;
  readonly m: Measurement;
  readonly problem: string | undefined;
  /** The server's peak RSS once the scenario has run (shows which one raised it). */
  readonly peakRss?: number | undefined;
}

function resultsTable(rows: readonly Row[]): string {
  return renderTable(
    [
      { title: 'scenario', align: 'left' },
      { title: 'requests', align: 'right' },
      { title: 'req/s', align: 'right' },
      { title: 'p50 ms', align: 'right' },
      { title: 'p99 ms', align: 'right' },
      { title: 'max ms', align: 'right' },
      { title: 'errors', align: 'right' },
      { title: 'peak RSS after', align: 'right' },
    ],
    rows.map((r) => [r.scenario, count(r.m.ok), rate(r.m.rps), ms(r.m.p50), ms(r.m.p99), ms(r.m.max), count(r.m.errors), mebibytes(r.peakRss)]),
  );
}

async function measure(url: string, scenario: ScaleScenario, options: ScaleOptions): Promise<Row> {
  const requests = scenario.build();
  const problem = await probeOnce(url, requests[0]!, scenario.expectStatus, scenario.probe);
  const common = { urls: [url], connections: options.connections, requests, expectStatus: scenario.expectStatus, timeoutSeconds: 120 };
  if (options.warmupSeconds > 0) await drive({ ...common, seconds: options.warmupSeconds });
  return { scenario: scenario.name, m: summarize([await drive({ ...common, seconds: options.seconds })]), problem };
}

export async function runScale(options: ScaleOptions): Promise<boolean> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started = performance.now();
  const database: BenchDatabase = options.database !== undefined
    ? existingBenchDatabase(options.database)
    : await createBenchDatabase({ label: 'scale', ...(options.postgres !== undefined ? { postgres: options.postgres } : {}) });
  process.stdout.write(
    `Rollcall scale benchmark (${options.smoke ? 'smoke' : 'full'}): ${database.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ` +
      `${count(options.users)} users, a group of ${count(options.members)}, ${options.connections} connections, ` +
      `${options.seconds} s per scenario after ${options.warmupSeconds} s warm-up\n` +
      `machine: ${availableParallelism()} CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, Node ${process.version}, ${process.platform}/${process.arch}\n\n`,
  );
  // A kept database is reopened by later runs: its servers' SECRET_KEY must not change (a
  // benchmark's throwaway key, derived from where the database is).
  const servers = new Servers(options.keep ? keptDatabaseSecret(database.url) : undefined);
  const stopOnSignal = () => {
    void servers.stopAll().finally(() => (options.keep ? Promise.resolve() : database.dispose()).finally(() => process.exit(130)));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    const storage = await database.open();
    let fixture: ScaleFixture;
    let loadSeconds: number;
    const selected = (name: string) => options.only === undefined || name.includes(options.only);
    // Measured in this process, on the loaded database (access-scenarios.ts measureMapping).
    let mapping: Row | undefined;
    try {
      loadSeconds = await ensureLoaded(storage, options);
      const team = await teamByName(storage.db, TEAM);
      const indexSeconds = team ? await loadBadges(storage, team, NAMING) : undefined;
      if (indexSeconds !== undefined) log(`extension registered, badge index built in ${indexSeconds.toFixed(1)} s`);
      fixture = await readFixture(storage);
      const scaleTeam = await teamByName(storage.db, TEAM);
      if (scaleTeam && (await loadAccess(storage, scaleTeam, fixture.groupId))) log('access catalog, the big group\'s mappings and direct grants loaded');
      if (scaleTeam && selected(ACCESS_SCENARIO_NAMES.mapGroup)) {
        mapping = { scenario: ACCESS_SCENARIO_NAMES.mapGroup, m: await measureMapping(storage, scaleTeam, fixture.groupId, options.seconds), problem: undefined };
        log(`${mapping.scenario}: p50 ${ms(mapping.m.p50)} ms, p99 ${ms(mapping.m.p99)} ms (${count(mapping.m.ok)} mappings)`);
      }
    } finally {
      await storage.close();
    }
    log(loadSeconds > 0 ? `loaded in ${loadSeconds.toFixed(1)} s` : `reusing ${database.url}: ${count(fixture.users)} users`);

    const server = await servers.rollcall({
      databaseUrl: database.url,
      nodeArgs: options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [],
    });
    const rssAtStart = server.peakRssBytes();
    // The cursor walk (16 s or more) only when a cursor scenario is measured.
    const walk = Object.values(CURSOR_SCENARIO_NAMES).some(selected);
    // The effective-access scenarios first: the big group's member PATCHes below take members out
    // of the group, and the access probe expects every member it asks for to hold the mapped role.
    const scenarios = [...accessScenarios(fixture), ...scaleScenarios(fixture), ...(walk ? await cursorPagingScenarios(fixture, server.url) : [])];
    const rows: Row[] = mapping ? [mapping] : [];
    for (const scenario of scenarios) {
      if (!selected(scenario.name)) continue;
      const row = { ...(await measure(server.url, scenario, options)), peakRss: server.peakRssBytes() };
      log(`${scenario.name}: p50 ${ms(row.m.p50)} ms, p99 ${ms(row.m.p99)} ms (${count(row.m.ok)} requests)`);
      rows.push(row);
    }
    if (selected(FIRST_BYTE_SCENARIO)) {
      const cpuBefore = server.cpuSeconds();
      const row = { scenario: FIRST_BYTE_SCENARIO, m: await firstByte(server.url, fixture, options.seconds), problem: undefined, peakRss: server.peakRssBytes() };
      const cpuAfter = server.cpuSeconds();
      // One request at a time: the server's CPU per request, which a loaded machine's waits do not inflate.
      const cpu = cpuBefore !== undefined && cpuAfter !== undefined && row.m.ok > 0 ? `, server CPU ${ms(((cpuAfter - cpuBefore) * 1000) / row.m.ok)} ms per GET` : '';
      log(`${FIRST_BYTE_SCENARIO}: p50 ${ms(row.m.p50)} ms, p99 ${ms(row.m.p99)} ms (${count(row.m.ok)} requests${cpu})`);
      rows.push(row);
    }
    const peakRss = server.peakRssBytes();
    await servers.stopAll();

    process.stdout.write(`${resultsTable(rows)}\n\n`);
    process.stdout.write(`server peak RSS: ${mebibytes(peakRss)} (after start-up: ${mebibytes(rssAtStart)})\n`);
    if (loadSeconds > 0) process.stdout.write(`load: ${count(fixture.users)} users and ${count(options.members)} memberships in ${loadSeconds.toFixed(1)} s\n`);
    process.stdout.write(`\nTargets (reported, not asserted):\n\n${scaleTargetsTable(new Map(rows.map((r) => [r.scenario, r.m.p99])), peakRss)}\n\n`);
    const problems = rows.flatMap((r) => [
      ...(r.problem ? [`${r.scenario}: probe failed: ${r.problem}`] : []),
      ...(r.m.errors > 0 ? [`${r.scenario}: ${r.m.errors} errors; unexpected statuses ${JSON.stringify(r.m.unexpected)}`] : []),
    ]);
    for (const p of problems) process.stdout.write(`error: ${p}\n`);
    if (options.keep) process.stdout.write(`database kept: ${database.url}\n`);
    process.stdout.write(`total time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return problems.length === 0;
  } finally {
    await servers.stopAll();
    if (!options.keep) await database.dispose();
    process.removeListener('SIGINT', stopOnSignal);
    process.removeListener('SIGTERM', stopOnSignal);
  }
}

if (import.meta.main) {
  try {
    const ok = await runScale(parseOptions(process.argv.slice(2)));
    process.exit(ok ? 0 : 1);
  } catch (error) {
    console.error(`bench:scale: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  }
}
