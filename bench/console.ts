/**
 * `npm run bench:console -- --database sqlite:./scale.db`: the console's pages on the scale data
 * set (the target: each page under 100 ms with 1,000,000 users and a 100,000-member group). Takes a
 * database loaded by `npm run bench:scale -- --keep` (team `scale`), adds a bench admin with a
 * password and what the pages need at scale (console-seed.ts: a connection with tokens, an
 * application with a grant, deactivated users, 49 more groups, 100,000 audit rows), serves Rollcall
 * in this process, signs in through the console's own form (CSRF and cookies as a browser sends
 * them), then requests every page `--rounds` times one after another and prints p50 / p99 / max
 * per page against the 100 ms target. Every GET route the app registered under /console is
 * requested, or listed in EXCLUDED with the reason: a new page fails the run until it is measured.
 * Exits 1 on any answer but 200 or a p50 over the target.
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
import { AUDIT_ROWS, seedConsole } from './console-seed.ts';
import { CLI_ACTOR } from '../src/audit/events.ts';
import { makeSetupLink } from '../src/console/setup-links.ts';
import { PATHS } from '../src/console/wizard-paths.ts';

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
const adminRow = await storage.db.selectFrom('users').select('id').where('team_id', '=', team.id).where('user_name_key', '=', ADMIN).executeTakeFirstOrThrow();
const admin = { id: adminRow.id, userName: ADMIN, password: PASSWORD };
const seed = await seedConsole(storage, team, admin, (line) => process.stdout.write(`${line}\n`));
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
async function get(path: string, signedOut = false): Promise<{ status: number; body: string; ms: number }> {
  const start = performance.now();
  const res = await fetch(`${base}${path}`, { headers: signedOut ? {} : { cookie: cookie() }, redirect: 'manual' });
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
// The application's live grant: a token it was given for the bench admin (the password grant).
const granted = await fetch(`${base}/oauth/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'password', username: ADMIN, password: PASSWORD, scope: 'read', team: values.team, client_id: seed.clientId, client_secret: seed.clientSecret }).toString(),
});
if (granted.status !== 200) throw new Error(`the password grant answered ${granted.status}: ${await granted.text()}`);


// The ids the pages need, read from the pages the way an admin follows links.
const link = (body: string, pattern: RegExp) => pattern.exec(body)?.[1]?.replace(/&amp;/g, '&');
const users = await get('/console/users');
const next = link(users.body, /href="([^"]*cursor=[^"]+)" rel="next"/);
const groups = await get('/console/groups');
const bigGroup = (await storage.db.selectFrom('groups').select('id').where('team_id', '=', team.id).where('display_name', '=', 'big group').executeTakeFirst())?.id ?? 'none';
const group = await get(`/console/groups/${bigGroup}`);
const nextMembers = link(group.body, /href="([^"]*(?:after|page)=[^"]+)" rel="next"/);
void groups;
const setupLink = await makeSetupLink(storage, systemClock, { teamId: team.id, userId: admin.id, recipient: 'colleague@scale.example', hours: 72, actor: CLI_ACTOR, requestId: null });

// Each word search, and the page its "Next page" link leads to (when it has one).
const searches: [string, string][] = [
  ['Users, search', '/console/users?q=user500000'],
  ['Users, search (one userName)', '/console/users?q=user0500000'],
  ['Users, search (a given name: 62,500 users)', '/console/users?q=ada'],
  ['Users, search (userName prefix: 100,000 users, none early)', '/console/users?q=user05'],
  ['Users, search (a family name: 62,500 users)', '/console/users?q=lovelace'],
  ['Users, search (an externalId)', '/console/users?q=userext-0123456'],
  ['Users, deactivated (5 of 1,000,000)', '/console/users?status=deactivated'],
  ['Users, active', '/console/users?status=active'],
];
const searchPages: [string, string][] = [];
for (const [name, path] of searches) {
  searchPages.push([name, path]);
  const more = link((await get(path)).body, /href="([^"]*cursor=[^"]+)" rel="next"/);
  if (more) searchPages.push([`${name}, next page`, more]);
}

const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;
const wizardPaths = PATHS.map((p): [string, string] => [`Wizard: ${p.providerLabel}, ${p.method}`, `/console/connect/${p.id}`]);
const pages: [string, string][] = [
  ['Overview', '/console'],
  ['Users, first page', '/console/users'],
  ['Users, next page (cursor)', next ?? '/console/users'],
  ...searchPages,
  ['Users, SCIM filter', `/console/users${q({ filter: 'userName eq "user0123456@scale.example"' })}`],
  ['A user (200 history rows)', `/console/users/${seed.historyUserId}`],
  ['A user, edit', `/console/users/${seed.historyUserId}/edit`],
  ['A user, deactivate (confirm)', `/console/users/${seed.historyUserId}/deactivate`],
  ['A user, create (form)', '/console/users/new'],
  ['Groups (member counts)', '/console/groups'],
  ['A group of 100,000 (first 50 members)', `/console/groups/${bigGroup}`],
  ['A group of 100,000 (next members)', nextMembers ?? `/console/groups/${bigGroup}`],
  ['A group of 100,000 (page 150)', `/console/groups/${bigGroup}${q({ page: '150' })}`],
  ['A group of 100,000, member search (user05: none of 100,000 such users)', `/console/groups/${bigGroup}${q({ mq: 'user05' })}`],
  ['A group of 100,000, member search (user05, page 3)', `/console/groups/${bigGroup}${q({ mq: 'user05', page: '3' })}`],
  ['A group of 100,000, member search (user005: 10,000 members)', `/console/groups/${bigGroup}${q({ mq: 'user005' })}`],
  ['A group of 100,000, member search (user005, page 150)', `/console/groups/${bigGroup}${q({ mq: 'user005', page: '150' })}`],
  ['A group of 100,000, member search (user00500: 100 members)', `/console/groups/${bigGroup}${q({ mq: 'user00500' })}`],
  ['A group of 100,000, member search (one member)', `/console/groups/${bigGroup}${q({ mq: 'user0050000' })}`],
  ['A group of 100,000, member search (no member)', `/console/groups/${bigGroup}${q({ mq: 'nobody' })}`],
  ['A group of 100,000, users to add', `/console/groups/${bigGroup}${q({ add: 'ada' })}`],
  ['Connections', '/console/connections'],
  ['A connection', `/console/connections/${seed.connectionId}`],
  ['A connection, delete (confirm)', `/console/connections/${seed.connectionId}/delete`],
  ['A token, revoke (confirm)', `/console/connections/tokens/${seed.tokenId}/revoke`],
  ['A client', `/console/connections/clients/${seed.clientId}`],
  ['A client secret, revoke (confirm)', `/console/connections/clients/${seed.clientId}/secrets/${seed.secretId}/revoke`],
  ['Request log', '/console/requests'],
  ['Admins and applications', '/console/admins'],
  ['An admin, remove (confirm)', `/console/admins/${seed.secondAdminId}/remove`],
  ['An admin, reset second factors (confirm)', `/console/admins/${seed.secondAdminId}/reset-factors`],
  ['An application, revoke (confirm)', `/console/admins/applications/${seed.clientId}/revoke`],
  ['Wizard: connect an identity provider', '/console/connect'],
  ...wizardPaths,
  ['Wizard: a connection', `/console/connect/connections/${seed.connectionId}`],
  ['Wizard: a connection, live test state', `/console/connect/connections/${seed.connectionId}/test`],
  ['Wizard: a setup link, withdraw (confirm)', `/console/connect/links/${setupLink.id}/revoke`],
  ['Security', '/console/security'],
  [`Audit log, first page (${AUDIT_ROWS.toLocaleString('en-US')} rows)`, '/console/audit'],
  ['Audit log, an older page (half-way)', `/console/audit${q({ before: seed.middle })}`],
  ['Audit log, actor: a connection id (60% of rows)', `/console/audit${q({ actor: seed.connectionId })}`],
  ['Audit log, actor: a connection name', `/console/audit${q({ actor: seed.connectionName })}`],
  ['Audit log, actor: an admin userName', `/console/audit${q({ actor: ADMIN })}`],
  ['Audit log, actor: a user id with 20 rows', `/console/audit${q({ actor: seed.rareActorId })}`],
  ['Audit log, actor: a userName with 20 rows', `/console/audit${q({ actor: 'user0424242@scale.example' })}`],
  ['Audit log, actor: a user id with no rows', `/console/audit${q({ actor: seed.historyUserId })}`],
  ['Audit log, actor: cli', `/console/audit${q({ actor: 'cli' })}`],
  ['Audit log, action: token_issued (10%)', `/console/audit${q({ action: 'token_issued' })}`],
  ['Audit log, action: sign_in (rare)', `/console/audit${q({ action: 'sign_in' })}`],
  ['Audit log, resource: the 100,000-member group', `/console/audit${q({ resource: bigGroup })}`],
  ['Audit log, date range (a month, months ago)', `/console/audit${q({ from: seed.from, to: seed.to })}`],
  ['Audit log, date range and actor (connection)', `/console/audit${q({ from: seed.from, to: seed.to, actor: seed.connectionId })}`],
  ['Audit log, date range and rare actor', `/console/audit${q({ from: seed.from, to: seed.to, actor: seed.rareActorId })}`],
  ['Access: catalog', '/console/access'],
  ['Access: group mappings', '/console/access/mappings'],
  ['Access: holders of a role', `/console/access/holders${q({ entry: 'role:admin' })}`],
  ['Events', '/console/events'],
  ['An event subscription (delivery log)', `/console/events/subscriptions/${subscription}`],
  ['An event subscription, replay from 1 (confirm: counts the feed)', `/console/events/subscriptions/${subscription}/replay${q({ from: '1' })}`],
  ['An event subscription, delete (confirm)', `/console/events/subscriptions/${subscription}/delete`],
  ['Settings', '/console/settings'],
];
/** Pages requested without the session cookie. */
const SIGNED_OUT_PAGES: [string, string][] = [
  ['Sign-in form (signed out)', '/console/sign-in'],
  ['A setup link (signed out)', `/console/setup/${setupLink.token}`],
];

/**
 * GET routes under /console that are not benchmarked, and why. Every other GET route the app
 * registered under /console must be requested by one of the pages above: a new page is measured
 * as soon as it exists, or this run fails.
 */
const EXCLUDED: readonly (readonly [RegExp, string])[] = [
  [/^\/console\/assets\//, 'a static asset (stylesheet, script, icon)'],
  [/\.csv$/, 'a CSV export, streamed page by page (not a page)'],
  [/^\/console\/sign-in\/verify$/, 'the second-factor step of a sign-in in progress (no directory reads)'],
  [/^\/console\/password$/, "a password link's page for someone signed out (one link row)"],
  [/^\/console\/connections\/:id\/tokens\/:tokenId\/issued$/, 'shows a just-issued secret once, from the post/redirect/get cookie'],
  [/^\/console\/setup\/wizard(\/|$)/, "the wizard's pages in a setup link's session: the same handlers as /console/connect"],
];

const routes = [...new Set((app.openapiRoutes ?? []).filter((r) => r.method === 'GET' && (r.url === '/console' || r.url.startsWith('/console/'))).map((r) => r.url))];
const patternOf = (url: string) => new RegExp(`^${url.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`);
/** The route a path is served by: of those matching it, the one with the fewest parameters. */
const routeOf = (path: string) =>
  routes.filter((url) => patternOf(url).test(path.split('?')[0]!)).sort((a, b) => a.split(':').length - b.split(':').length)[0];
const covered = new Set([...pages, ...SIGNED_OUT_PAGES].map(([, path]) => routeOf(path)));
const missing = routes.filter((url) => !covered.has(url) && !EXCLUDED.some(([pattern]) => pattern.test(url)));
if (missing.length > 0) {
  process.stderr.write(`error: console GET routes neither benchmarked nor excluded with a reason: ${missing.join(', ')}\n`);
  process.exit(1);
}
for (const [pattern, reason] of EXCLUDED) {
  const matched = routes.filter((url) => pattern.test(url));
  if (matched.length > 0) process.stdout.write(`not benchmarked: ${matched.join(', ')}: ${reason}\n`);
}

let failed = false;
const lines = [`| page | p50 ms | p99 ms | max ms | under ${TARGET_MS} ms |`, '|---|---:|---:|---:|---|'];
for (const [name, path, signedOut] of [...pages.map(([n, p]) => [n, p, false] as const), ...SIGNED_OUT_PAGES.map(([n, p]) => [n, p, true] as const)]) {
  const times: number[] = [];
  for (let i = 0; i < rounds + 2; i++) {
    const r = await get(path, signedOut === true);
    if (r.status !== 200) {
      failed = true;
      const said = /role="alert">([^<]{1,200})/.exec(r.body)?.[1];
      lines.push(`| ${name} | answered ${r.status}${said ? `: ${said}` : ''} | | | no |`);
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
