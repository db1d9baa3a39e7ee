/**
 * OAuth helpers for HTTP tests: registered clients, admin users with passwords, form posts to
 * the token endpoint, and the authorization code flow driven through the pages with inject()
 * (cookies and CSRF tokens carried from one response to the next, as a browser would).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createClient, createTeamUser } from '../../src/admin.ts';
import type { AdminDeps } from '../../src/admin.ts';
import type { TestApp } from './app.ts';
import { BASE_URL } from './app.ts';

export interface TestClient {
  readonly id: string;
  readonly secret: string;
}

export const adminDeps = (t: TestApp): AdminDeps => ({ storage: t.storage, clock: t.clock, baseUrl: BASE_URL });

export async function registerClient(t: TestApp, redirectUris: string[] = ['https://app.example/callback'], team?: string): Promise<TestClient> {
  const created = await createClient(adminDeps(t), { name: 'Acme Sync', redirectUris, ...(team !== undefined ? { team } : {}) });
  return { id: created.client_id, secret: created.client_secret };
}

/** An admin of the test app's team (or `team`) who may sign in. */
export async function registerAdmin(t: TestApp, userName = 'admin@acme.example', password = 'correct horse battery staple', team = t.team.name): Promise<{ id: string; userName: string; password: string }> {
  const resource = await createTeamUser(adminDeps(t), team, userName, { password, admin: true });
  return { id: String(resource.id), userName, password };
}

export const basic = (client: TestClient): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`;

/** POST a form to an OAuth endpoint; `client` authenticates by HTTP Basic unless `auth` says otherwise. */
export function postForm(
  t: TestApp,
  path: string,
  form: Record<string, string | string[]>,
  options: { client?: TestClient; auth?: 'basic' | 'form' | 'none'; query?: string; authorization?: string } = {},
): Promise<LightMyRequestResponse> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  const auth = options.auth ?? 'basic';
  if (options.client && auth === 'form') {
    params.set('client_id', options.client.id);
    params.set('client_secret', options.client.secret);
  }
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (options.client && auth === 'basic') headers.authorization = basic(options.client);
  return t.app.inject({ method: 'POST', url: `${path}${options.query ?? ''}`, headers, payload: params.toString() });
}

export async function passwordGrant(t: TestApp, client: TestClient, user: { userName: string; password: string }, extra: Record<string, string> = {}) {
  return postForm(t, '/oauth/token', { grant_type: 'password', username: user.userName, password: user.password, ...extra }, { client });
}

/** A SCIM GET with `token`: 200 while the token is live, 401 once it is not. */
export async function scimStatus(t: TestApp, token: string): Promise<number> {
  return (await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}` } })).statusCode;
}

/** A cookie jar of name=value pairs, fed from Set-Cookie headers. */
export class Jar {
  readonly #cookies = new Map<string, string>();
  take(response: LightMyRequestResponse): void {
    const raw = response.headers['set-cookie'];
    for (const line of Array.isArray(raw) ? raw : raw ? [raw] : []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  copyFrom(other: Jar): void {
    for (const pair of other.header().split('; ').filter(Boolean)) {
      const eq = pair.indexOf('=');
      this.#cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** The hidden fields of the first form of a page (CSRF token and the carried request). */
export function hiddenFields(html: string, action?: string): Record<string, string> {
  const forms = [...html.matchAll(/<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)];
  const form = action ? forms.find((f) => f[1] === action) : forms[0];
  assert.ok(form, `no form${action ? ` posting to ${action}` : ''} in ${html.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[m[1]!] = m[2]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  return fields;
}

/** A browser-like session on the authorization pages. */
export class PageSession {
  readonly jar = new Jar();
  readonly #t: Pick<TestApp, 'app'>;
  constructor(t: Pick<TestApp, 'app'>) {
    this.#t = t;
  }
  /** The same browser talking to another instance (another app on the same database). */
  on(t: Pick<TestApp, 'app'>): PageSession {
    const other = new PageSession(t);
    other.jar.copyFrom(this.jar);
    return other;
  }
  async get(url: string): Promise<LightMyRequestResponse> {
    const res = await this.#t.app.inject({ method: 'GET', url, headers: { cookie: this.jar.header() } });
    this.jar.take(res);
    return res;
  }
  async post(url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
    const res = await this.#t.app.inject({
      method: 'POST',
      url,
      headers: { cookie: this.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });
    this.jar.take(res);
    return res;
  }
}

/**
 * Signs in and approves through the pages; returns the redirect the browser would follow to
 * the client (its `code` and `state` in the query).
 */
export async function authorizeAndApprove(
  t: TestApp,
  query: Record<string, string>,
  user: { userName: string; password: string },
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const session = new PageSession(t);
  const page = await session.get(`/oauth/authorize?${new URLSearchParams(query).toString()}`);
  assert.equal(page.statusCode, 200, page.body);
  const signedIn = await session.post('/oauth/authorize', { ...hiddenFields(page.body), username: user.userName, password: user.password });
  assert.equal(signedIn.statusCode, 303, signedIn.body);
  const consent = await session.get(String(signedIn.headers.location));
  assert.equal(consent.statusCode, 200, consent.body);
  const decided = await session.post('/oauth/authorize/decision', { ...hiddenFields(consent.body, '/oauth/authorize/decision'), decision });
  assert.equal(decided.statusCode, 303, decided.body);
  return new URL(String(decided.headers.location));
}
