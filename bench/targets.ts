/**
 * The performance targets of the issue, as data, and their evaluation against a run. They are
 * reported (met / missed), never asserted: a noisy shared machine must not fail a build. Ratios
 * are Rollcall over the reference server measured in the same run; scale targets are absolute.
 */
import { SCENARIO_NAMES } from './scenarios.ts';
import { FIRST_BYTE_SCENARIO, SCALE_SCENARIO_NAMES } from './scale-scenarios.ts';
import { mebibytes, ms, ratio, renderTable } from './table.ts';

export interface RatioTarget {
  readonly scenario: string;
  readonly minRatio: number;
}

/** SQLite targets: Rollcall req/s over reference req/s. */
export const RATIO_TARGETS: readonly RatioTarget[] = [
  { scenario: SCENARIO_NAMES.getUser, minRatio: 0.4 },
  { scenario: SCENARIO_NAMES.filterEq, minRatio: 0.35 },
  { scenario: SCENARIO_NAMES.postUser, minRatio: 0.15 },
  { scenario: SCENARIO_NAMES.addMember, minRatio: 0.15 },
];

export interface LatencyTarget {
  readonly label: string;
  readonly maxP99: number;
  /** The scenarios it judges; the worst p99 among them counts. None measured: "not measured". */
  matches(scenario: string): boolean;
}

const oneOf = (...names: string[]) => (scenario: string): boolean => names.includes(scenario);

/** Scale targets: p99 in milliseconds. */
export const LATENCY_TARGETS: readonly LatencyTarget[] = [
  { label: '`userName eq` p99', maxP99: 5, matches: oneOf(SCALE_SCENARIO_NAMES.userNameEq) },
  // Set for PostgreSQL (pg_trgm); SQLite is measured against it too.
  { label: '`userName co` / `sw` / `ew` p99', maxP99: 200, matches: oneOf(SCALE_SCENARIO_NAMES.co, SCALE_SCENARIO_NAMES.sw, SCALE_SCENARIO_NAMES.ew) },
  // An extension attribute declared uniqueness: server (an expression index).
  { label: 'extension attribute `eq` p99', maxP99: 50, matches: oneOf(SCALE_SCENARIO_NAMES.extensionEq) },
  // Filled by the scenarios of cursorPagingScenarios (scale-scenarios.ts), named "... (cursor)".
  { label: 'any cursor page p99', maxP99: 20, matches: (s) => s.includes('(cursor)') },
  { label: 'big-group member change p99', maxP99: 10, matches: oneOf(SCALE_SCENARIO_NAMES.addMember, SCALE_SCENARIO_NAMES.removeMember) },
  { label: 'big-group GET excludedAttributes=members p99', maxP99: 5, matches: oneOf(SCALE_SCENARIO_NAMES.getGroupExcluded) },
  { label: 'any index page of 100 p99', maxP99: 100, matches: (s) => s.includes('(index)') },
  { label: 'big-group GET with its members p99 (complete)', maxP99: 1000, matches: oneOf(SCALE_SCENARIO_NAMES.getGroupFull) },
  { label: 'big-group GET with its members p99 (first byte)', maxP99: 100, matches: oneOf(FIRST_BYTE_SCENARIO) },
];

export const PEAK_RSS_TARGET_BYTES = 300 * 1024 * 1024;

const verdict = (met: boolean | undefined): string => (met === undefined ? 'not measured' : met ? 'met' : 'MISSED');

export function ratioTargetsTable(ratios: ReadonlyMap<string, number>): string {
  return renderTable(
    [
      { title: 'target', align: 'left' },
      { title: 'wanted', align: 'right' },
      { title: 'measured', align: 'right' },
      { title: 'verdict', align: 'left' },
    ],
    RATIO_TARGETS.map((t) => {
      const measured = ratios.get(t.scenario);
      return [`${t.scenario} ratio`, `>= ${t.minRatio.toFixed(2)}`, ratio(measured ?? Number.NaN), verdict(measured === undefined ? undefined : measured >= t.minRatio)];
    }),
  );
}

export function scaleTargetsTable(p99s: ReadonlyMap<string, number>, peakRss: number | undefined): string {
  const rows = LATENCY_TARGETS.map((t) => {
    const values = [...p99s].filter(([name]) => t.matches(name)).map(([, p99]) => p99);
    const worst = values.length > 0 ? Math.max(...values) : undefined;
    return [t.label, `<= ${t.maxP99} ms`, worst === undefined ? '-' : `${ms(worst)} ms`, verdict(worst === undefined ? undefined : worst <= t.maxP99)];
  });
  rows.push(['server peak RSS', `<= ${mebibytes(PEAK_RSS_TARGET_BYTES)}`, mebibytes(peakRss), verdict(peakRss === undefined ? undefined : peakRss <= PEAK_RSS_TARGET_BYTES)]);
  return renderTable(
    [
      { title: 'target', align: 'left' },
      { title: 'wanted', align: 'right' },
      { title: 'measured', align: 'right' },
      { title: 'verdict', align: 'left' },
    ],
    rows,
  );
}
