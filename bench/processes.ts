/**
 * Process control for the benchmarks: Rollcall servers (`rollcall serve`) and reference servers,
 * each in a process of its own so that the load generator never shares their event loop. A
 * server is ready when it prints its URL as JSON; it is stopped with SIGTERM (Rollcall drains
 * and exits, writing a CPU profile when started with --cpu-prof) and killed if it lingers.
 * Peak resident memory and CPU time are read from /proc (Linux); elsewhere they are unknown. Every process started
 * through a `Servers` set is stopped by its `stopAll`, also when a run fails half-way.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_NODE_FLAGS } from '../src/node-flags.ts';

const ROOT = join(import.meta.dirname, '..');
export const ROLLCALL_CLI = join(ROOT, 'src/cli/index.ts');
export const REFERENCE_SERVER = join(ROOT, 'bench/reference-server.ts');

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

export interface ServerProcess {
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  /** Peak resident set size so far (VmHWM), in bytes; undefined where /proc is missing. */
  peakRssBytes(): number | undefined;
  /** CPU time used so far (user + system, every thread), in seconds; undefined where /proc is missing. */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

/** Reads a `/proc/<pid>/status` field given in kB, as bytes. */
function procStatusBytes(pid: number, field: string): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Linux's USER_HZ: the unit of the times in /proc/<pid>/stat (100 on every mainstream kernel). */
const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of `/proc/<pid>/stat`, in seconds. */
function procCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may hold spaces, start at field 3 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Spawns `node <args>` and resolves once it prints a JSON object with a "url". */
function spawnServer(label: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not become ready in ${READY_TIMEOUT_MS / 1000} s: ${err.slice(-2000)}`));
    }, READY_TIMEOUT_MS);
    child.stdout.on('data', (d: Buffer) => {
      if (ready) return;
      out += d.toString();
      const match = /"url":\s*"([^"]+)"/.exec(out);
      if (!match || child.pid === undefined) return;
      ready = true;
      clearTimeout(timer);
      const pid = child.pid;
      let stopping: Promise<void> | undefined;
      resolve({
        label,
        url: match[1]!,
        pid,
        peakRssBytes: () => procStatusBytes(pid, 'VmHWM'),
        cpuSeconds: () => procCpuSeconds(pid),
        stop: () =>
          (stopping ??= (async () => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill('SIGTERM');
            if (!(await waitForExit(child, STOP_GRACE_MS))) {
              child.kill('SIGKILL');
              await waitForExit(child, STOP_GRACE_MS);
            }
          })()),
      });
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.length > 20_000) err = err.slice(-10_000);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${label} exited (${code ?? signal}) before it was ready: ${err.slice(-2000)}`));
    });
  });
}

export interface RollcallOptions {
  readonly databaseUrl: string;
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=prof"]. */
  readonly nodeArgs?: readonly string[];
  readonly label?: string;
}

/** The processes of one benchmark run; `stopAll` ends every one still running. */
export class Servers {
  readonly #running = new Set<ServerProcess>();
  /**
   * SECRET_KEY for this run's servers (PostgreSQL requires one; they must share it). A kept
   * database (bench:scale --keep, then --database) is reopened by later runs, which must unseal
   * the keys the first run stored: they pass the same `secretKey` (derived from the database).
   */
  readonly #secretKey: string;

  constructor(secretKey?: string) {
    this.#secretKey = secretKey ?? randomBytes(32).toString('base64url');
  }

  async rollcall(options: RollcallOptions): Promise<ServerProcess> {
    // The flags `npm start` runs the server with (src/node-flags.ts), so the bench measures that.
    const args = [...SERVER_NODE_FLAGS, ...(options.nodeArgs ?? []), ROLLCALL_CLI, 'serve', '--json', '--host', '127.0.0.1', '--port', '0', '--database', options.databaseUrl];
    // Rollcall reads its settings from the environment; the bench only silences the request log.
    // PostgreSQL instances must share one PUBLIC_BASE_URL (their events' issuer); the bench reads
    // the listening URL from the server's own line, so any shared value serves.
    const server = await spawnServer(options.label ?? 'rollcall', args, { SECRET_KEY: this.#secretKey, PUBLIC_BASE_URL: 'http://127.0.0.1', ALLOW_RECEIVERS: '127.0.0.1', ...process.env, LOG_LEVEL: 'silent' });
    return this.#track(server);
  }

  async reference(label = 'reference'): Promise<ServerProcess> {
    return this.#track(await spawnServer(label, [REFERENCE_SERVER], { ...process.env }));
  }

  #track(server: ServerProcess): ServerProcess {
    this.#running.add(server);
    const stop = server.stop;
    return {
      ...server,
      peakRssBytes: server.peakRssBytes,
      cpuSeconds: server.cpuSeconds,
      stop: async () => {
        await stop();
        this.#running.delete(server);
      },
    };
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#running].map((s) => s.stop()));
    this.#running.clear();
  }
}
