/**
 * `npm run bench:console -- --database sqlite:./scale.db`: the console's pages on the scale data
 * set (the target: each page under 100 ms with 1,000,000 users and a 100,000-member group). Takes a
 * database loaded by `npm run bench:scale -- --keep` (team `scale`), adds a bench admin with a
 * password, serves Rollcall in this process, signs in through the console's own form (CSRF and
 * cookies as a browser sends them), then requests every page `--rounds` times one after another
 * and prints p50 / p99 / max per page against the 100 ms target. Exits 1 on any answer but 200 or
 * a p50 over the target.
 */
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { setUserPassword } from '../src/admin-users.ts';
import { createTeamUser } from '../src/admin.ts';
import { buildApp } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import { createSubscription, listSubscriptions, pauseSubscription } from '../src/events/subscriptions.ts';
import { ReceiverPolicy } from '../src/events/receivers.ts';
import { ScimError } from '../src/scim/errors.ts';
import { teamByName } from '../src/storage/repos/teams.ts';
import { connect } from '../src/storage/connect.ts';
import { migrate } from '../src/storage/migrations/index.ts';
import { keptDatabaseSecret } from './database.ts';

const TARGET_MS = 100;
const ADMIN = 'console-bench@scale.example';
const PASSWORD = 'console bench password';

const { values } = parseArgs({
  options: { database: { type: 'string' }, team: { type: 'string', default: 'scale' }, rounds: { type: 'string', default: '20' } },
});
if (!values.database) throw new Error('--database sqlite:<file> or postgres://... (a database loaded by npm run bench:scale -- --keep)');
const rounds = Number(values.rounds);

const storage = connect(values.database);
await migrate(storage);
const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
try {
  await createTeamUser(deps, values.team, ADMIN, { password: PASSWORD, admin: true });
} catch (error) {
  if (!(error instanceof ScimError && error.status === 409)) throw error;
  await setUserPassword(deps, values.team, ADMIN, PASSWORD);
}
// One paused subscription (never delivered to) so the Events page and a subscription's page have a row to show.
const team = await teamByName(storage.db, values.team);
if (!team) throw new Error(`no team "${values.team}" in the database`);
const BENCH_RECEIVER = 'https://console-bench.invalid/events';
const subscription =
  (await listSubscriptions(deps, team.id)).find((s) => s.url === BENCH_RECEIVER)?.id ??
  (await createSubscription({ ...deps, receivers: new ReceiverPolicy() }, team, { method: 'push', url: BENCH_RECEIVER, events: ['create', 'patch'] })).subscription.id;
await pauseSubscription(deps, team.id, subscription, 'console bench: never delivered');
const app = await buildApp({
  // The key bench:scale's servers used on this database (its keys are sealed under it).
  config: { publicBaseUrl: 'http://127.0.0.1', logLevel: 'silent', accessTokenTtl: 3600, refreshTokenTtl: 86_400, passwordGrant: true, redisUrl: undefined, secretKey: keptDatabaseSecret(values.database) },
  storage,
});
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

const jar = new Map<string, string>();
const take = (res: Response) => {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
};
const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
async function get(path: string): Promise<{ status: number; body: string; ms: number }> {
  const start = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { cookie: cookie() }, redirect: 'manual' });
  const body = await res.text();
  return { status: res.status, body, ms: performance.now() - start };
}

const form = await get('/console/sign-in');
take(await fetch(`${base}/console/sign-in`, { headers: { cookie: cookie() } }));
const csrf = /name="_csrf" value="([^"]+)"/.exec((await get('/console/sign-in')).body)?.[1] ?? '';
void form;
const signIn = await fetch(`${base}/console/sign-in`, {
  method: 'POST',
  headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ _csrf: csrf.replace(/&amp;/g, '&'), username: ADMIN, password: PASSWORD, team: values.team }).toString(),
  redirect: 'manual',
});
take(signIn);
if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`);

const users = await get('/console/users');
const userId = /href="\/console\/users\/([A-Z0-9]+)"/.exec(users.body)?.[1];
const next = /href="([^"]*cursor=[^"]+)" rel="next"/.exec(users.body)?.[1]?.replace(/&amp;/g, '&');
const groups = await get('/console/groups');
const groupId = /href="\/console\/groups\/([A-Z0-9]+)"/.exec(groups.body)?.[1];
const group = groupId ? await get(`/console/groups/${groupId}`) : undefined;
const nextMembers = group ? /href="([^"]*after=[^"]+)" rel="next"/.exec(group.body)?.[1]?.replace(/&amp;/g, '&') : undefined;

// Each word search, and the page its "Next page" link leads to (when it has one).
const searches: [string, string][] = [
  ['Users, search', '/console/users?q=user500000'],
  ['Users, search (one userName)', '/console/users?q=user0500000'],
  ['Users, search (a given name: 62,500 users)', '/console/users?q=ada'],
  ['Users, search (userName prefix: 100,000 users, none early)', '/console/users?q=user05'],
  ['Users, search (a family name: 62,500 users)', '/console/users?q=lovelace'],
  ['Users, search (an externalId)', '/console/users?q=userext-0123456'],
];
const searchPages: [string, string][] = [];
for (const [name, path] of searches) {
  searchPages.push([name, path]);
  const link = /href="([^"]*cursor=[^"]+)" rel="next"/.exec((await get(path)).body)?.[1]?.replace(/&amp;/g, '&');
  if (link) searchPages.push([`${name}, next page`, link]);
}

const pages: [string, string][] = [
  ['Overview', '/console'],
  ['Users, first page', '/console/users'],
  ['Users, next page (cursor)', next ?? '/console/users'],
  ...searchPages,
  ['Users, SCIM filter', `/console/users?filter=${encodeURIComponent('userName eq "user123456@scale.example"')}`],
  ['A user', `/console/users/${userId ?? 'none'}`],
  ['Groups', '/console/groups'],
  ['A group (first 50 members)', `/console/groups/${groupId ?? 'none'}`],
  ['A group (next members)', nextMembers ?? `/console/groups/${groupId ?? 'none'}`],
  ['Connections', '/console/connections'],
  ['Request log', '/console/requests'],
  ['Audit log', '/console/audit'],
  ['Events', '/console/events'],
  ['An event subscription (delivery log)', `/console/events/subscriptions/${subscription}`],
  ['Settings', '/console/settings'],
];

let failed = false;
const lines = [`| page | p50 ms | p99 ms | max ms | under ${TARGET_MS} ms |`, '|---|---:|---:|---:|---|'];
for (const [name, path] of pages) {
  const times: number[] = [];
  for (let i = 0; i < rounds + 2; i++) {
    const r = await get(path);
    if (r.status !== 200) {
      failed = true;
      lines.push(`| ${name} | answered ${r.status} | | | no |`);
      break;
    }
    if (i >= 2) times.push(r.ms);
  }
  if (times.length === 0) continue;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  const ok = at(0.5) < TARGET_MS;
  failed ||= !ok;
  lines.push(`| ${name} | ${at(0.5).toFixed(1)} | ${at(0.99).toFixed(1)} | ${times.at(-1)!.toFixed(1)} | ${ok ? 'yes' : 'NO'} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
await app.close();
await storage.close();
process.exit(failed ? 1 : 0);
