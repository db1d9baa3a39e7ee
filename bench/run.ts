/**
 * `npm run bench`: Rollcall's throughput against a reference server, measured in one run on one
 * machine. Seeds a fresh database (SQLite by default, `--postgres URL` for a fresh schema there),
 * starts Rollcall (`--instances N` processes on PostgreSQL) and as many reference processes, then
 * drives every scenario with autocannon at 32 connections: a warm-up, then alternating slices of
 * Rollcall and the reference, so both meet the same machine at nearly the same moments. Prints one
 * table (req/s, p50/p99, the ratio Rollcall / reference, server CPU time per request and its
 * ratio, which a busy machine disturbs less than req/s, errors) and the targets; exits 1 when any
 * request failed or a probe found a wrong answer. `--smoke` is the seconds-long version CI runs.
 * The client_credentials scenarios authenticate with a secret, and with assertions signed by a
 * stand-in for Entra ID (test/support/entra-standin.ts) that serves its keys from this process on
 * loopback (the server's ALLOW_RECEIVERS admits it); the server fetches them on the first
 * assertion and then works from its cache.
 * The change feed is on (it always is) and the team has one active push subscription whose
 * receiver (bench/receiver.ts, in this process, answering 202) counts the SETs delivered, so
 * every scenario pays what a team with a live subscription pays.
 * Then the events benchmark (bench/events.ts): write throughput with the change feed on vs off,
 * and push delivery throughput; then the Bulk benchmark (bench/bulk.ts): users created by Bulk
 * against single POSTs, memberships added by Bulk against single PATCHes.
 * Then the Shared Signals benchmark (bench/signals.ts): deactivation-to-SET latency p50/p99 against
 * the 5 s promise, and SSF delivery throughput.
 * `--only bulk` (or `--only events`, `--only signals`) runs that benchmark alone: no throughput scenario matches it.
 * Flags: --duration S, --rounds N, --warmup S, --connections N, --only TEXT, --cpu-prof DIR.
 */
import { availableParallelism, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createBenchDatabase } from './database.ts';
import { runEventsBench } from './events.ts';
import { runBulkBench } from './bulk.ts';
import { runBulkLoopBench } from './bulk-loop.ts';
import { runSignalsBench } from './signals.ts';
import { seedThroughputFixture } from './fixture.ts';
import type { FixtureSizes } from './fixture.ts';
import { drive, probeOnce, summarize } from './load.ts';
import type { Measurement, Slice } from './load.ts';
import { Servers } from './processes.ts';
import { startReceiver } from './receiver.ts';
import type { ServerProcess } from './processes.ts';
import { SCENARIO_NAMES, throughputScenarios } from './scenarios.ts';
import { EntraStandIn } from '../test/support/entra-standin.ts';
import type { Scenario } from './scenarios.ts';
import { ratioTargetsTable } from './targets.ts';
import { count, ms, rate, ratio, renderTable } from './table.ts';

interface RunOptions {
  readonly smoke: boolean;
  readonly postgres: string | undefined;
  readonly instances: number;
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** Alternating slices per side that `seconds` is split into. */
  readonly rounds: number;
  readonly only: string | undefined;
  readonly cpuProfDir: string | undefined;
}

/** Refresh tokens used per second of Rollcall load, at most (sizes the pool; the run stops early if it runs dry). */
const REFRESH_RATE_CEILING = 6000;
/** Federated client_credentials grants per second, at most (sizes the pool of signed assertions likewise). */
const ASSERTION_RATE_CEILING = 3000;

function parseOptions(argv: readonly string[]): RunOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      smoke: { type: 'boolean', default: false },
      postgres: { type: 'string' },
      instances: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
    },
  });
  const number = (name: string, raw: string, min: number): number => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got "${raw}"`);
    return n;
  };
  const smoke = values.smoke === true;
  const instances = number('instances', values.instances, 1);
  if (instances > 1 && values.postgres === undefined) throw new Error('--instances > 1 needs --postgres: one server per SQLite file');
  return {
    smoke,
    postgres: values.postgres,
    instances: Math.floor(instances),
    connections: Math.floor(number('connections', values.connections, 1)),
    seconds: number('duration', values.duration ?? (smoke ? '1' : '10'), 0.1),
    warmupSeconds: number('warmup', values.warmup ?? (smoke ? '0.25' : '2'), 0),
    rounds: Math.floor(number('rounds', values.rounds ?? (smoke ? '1' : '5'), 1)),
    only: values.only,
    cpuProfDir: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
  };
}

const selected = (options: RunOptions, scenario: string): boolean => options.only === undefined || scenario.includes(options.only);

function sizesFor(options: RunOptions): FixtureSizes {
  const refreshSeconds = options.seconds + options.warmupSeconds;
  return {
    readUsers: options.smoke ? 200 : 1000,
    writeUsers: options.smoke ? 200 : 1000,
    memberUsers: options.smoke ? 500 : 5000,
    groups: options.smoke ? 4 : 20,
    refreshTokens: Math.ceil(refreshSeconds * REFRESH_RATE_CEILING * options.instances) + 1000,
    // Signing takes a third of a millisecond each: none when the scenario does not run.
    assertions: selected(options, SCENARIO_NAMES.clientAssertion) ? Math.ceil(refreshSeconds * ASSERTION_RATE_CEILING * options.instances) + 500 : 0,
  };
}

interface Row {
  readonly scenario: string;
  readonly rollcall: Measurement;
  readonly reference: Measurement;
  /** Server CPU time (user + system) per request, in microseconds: robust to a busy machine. */
  readonly rollcallCpu: number;
  readonly referenceCpu: number;
  readonly problem: string | undefined;
}

/**
 * One scenario on both sides: a probe of Rollcall's answer, a warm-up of each, then `rounds`
 * alternating slices (Rollcall, reference, Rollcall, ...) so that both meet the same background
 * load of a shared machine; the slices of each side are summed.
 */
async function measureScenario(scenario: Scenario, rollcall: readonly ServerProcess[], reference: readonly ServerProcess[], options: RunOptions): Promise<Row> {
  const sides = [
    { side: 'rollcall' as const, servers: rollcall },
    { side: 'reference' as const, servers: reference },
  ].map((s) => ({ ...s, urls: s.servers.map((p) => p.url), run: scenario.build(s.side, options.connections), slices: [] as Slice[], cpu: 0 }));
  type Side = (typeof sides)[number];
  const cpuOf = (s: Side) => s.servers.reduce((n, p) => n + (p.cpuSeconds() ?? Number.NaN), 0);
  const load = (s: Side, seconds: number) =>
    drive({
      urls: s.urls,
      connections: options.connections,
      seconds,
      requests: s.run.requests,
      expectStatus: scenario.expectStatus,
      ...(s.run.shouldStop ? { shouldStop: s.run.shouldStop } : {}),
    });
  const problem = await probeOnce(sides[0]!.urls[0]!, sides[0]!.run.requests[0]!, scenario.expectStatus, scenario.probe);
  if (options.warmupSeconds > 0) for (const s of sides) await load(s, options.warmupSeconds);
  const slice = options.seconds / options.rounds;
  for (let round = 0; round < options.rounds; round++) {
    for (const s of sides) {
      const before = cpuOf(s);
      s.slices.push(await load(s, slice));
      s.cpu += cpuOf(s) - before;
    }
    // A pool of one-time tokens ran dry: what was measured stands, the rest is skipped.
    if (sides.some((s) => s.slices.at(-1)?.stoppedEarly)) break;
  }
  const [ours, theirs] = sides.map((s) => {
    const m = summarize(s.slices);
    return { m, cpuPerRequest: (s.cpu / Math.max(1, m.ok)) * 1e6 };
  });
  return { scenario: scenario.name, rollcall: ours!.m, reference: theirs!.m, rollcallCpu: ours!.cpuPerRequest, referenceCpu: theirs!.cpuPerRequest, problem };
}

function resultsTable(rows: readonly Row[]): string {
  return renderTable(
    [
      { title: 'scenario', align: 'left' },
      { title: 'Rollcall req/s', align: 'right' },
      { title: 'p50 ms', align: 'right' },
      { title: 'p99 ms', align: 'right' },
      { title: 'reference req/s', align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'CPU µs/req', align: 'right' },
      { title: 'ref CPU µs/req', align: 'right' },
      { title: 'CPU ratio', align: 'right' },
      { title: 'errors', align: 'right' },
    ],
    rows.map((r) => [
      r.scenario + (r.rollcall.stoppedEarly ? ' (pool used up: ran ' + r.rollcall.seconds.toFixed(1) + ' s)' : ''),
      rate(r.rollcall.rps),
      ms(r.rollcall.p50),
      ms(r.rollcall.p99),
      rate(r.reference.rps),
      ratio(r.rollcall.rps / r.reference.rps),
      rate(r.rollcallCpu),
      rate(r.referenceCpu),
      ratio(r.referenceCpu / r.rollcallCpu),
      count(r.rollcall.errors + r.reference.errors),
    ]),
  );
}

function describeErrors(rows: readonly Row[]): string[] {
  const lines: string[] = [];
  for (const r of rows) {
    if (r.problem) lines.push(`${r.scenario}: probe failed: ${r.problem}`);
    for (const [side, m] of [['Rollcall', r.rollcall], ['reference', r.reference]] as const) {
      if (m.errors > 0) lines.push(`${r.scenario}: ${side}: ${m.errors} errors; unexpected statuses ${JSON.stringify(m.unexpected)}`);
    }
  }
  return lines;
}

export async function runThroughput(options: RunOptions): Promise<boolean> {
  const engine = options.postgres !== undefined ? 'PostgreSQL' : 'SQLite';
  const log = (line: string) => process.stderr.write(`${line}\n`);
  process.stdout.write(
    `Rollcall throughput benchmark (${options.smoke ? 'smoke' : 'full'}): ${engine}, ${options.instances} Rollcall process(es), ` +
      `${options.connections} connections, ${options.seconds} s per scenario and server (${options.rounds} alternating slices) after ${options.warmupSeconds} s warm-up\n` +
      `machine: ${availableParallelism()} CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, Node ${process.version}, ${process.platform}/${process.arch}\n\n`,
  );
  const started = performance.now();
  const database = await createBenchDatabase({ label: 'rps', ...(options.postgres !== undefined ? { postgres: options.postgres } : {}) });
  const servers = new Servers();
  const receiver = await startReceiver();
  const entra = await EntraStandIn.start(() => new Date());
  const stopOnSignal = () => {
    void servers.stopAll().finally(() => database.dispose().finally(() => process.exit(130)));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    const storage = await database.open();
    const sizes = sizesFor(options);
    log(`seeding: ${sizes.readUsers + sizes.writeUsers + sizes.memberUsers} users, ${sizes.groups} groups, ${sizes.refreshTokens} refresh tokens, ${sizes.assertions} Entra assertions`);
    const fixture = await seedThroughputFixture(storage, sizes, { receiverUrl: receiver.url, entra }).finally(() => storage.close());
    process.stdout.write(`events: change feed on; one push subscription active (${fixture.subscriptionId}, every event) delivering to ${receiver.url} (answers 202)\n`);
    const nodeArgs = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [];
    const rollcall: ServerProcess[] = [];
    const reference: ServerProcess[] = [];
    for (let i = 0; i < options.instances; i++) {
      rollcall.push(await servers.rollcall({ databaseUrl: database.url, nodeArgs, label: `rollcall-${i + 1}` }));
      reference.push(await servers.reference(`reference-${i + 1}`));
    }
    log(`servers: Rollcall ${rollcall.map((s) => s.url).join(', ')}; reference ${reference.map((s) => s.url).join(', ')} (setup ${((performance.now() - started) / 1000).toFixed(1)} s)`);

    const rows: Row[] = [];
    for (const scenario of throughputScenarios(fixture)) {
      if (!selected(options, scenario.name)) continue;
      const row = await measureScenario(scenario, rollcall, reference, options);
      log(`${scenario.name}: Rollcall ${rate(row.rollcall.rps)} req/s, reference ${rate(row.reference.rps)} req/s`);
      rows.push(row);
    }
    await servers.stopAll();

    process.stdout.write(`${resultsTable(rows)}\n\n`);
    process.stdout.write(`events: the push subscription received ${count(receiver.received())} SETs during the run\n\n`);
    const ratios = new Map(rows.map((r) => [r.scenario, r.rollcall.rps / r.reference.rps]));
    process.stdout.write(`Targets (SQLite; reported, not asserted${engine === 'SQLite' ? '' : '; this run is on PostgreSQL'}):\n\n${ratioTargetsTable(ratios)}\n\n`);
    const problems = describeErrors(rows);
    for (const p of problems) process.stdout.write(`error: ${p}\n`);
    process.stdout.write(`total time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return problems.length === 0;
  } finally {
    await servers.stopAll();
    await database.dispose();
    await receiver.close();
    await entra.close();
    process.removeListener('SIGINT', stopOnSignal);
    process.removeListener('SIGTERM', stopOnSignal);
  }
}

if (import.meta.main) {
  try {
    const options = parseOptions(process.argv.slice(2));
    // The throughput table is skipped when --only matches none of its scenarios (e.g. --only bulk).
    const throughput = Object.values(SCENARIO_NAMES).some((name) => selected(options, name));
    const ok = throughput ? await runThroughput(options) : true;
    // The change feed's cost to writes and push delivery throughput (bench/events.ts).
    if (options.only === undefined || 'events'.includes(options.only)) await runEventsBench({ smoke: options.smoke, postgres: options.postgres });
    // Users created and memberships added by Bulk against the same requests alone (bench/bulk.ts).
    const bulkOk = options.only === undefined || options.only === 'bulk' ? await runBulkBench({ smoke: options.smoke, postgres: options.postgres, cpuProfDir: options.cpuProfDir }) : true;
    // The event loop during a Bulk at both limits: the largest gap between /healthz answers (bench/bulk-loop.ts).
    const loopOk = options.only === undefined || options.only === 'bulk' ? await runBulkLoopBench({ smoke: options.smoke, postgres: options.postgres }) : true;
    // Deprovisioning by Shared Signals: commit-to-acceptance latency and SSF delivery throughput (bench/signals.ts).
    const signalsOk = options.only === undefined || options.only === 'signals' ? await runSignalsBench({ smoke: options.smoke, postgres: options.postgres }) : true;
    process.exit(ok && bulkOk && loopOk && signalsOk ? 0 : 1);
  } catch (error) {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  }
}
