/**
 * A child-process probe for the unbounded-limiter-key attack (issue 13.1): builds an app on an
 * in-memory database, sends `requests` requests with random identifiers of `idBytes` characters
 * to /oauth/token (client_id and username), /oauth/revoke, /oauth/introspect and the sign-in
 * form, and prints one JSON line with the heap in use after a full GC before and after the
 * attack. Run with --expose-gc (test/http/limiter-keys.test.ts does). Per-address limits are
 * raised so that every request reaches the identifier checks: the probe measures what the
 * identifiers themselves cost, not what the address limit saves.
 */
import { randomBytes } from 'node:crypto';
import { createTestApp } from './app.ts';
import { basic, hiddenFields, PageSession, postForm, registerClient } from './oauth.ts';

const requests = Number(process.argv[2] ?? 4000);
const idBytes = Number(process.argv[3] ?? 30_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const lots = { points: 1_000_000, seconds: 600 };
const t = await createTestApp({
  limits: {
    accountFailures: { points: 5, seconds: 900 },
    clientFailures: { points: 10, seconds: 300 },
    passwordPerClient: lots,
    signinPerAddress: lots,
    oauthPerAddress: lots,
  },
});
const client = await registerClient(t);
const page = new PageSession(t);
const signInPage = await page.get(`/oauth/authorize?${new URLSearchParams({ client_id: client.id, response_type: 'code' }).toString()}`);
const formFields = hiddenFields(signInPage.body);

/** A random identifier: hex, so that every request's key differs. */
const huge = (n: number): string => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);

async function one(i: number): Promise<number> {
  switch (i % 5) {
    case 0:
      return (await postForm(t, '/oauth/token', { grant_type: 'client_credentials', client_id: huge(idBytes), client_secret: 'x' }, { auth: 'none' })).statusCode;
    case 1:
      return (await postForm(t, '/oauth/token', { grant_type: 'password', username: huge(idBytes), password: 'guess' }, { client })).statusCode;
    case 2:
      return (await postForm(t, '/oauth/revoke', { token: 'x' }, { authorization: basic({ id: huge(idBytes), secret: 'x' }) })).statusCode;
    case 3:
      return (await postForm(t, '/oauth/introspect', { token: 'x', client_id: huge(idBytes), client_secret: 'x' }, { auth: 'none' })).statusCode;
    default:
      // The sign-in form's body limit is 16 KiB.
      return (await page.post('/oauth/authorize', { ...formFields, username: huge(Math.min(idBytes, 12_000)), password: 'guess' })).statusCode;
  }
}

async function run(from: number, to: number, statuses: Map<number, number>): Promise<void> {
  const batch = 25;
  for (let i = from; i < to; i += batch) {
    const got = await Promise.all(Array.from({ length: Math.min(batch, to - i) }, (_, k) => one(i + k)));
    for (const s of got) statuses.set(s, (statuses.get(s) ?? 0) + 1);
  }
}

const settle = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

// Warm up (JIT, caches, the first of everything) before the baseline.
await run(0, 100, new Map());
const before = settle();
const statuses = new Map<number, number>();
const started = Date.now();
await run(0, requests, statuses);
const after = settle();
process.stdout.write(`${JSON.stringify({ requests, idBytes, before, after, growth: after - before, ms: Date.now() - started, statuses: Object.fromEntries(statuses) })}\n`);
await t.close();
