/**
 * Reads a V8 CPU profile (`node --cpu-prof`, as written by `npm run bench -- --cpu-prof DIR`) and
 * prints where the time went: self and inclusive time by file (node_modules packages grouped by
 * package), self time by function, and inclusive time of the functions whose file matches
 * `--focus` (default: src/). Shares are of the busy (not idle) time.
 * A reading aid for docs/PERFORMANCE.md; it measures nothing itself.
 *
 *   node bench/profile-summary.ts prof/CPU.*.cpuprofile [--top 25] [--focus src/]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { renderTable } from './table.ts';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** A short name for where a frame lives: a package of node_modules, a project path, or a node internal. */
export function placeOf(url: string): string {
  if (url === '') return '(native / V8)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return `pkg:${modules[1]}`;
  const project = /\/(src|bench|test)\/(.+)$/.exec(url);
  if (project) return `${project[1]}/${project[2]}`;
  return url.startsWith('node:') ? url : url.replace(/^file:\/\//, '');
}

export interface ProfileSummary {
  /** Sampled time when the thread was not idle: what the shares are of. */
  readonly totalMs: number;
  readonly idleMs: number;
  readonly selfByFunction: Map<string, number>;
  readonly selfByPlace: Map<string, number>;
  /** Inclusive time of functions in `focus` files. */
  readonly inclusiveByFunction: Map<string, number>;
  /** Inclusive time by place (a package or file counted once per stack). */
  readonly inclusiveByPlace: Map<string, number>;
}

export function summarizeProfile(profile: CpuProfile, focus: string): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfMs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const label = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${placeOf(f.url)}:${f.lineNumber + 1}`;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const selfByFunction = new Map<string, number>();
  const selfByPlace = new Map<string, number>();
  const inclusiveByFunction = new Map<string, number>();
  const inclusiveByPlace = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  for (const [id, ms] of selfMs) {
    const node = byId.get(id)!;
    // Waiting for I/O (here: mostly while the reference server is measured) is not work.
    if (node.callFrame.functionName === '(idle)') {
      idleMs += ms;
      continue;
    }
    totalMs += ms;
    add(selfByFunction, label(node.callFrame), ms);
    add(selfByPlace, placeOf(node.callFrame.url), ms);
    // Inclusive: count each focused function once per sample stack.
    const seen = new Set<string>();
    const places = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const place = placeOf(frame.url);
      if (!places.has(place)) {
        places.add(place);
        add(inclusiveByPlace, place, ms);
      }
      if (!place.startsWith(focus)) continue;
      const key = label(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusiveByFunction, key, ms);
    }
  }
  return { totalMs, idleMs, selfByFunction, selfByPlace, inclusiveByFunction, inclusiveByPlace };
}

function top(map: Map<string, number>, n: number, totalMs: number): string[][] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => [k, v.toFixed(0), `${((v / totalMs) * 100).toFixed(1)}%`]);
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, focus: { type: 'string', default: 'src/' } },
  });
  const n = Number(values.top);
  for (const file of positionals) {
    const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, values.focus);
    const columns = (title: string) => [
      { title, align: 'left' as const },
      { title: 'ms', align: 'right' as const },
      { title: 'share', align: 'right' as const },
    ];
    process.stdout.write(`${file}: ${summary.totalMs.toFixed(0)} ms busy (shares below are of this), ${summary.idleMs.toFixed(0)} ms idle\n\n`);
    process.stdout.write(`${renderTable(columns('self time by place'), top(summary.selfByPlace, n, summary.totalMs))}\n\n`);
    process.stdout.write(`${renderTable(columns('inclusive time by place'), top(summary.inclusiveByPlace, n, summary.totalMs))}\n\n`);
    process.stdout.write(`${renderTable(columns('self time by function'), top(summary.selfByFunction, n, summary.totalMs))}\n\n`);
    process.stdout.write(`${renderTable(columns(`inclusive time, ${values.focus} functions`), top(summary.inclusiveByFunction, n, summary.totalMs))}\n\n`);
  }
}
