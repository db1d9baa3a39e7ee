/**
 * The benchmarks cannot rot (issue: CI runs a short smoke version of each): `npm run bench --
 * --smoke` and `npm run bench:scale -- --smoke` run end to end on SQLite, exit 0, and print their
 * tables with a row for every scenario and no request errors. Numbers are not judged here: the
 * targets are reported by the benchmarks, never asserted.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CURSOR_SCENARIO_NAMES, SCALE_SCENARIO_NAMES } from '../../bench/scale-scenarios.ts';
import { SCENARIO_NAMES } from '../../bench/scenarios.ts';
import { BULK_SCENARIO_NAMES } from '../../bench/bulk.ts';
import { DELTA_SCENARIO_NAMES } from '../../bench/delta.ts';

const BENCH = join(import.meta.dirname, '../../bench');

function runBench(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(BENCH, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The cells of the first table row whose first cell starts with `scenario`. */
function rowOf(stdout: string, scenario: string): string[] | undefined {
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells[0]?.startsWith(scenario)) return cells;
  }
  return undefined;
}

function assertTable(stdout: string, scenarios: readonly string[], errorsColumn: number): void {
  for (const scenario of scenarios) {
    const cells = rowOf(stdout, scenario);
    assert.ok(cells, `no table row for "${scenario}" in:\n${stdout}`);
    assert.equal(cells[errorsColumn], '0', `"${scenario}" had request errors:\n${stdout}`);
  }
  assert.doesNotMatch(stdout, /^error: /m);
}

/** The Shared Signals benchmark's lines (bench/signals.ts), whatever the figures. */
function assertSignals(stdout: string): void {
  assert.match(stdout, /^Shared Signals \(SQLite\): deprovisioning latency, \d+ [\w-]+( signals)? at \d+\/s/m);
  const signals = stdout.slice(stdout.indexOf('Shared Signals (SQLite)'));
  assert.ok(rowOf(signals.split('\n').filter((l) => l.startsWith('|')).slice(2).join('\n'), '20'), `a latency row:\n${signals}`);
  assert.match(signals, /^target: deprovisioning p99 < 5 s \(SQLite\): (met|NOT met) \(p99 [\d,]+ ms\)$/m);
  assert.match(signals, /^Shared Signals \(SQLite\): delivery throughput: [\d,]+ SETs in [\d.]+ s = [\d,]+ SETs\/s/m);
}

// Bounded, but with room for a slow host: the first run took 70 s on an idle 2-core host here,
// and the bound is the three runs' together.
describe('benchmarks, smoke mode (CI)', { timeout: 900_000 }, () => {
  it('npm run bench -- --smoke: every throughput scenario measured on Rollcall and the reference, no errors', async () => {
    const run = await runBench('run.ts', ['--smoke']);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    // scenario | Rollcall req/s | p50 | p99 | reference req/s | ratio | CPU | ref CPU | CPU ratio | errors
    assertTable(run.stdout, Object.values(SCENARIO_NAMES), 9);
    assert.match(run.stdout, /Targets/);
    // Every scenario runs with the feed on and one push subscription delivering to a local receiver.
    assert.match(run.stdout, /^events: change feed on; one push subscription active \(\w+, every event\) delivering to http:\/\/127\.0\.0\.1:\d+\/events/m);
    const received = /^events: the push subscription received ([\d,]+) SETs during the run$/m.exec(run.stdout);
    assert.ok(received && Number(received[1]!.replaceAll(',', '')) > 0, `the subscription received nothing:\n${run.stdout}`);
    // Issue 10: the events benchmark follows (feed on vs off, push delivery).
    const events = run.stdout.slice(run.stdout.indexOf('Events: write throughput'));
    assert.ok(events.length > 0 && run.stdout.includes('Events: write throughput'), run.stdout);
    assertTable(events, ['POST /Users', 'PATCH /Users/{id}'], 5);
    assert.match(events, /Events: push delivery to a local receiver \(SQLite\): \d+ events in [\d.]+ s = [\d,]+ events\/s/);
    // Issue 32: the Bulk benchmark follows (users by Bulk vs single POSTs, memberships by Bulk vs single PATCHes).
    const bulk = run.stdout.slice(run.stdout.indexOf('Bulk: '));
    assert.ok(run.stdout.includes('Bulk: '), run.stdout);
    // scenario | units | requests | wall s | units/s | CPU µs/unit | speed vs alone | CPU vs alone | errors
    assertTable(bulk, Object.values(BULK_SCENARIO_NAMES), 8);
    assert.match(bulk, /^Bulk vs single POSTs, best of each \(SQLite\): speed [\d.]+x, CPU per user [\d.]+x less/m);
    // Then the event loop during a Bulk at both limits (bench/bulk-loop.ts): its verdict line, whatever the figure.
    assert.match(run.stdout, /^target: largest gap [^:]+: (met|NOT met) \(largest [\d.,]+ ms\)$/m);
    // Issue 33: the Shared Signals benchmark closes the run (its latency verdict and its throughput).
    assertSignals(run.stdout);
    // Issue 33: the delta query benchmark follows (a page of 100 changes, the first page of a whole-feed delta,
    // a page walking its bound over superseded changes, an ordinary list page for reference).
    const delta = run.stdout.slice(run.stdout.indexOf('Delta query (issue 33)'));
    assert.ok(run.stdout.includes('Delta query (issue 33)'), run.stdout);
    // scenario | requests | req/s | p50 | p99 | max | errors
    assertTable(delta, Object.values(DELTA_SCENARIO_NAMES), 6);
    assert.match(delta, /^target: delta page of 100 changes at [\d,]+ users, p99 < \d+ ms: (met|NOT met) \([\d.,]+ ms\)$/m);
  });

  it('npm run bench -- --smoke --only signals: deprovisioning latency p50/p99 with its verdict, and SSF delivery throughput', async () => {
    const run = await runBench('run.ts', ['--smoke', '--only', 'signals']);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.doesNotMatch(run.stdout, /Events: write throughput|Bulk: /, 'the other benchmarks are skipped');
    assertSignals(run.stdout);
  });

  it('npm run bench:scale -- --smoke: every scale scenario (cursor pages too) measured with p50/p99, peak RSS reported, no errors', async () => {
    const run = await runBench('scale.ts', ['--smoke']);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    // scenario | requests | req/s | p50 | p99 | max | errors
    assertTable(run.stdout, [...Object.values(SCALE_SCENARIO_NAMES), ...Object.values(CURSOR_SCENARIO_NAMES)], 6);
    assert.match(run.stdout, /any cursor page p99 +\| +<= 20 ms \| +[\d.,]+ ms \| (met|MISSED)/, 'the cursor target is measured');
    assert.match(run.stdout, /server peak RSS: \d+ MB/);
  });
});
