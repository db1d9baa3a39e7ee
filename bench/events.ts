/**
 * Events benchmark, run by `npm run bench` after the throughput table (or alone:
 * `node bench/events.ts [--smoke] [--postgres URL] [--no-sqlite] [--rounds N] [--seconds S]`):
 *
 * 1. Write throughput with the change feed on vs off: POST /Users and PATCH /Users/{id} against
 *    two servers on two fresh databases of one engine, in alternating slices. "Off" is the same
 *    app with the feed's statements (SQLite: the event's insert, numbered in it; PostgreSQL: the
 *    event's part of the one statement that inserts the audit row and the event) answered without
 *    touching the database (a bench-only wrapper of `storage.statements`; Rollcall itself has no switch
 *    to turn the feed off), so the difference is exactly what the feed costs a write. Both run the
 *    delivery worker, whose ticks number PostgreSQL's committed events (migration 015): that
 *    numbering is counted in the "on" side's throughput.
 * 2. Delivery throughput: a team's feed of N events replayed to a push subscription whose
 *    receiver (bench/receiver.ts: node:http on 127.0.0.1, answering 202 at once) counts them; events per second
 *    from the replay to the last SET received.
 *
 * Servers, receiver and load generator share this process (and the machine's 2 cores), so
 * absolute numbers are lower than `bench/run.ts`'s separate processes; the on/off ratio is what
 * the target (feed cost <= 10% of POST/PATCH throughput) is about.
 */
import { parseArgs } from 'node:util';
import type { Request } from 'autocannon';
import { createTeam, createTeamUser, issueToken } from '../src/admin.ts';
import { issueAccessToken } from '../src/oauth/tokens.ts';
import { buildApp } from '../src/app.ts';
import type { AppConfig } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import type { Storage } from '../src/storage/connect.ts';
import { hooksOf, hot, StorageCarrier } from '../src/storage/statements.ts';
import type { Statements } from '../src/storage/statements.ts';
import { createBenchDatabase } from './database.ts';
import { drive, summarize } from './load.ts';
import type { Slice } from './load.ts';
import { startReceiver } from './receiver.ts';
import { rate, ratio, renderTable } from './table.ts';

const SECRET_KEY = 'bench-instance-secret-0123456789abcdef-0123456789';
// The receiver listens on loopback (bench/receiver.ts), which push delivery refuses unless allowed.
const CONFIG: AppConfig = {
  publicBaseUrl: 'http://127.0.0.1', logLevel: 'silent', accessTokenTtl: 3600, refreshTokenTtl: 86_400, passwordGrant: false, redisUrl: undefined, secretKey: SECRET_KEY,
  allowReceivers: [{ kind: 'network', address: '127.0.0.1', prefix: 32, family: 4 }],
};

/** `storage` with the change feed's insert answered without the database. */
function withoutFeed(storage: Storage): Storage {
  const st = hot(storage.db);
  const statements: Statements = {
    all: (ex, def, params) => st.all(ex, def, params),
    first: (ex, def, params) => st.first(ex, def, params),
    run: (ex, def, params) => st.run(ex, def, params),
    write: (ex, def, params) => (def.name === 'appendEvent' ? Promise.resolve() : st.write(ex, def, params)),
    shaped: (ex, query) => st.shaped(ex, query),
  };
  // The last carrier added is the one the repositories find (statements.ts).
  return { ...storage, db: storage.db.withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
}

interface Side {
  readonly url: string;
  readonly token: string;
  readonly userIds: string[];
  close(): Promise<void>;
}

async function startSide(label: string, postgres: string | undefined, feed: boolean, users: number): Promise<Side> {
  const database = await createBenchDatabase({ label, ...(postgres ? { postgres } : {}) });
  const storage = await database.open();
  const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
  await createTeam(deps, 'bench');
  await createTeamUser(deps, 'bench', 'owner@bench.example', {});
  const token = (await issueToken(deps, 'bench', 'owner@bench.example', { scope: ['read', 'write'], ttlSeconds: 86_400 })).token;
  // Both sides run the delivery worker, as every instance does: on PostgreSQL its ticks number the
  // feed's committed events (migration 015), part of what the feed costs; no subscription here.
  const app = await buildApp({ config: CONFIG, storage: feed ? storage : withoutFeed(storage) });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const userIds: string[] = [];
  for (let i = 0; i < users; i++) {
    const r = await fetch(`${url}/v2/scim/Users`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, body: JSON.stringify({ userName: `seed${i}@bench.example` }) });
    userIds.push(((await r.json()) as { id: string }).id);
  }
  return {
    url,
    token,
    userIds,
    async close() {
      await app.close();
      await storage.close();
      await database.dispose();
    },
  };
}

function postUsers(side: Side, tag: string): Request[] {
  let n = 0;
  return [{
    method: 'POST',
    path: '/v2/scim/Users',
    headers: { authorization: `Bearer ${side.token}`, 'content-type': 'application/scim+json' },
    setupRequest: (request: Request) => ({ ...request, body: JSON.stringify({ userName: `${tag}-${n++}-${Math.random().toString(36).slice(2)}@bench.example`, title: 'Eng' }) }),
  }];
}

function patchUsers(side: Side): Request[] {
  let n = 0;
  return [{
    method: 'PATCH',
    path: '/v2/scim/Users/x',
    headers: { authorization: `Bearer ${side.token}`, 'content-type': 'application/scim+json' },
    setupRequest: (request: Request) => ({
      ...request,
      path: `/v2/scim/Users/${side.userIds[n % side.userIds.length]}`,
      body: JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'title', value: `t${n++}` }] }),
    }),
  }];
}

async function writeThroughput(postgres: string | undefined, smoke: boolean, shape: Shape): Promise<string[][]> {
  const seconds = smoke ? 0.5 : shape.seconds;
  const rounds = smoke ? 1 : shape.rounds;
  const connections = 16;
  const on = await startSide('events_on', postgres, true, smoke ? 50 : 500);
  const off = await startSide('events_off', postgres, false, smoke ? 50 : 500);
  const rows: string[][] = [];
  try {
    for (const [name, requests, expect] of [
      ['POST /Users', (s: Side, tag: string) => postUsers(s, tag), 201],
      ['PATCH /Users/{id}', (s: Side) => patchUsers(s), 200],
    ] as const) {
      const slices: Record<'on' | 'off', Slice[]> = { on: [], off: [] };
      for (let round = 0; round < rounds; round++) {
        for (const [key, side] of (round % 2 === 0 ? [['on', on], ['off', off]] : [['off', off], ['on', on]]) as ['on' | 'off', Side][]) {
          slices[key].push(await drive({ urls: [side.url], connections, seconds, requests: requests(side, `${key}${round}`), expectStatus: expect }));
        }
      }
      const a = summarize(slices.on);
      const b = summarize(slices.off);
      rows.push([name, rate(a.rps), rate(b.rps), ratio(a.rps / b.rps), `${((1 - a.rps / b.rps) * 100).toFixed(1)}%`, String(a.errors + b.errors)]);
    }
  } finally {
    await on.close();
    await off.close();
  }
  return rows;
}

async function deliveryThroughput(postgres: string | undefined, smoke: boolean): Promise<{ events: number; seconds: number }> {
  const events = smoke ? 200 : 5000;
  const database = await createBenchDatabase({ label: 'events_delivery', ...(postgres ? { postgres } : {}) });
  const storage = await database.open();
  const receiver = await startReceiver();
  const receiverUrl = receiver.url;
  try {
    const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
    const team = await createTeam(deps, 'bench');
    await createTeamUser(deps, 'bench', 'owner@bench.example', {});
    // An administrator's token (the operator's): a provisioning token may not manage subscriptions.
    const token = (await issueAccessToken(storage.db, systemClock, { teamId: team.id, userId: null, clientId: null, scope: ['read', 'write'], ttlSeconds: 86_400 })).token;
    const app = await buildApp({ config: CONFIG, storage, delivery: { pollIntervalMs: 20 } });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      // The feed first (no subscription yet), 16 writes at a time.
      for (let i = 0; i < events; i += 16) {
        await Promise.all(Array.from({ length: Math.min(16, events - i) }, (_, j) =>
          fetch(`${url}/v2/scim/Users`, { method: 'POST', headers, body: JSON.stringify({ userName: `d${i + j}@bench.example` }) }).then((r) => r.arrayBuffer())));
      }
      const sub = (await (await fetch(`${url}/v2/events/subscriptions`, { method: 'POST', headers, body: JSON.stringify({ url: receiverUrl }) })).json()) as { id: string; cursor: number };
      // Every event of the feed (the seeded admin's too) is delivered again.
      const total = sub.cursor;
      await fetch(`${url}/v2/events/subscriptions/${sub.id}/pause`, { method: 'POST', headers, body: '{}' });
      await fetch(`${url}/v2/events/subscriptions/${sub.id}/replay`, { method: 'POST', headers, body: JSON.stringify({ from: 1 }) });
      const started = performance.now();
      await fetch(`${url}/v2/events/subscriptions/${sub.id}/resume`, { method: 'POST', headers, body: '{}' });
      await receiver.waitFor(total);
      return { events: total, seconds: (performance.now() - started) / 1000 };
    } finally {
      await app.close();
    }
  } finally {
    await receiver.close();
    await storage.close();
    await database.dispose();
  }
}

/** How long the on/off comparison runs: `rounds` pairs of slices of `seconds` each. */
interface Shape {
  readonly rounds: number;
  readonly seconds: number;
}

export async function runEventsBench(options: { smoke: boolean; postgres: string | undefined; sqlite?: boolean; shape?: Shape }): Promise<void> {
  const engines: [string, string | undefined][] = [...(options.sqlite === false ? [] : [['SQLite', undefined] as [string, undefined]]), ...(options.postgres ? [['PostgreSQL', options.postgres] as [string, string]] : [])];
  for (const [engine, postgres] of engines) {
    const rows = await writeThroughput(postgres, options.smoke, options.shape ?? { rounds: 3, seconds: 4 });
    process.stdout.write(`\nEvents: write throughput with the change feed on vs off (${engine}, 16 connections, in-process)\n`);
    process.stdout.write(`${renderTable([{ title: 'scenario', align: 'left' }, ...['events on (req/s)', 'events off (req/s)', 'on / off', 'feed cost', 'errors'].map((title) => ({ title, align: 'right' as const }))], rows)}\n`);
    const delivered = await deliveryThroughput(postgres, options.smoke);
    process.stdout.write(`Events: push delivery to a local receiver (${engine}): ${delivered.events} events in ${delivered.seconds.toFixed(2)} s = ${rate(delivered.events / delivered.seconds)} events/s (one subscription, in order)\n`);
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { smoke: { type: 'boolean', default: false }, postgres: { type: 'string' }, 'no-sqlite': { type: 'boolean', default: false }, rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '4' } },
  });
  await runEventsBench({ smoke: values.smoke === true, postgres: values.postgres, sqlite: !values['no-sqlite'], shape: { rounds: Number(values.rounds), seconds: Number(values.seconds) } });
}
