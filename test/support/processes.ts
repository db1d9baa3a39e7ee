/**
 * Real Rollcall server processes for tests that need them (several instances on one database,
 * crashes): `rollcall serve` started as a child process, its URL read from its JSON line, and
 * stopped by SIGTERM (graceful) or SIGKILL (a crash). Also a bearer token minted straight into
 * the database the servers share.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createTeam, createTeamUser, issueToken } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { connect } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { TEST_SECRET_KEY } from './app.ts';

const CLI = join(import.meta.dirname, '../../src/cli/index.ts');

/** The PUBLIC_BASE_URL every test server on PostgreSQL shares: its events' issuer. */
export const TEST_PUBLIC_BASE_URL = 'http://rollcall.test';

/**
 * SECRET_KEY and PUBLIC_BASE_URL for a command on PostgreSQL (both required there, the same on
 * every instance: keys/master.ts, config.ts loadServeConfig); SQLite files keep their key file
 * and the default base URL, so the tests exercise that path too.
 */
const secretFor = (args: readonly string[]): Record<string, string> =>
  args.some((a) => /^postgres(ql)?:\/\//.test(a)) ? { SECRET_KEY: TEST_SECRET_KEY, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL } : {};

/** Runs one `rollcall` command to completion, quietly, and returns what it printed. */
export function rollcall(args: readonly string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...secretFor(args), ...env, LOG_LEVEL: 'silent' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Everything the process printed on stdout so far (JSON log lines when LOG_LEVEL asks for them). */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startServer(database: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--json', '--port', '0', '--database', database], {
      // Receivers in tests listen on loopback (receiver.ts): allowed, as in test apps (app.ts).
      env: { ...process.env, LOG_LEVEL: 'silent', ALLOW_RECEIVERS: '127.0.0.0/8,::1', ...secretFor([database]), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    let out = '';
    let err = '';
    let ready = false;
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /"url":\s*"([^"]+)"/.exec(out);
      if (match && !ready) {
        ready = true;
        resolve({
          url: match[1]!,
          child,
          exited,
          output: () => out,
          stop(signal: NodeJS.Signals = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`serve exited (${code}) before it was ready: ${err}`)));
  });
}

/** Creates team `acme` and an admin in `database`, and returns a read-write token for it. */
export async function seedTeamToken(database: string): Promise<string> {
  const storage = connect(database);
  try {
    await migrate(storage);
    const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
    await createTeam(deps, 'acme');
    await createTeamUser(deps, 'acme', 'owner@acme.example', {});
    return (await issueToken(deps, 'acme', 'owner@acme.example', { scope: ['read', 'write'], ttlSeconds: 3600 })).token;
  } finally {
    await storage.close();
  }
}

/** A SCIM request against a running server. */
export async function scim(base: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> | undefined; headers: Headers }> {
  const res = await fetch(`${base}/v2/scim${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>), headers: res.headers };
}
