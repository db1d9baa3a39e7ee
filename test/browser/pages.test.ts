/**
 * Every console page in Chromium at 390 and 1280 px (issue 30 item 8) on SQLite, and at 1280 px on
 * PostgreSQL (the layout does not depend on the engine; the data each engine returns does). The
 * pages are not listed by hand: the test reads every GET route the app registered under
 * /console, so a new page is checked as soon as it exists. A route with a parameter gets an id
 * from the seeded data (users, a group with members, a token, a client with a secret, a
 * subscription with a delivery, a catalog with a group mapping, audit rows, logged requests); a
 * route that cannot be visited as a page is in SKIP with the reason; a route that is neither
 * visited nor skipped fails the test. Some routes are visited more than once, in the states worth
 * seeing (visitsOf): a filter, each wizard path and the connection it made, a secret shown once
 * after its form's post/redirect/get, a setup link's landing page and restricted session, a fresh
 * password link, the sign-in's second step, the wizard's polled Test state. Each visit must end on
 * its own path (a redirect elsewhere, such as to sign-in, is a failure). For each page: answered 200, no failed request and no
 * console error (a CSP refusal is one), no axe-core violation of any impact, no sideways
 * scrolling of the page, and at 390 px every table stacked (table.ts) with none scrolling
 * sideways inside its box. Screenshots go to docs/console/<page>-<width>.png only with
 * UPDATE_SCREENSHOTS=1 (test/support/browser.ts). Also: the icon is served and linked, and the
 * console script shows each timestamp in the reader's local time after its relative text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createClient, createTeam, createTeamUser, issueToken, requireTeam, updateTeam } from '../../src/admin.ts';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { systemClock } from '../../src/clock.ts';
import { makeSetupLink } from '../../src/console/setup-links.ts';
import { setUpConnection } from '../../src/console/wizard.ts';
import { PATHS } from '../../src/console/wizard-paths.ts';
import { addClientSecret } from '../../src/oauth/client-secret-admin.ts';
import { createConnection } from '../../src/oauth/connections.ts';
import { issueProvisioningToken } from '../../src/oauth/provisioning.ts';
import { hotp, timeStep } from '../../src/oauth/totp.ts';
import { ReceiverPolicy } from '../../src/events/receivers.ts';
import { createSubscription } from '../../src/events/subscriptions.ts';
import { LOOPBACK_RECEIVERS, TEST_CONFIG } from '../support/app.ts';
import { axeViolations, browserMissing, describeViolations, freePort, launchChromium, overflowOf, screenshot } from '../support/browser.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { base32Decode } from '../support/base32.ts';

const PASSWORD = 'every console page password';
const WIDTHS = [[390, 844], [1280, 800]] as const;
const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';

/** GET routes under /console that are not pages to visit, and why. */
const SKIP: readonly (readonly [RegExp, string])[] = [
  [/^\/console\/assets\//, 'a static asset (stylesheet, script, icon), not a page'],
  [/^\/console\/(users|groups|audit)\.csv$/, 'a CSV download (test/http/console-export.test.ts and test/browser/audit.test.ts read it), not a page'],
];

/** Routes visited signed out. */
const SIGNED_OUT = new Set(['/console/sign-in', '/console/password', '/console/setup/:link']);

/** The file names of the screenshots (README.md links some); any other page is named after its path. */
const NAMES: Readonly<Record<string, string>> = {
  '/console': 'overview',
  '/console/users/:id': 'user',
  '/console/groups/:id': 'group',
  '/console/events/subscriptions/:id': 'subscription',
  '/console/connections/:id': 'connection',
  '/console/connections/clients/:id': 'client',
  '/console/connections/clients/:id/secrets/:secretId/revoke': 'client-secret-revoke',
  '/console/connections/tokens/:id/revoke': 'token-revoke',
  '/console/connections/:id/delete': 'connection-delete',
  '/console/access/mappings': 'mappings',
  '/console/access/holders': 'holders',
  '/console/admins/:id/remove': 'admin-remove',
  '/console/admins/applications/:id/revoke': 'application-revoke',
  '/console/connect/links/:id/revoke': 'connect-link-withdraw',
  '/console/setup/:link': 'setup-link',
  '/console/setup/wizard': 'setup-wizard',
  '/console/password': 'password-link',
  '/console/sign-in/verify': 'sign-in-verify',
  '/console/events/subscriptions/:id/replay': 'subscription-replay',
  '/console/events/subscriptions/:id/delete': 'subscription-delete',
  '/console/users/new': 'user-new',
  '/console/users/:id/edit': 'user-edit',
  '/console/users/:id/deactivate': 'user-deactivate',
};

/** The query a page needs to show something. */
const QUERIES: Readonly<Record<string, string>> = {
  '/console/access/holders': '?entry=role%3Aadmin',
  '/console/events/subscriptions/:id/replay': '?from=1',
};

/** The seeded ids, by the path segment before a route's parameter (`/users/:id` takes the user's). */
type Seeded = Record<string, string>;

/**
 * One visit of a route. By default its path is the route's, parameters filled from the seeded
 * ids; `arrive` instead gets the page there itself (a form posted and redirected, a sign-in that
 * stops at its second step) and returns the path it must end on.
 */
interface Visit {
  readonly name: string;
  readonly path?: string;
  readonly arrive?: (page: Page) => Promise<string>;
  /** The browser context: the admin's (default), none, or a setup link's restricted session. */
  readonly as?: 'admin' | 'out' | 'setup';
}

const nameOf = (url: string): string => NAMES[url] ?? url.replace(/^\/console\/?/, '').replace(/:/g, '').replace(/\//g, '-');

/** The concrete path of a route, its parameters filled from the seeded ids; undefined when one is unknown. */
function pathOf(url: string, seeded: Seeded): string | undefined {
  const segments = url.split('/');
  const filled = segments.map((segment, i) => (segment.startsWith(':') ? seeded[segments[i - 1] ?? ''] : segment));
  if (filled.some((s) => s === undefined)) return undefined;
  return `${filled.map((s) => encodeURIComponent(s!).replace(/%2F/g, '/')).join('/')}${QUERIES[url] ?? ''}`;
}

/** The GET routes the app registered under /console, with a path to visit or the reason they are skipped. */
function consoleRoutes(app: FastifyInstance): { url: string; skip?: string }[] {
  const routes = (app.openapiRoutes ?? []).filter((r) => r.method === 'GET' && (r.url === '/console' || r.url.startsWith('/console/')));
  const urls = [...new Set(routes.map((r) => r.url))].sort();
  return urls.map((url) => {
    const reason = SKIP.find(([pattern]) => pattern.test(url))?.[1];
    return reason === undefined ? { url } : { url, skip: reason };
  });
}

/** The seeded team: what every page shows, including long values that must wrap at 390 px. */
async function seed(database: TestDatabase, rollcall: string, receiver: Receiver): Promise<Seeded> {
  const deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
  await createTeam(deps, 'acme');
  await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
  const secondAdmin = String((await createTeamUser(deps, 'acme', 'second.admin@acme.example', { password: PASSWORD, admin: true })).id);
  await createTeamUser(deps, 'acme', 'totp.admin@acme.example', { password: PASSWORD, admin: true });
  const team0 = await requireTeam(deps, 'acme');
  const connection = await createConnection(database.storage, systemClock, { teamId: team0.id, name: 'Entra ID production', provider: 'entra', actor: CLI_ACTOR, requestId: null });
  const issued = await issueProvisioningToken(database.storage, systemClock, { teamId: team0.id, connectionId: connection.id, name: 'Entra ID 2026', scope: ['read', 'write'], ttlSeconds: 86_400, actor: CLI_ACTOR, requestId: null });
  const token = issued.token;
  const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${rollcall}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { ...(text ? (JSON.parse(text) as Record<string, unknown>) : {}), status: res.status };
  };
  const created = async (path: string, body: unknown): Promise<string> => {
    const res = await call('POST', path, body);
    assert.equal(res.status, 201, JSON.stringify(res));
    return String(res.id);
  };

  const users: string[] = [];
  users.push(
    await created('/v2/scim/Users', {
      schemas: [USER_SCHEMA, ENTERPRISE],
      userName: 'maximiliana.konstantinopoulou-vandersteenhoven@engineering.acme-international.example',
      name: { givenName: 'Maximiliana', familyName: 'Konstantinopoulou-Vandersteenhoven', formatted: 'Maximiliana Konstantinopoulou-Vandersteenhoven' },
      displayName: 'Maximiliana K.-V.',
      title: 'Principal site reliability engineer',
      externalId: '7f3c2a9e-5b1d-4c8e-9a6f-0d2b4e8c1a73',
      emails: [{ value: 'maximiliana.konstantinopoulou-vandersteenhoven@engineering.acme-international.example', type: 'work', primary: true }],
      phoneNumbers: [{ value: '+49 30 1234567890', type: 'work' }],
      addresses: [{ streetAddress: 'Friedrichstraße 123', locality: 'Berlin', postalCode: '10117', country: 'DE', type: 'work' }],
      [ENTERPRISE]: { employeeNumber: '000123456789', department: 'Infrastructure and reliability', costCenter: 'CC-4711-BERLIN' },
    }),
  );
  for (const userName of ['ada.lovelace@acme.example', 'grace.hopper@acme.example', '<script>alert(1)</script>@x.example', 'ümlaut.ñame@acme.example']) {
    users.push(await created('/v2/scim/Users', { schemas: [USER_SCHEMA], userName, name: { givenName: userName.split('.')[0], familyName: 'Example' } }));
  }
  const leaver = await created('/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'left.the.company@acme.example' });
  assert.equal((await call('PATCH', `/v2/scim/Users/${leaver}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] })).status, 200);
  // A refused request, for the request log.
  assert.equal((await call('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'ada.lovelace@acme.example' })).status, 409);

  const group = await created('/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Engineering and infrastructure operations', members: users.map((value) => ({ value })) });
  await created('/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Sales', members: [{ value: users[1] }] });

  const team = await requireTeam(deps, 'acme');
  await seedCatalog(database.storage, team.id, {
    roles: [{ value: 'admin', displayName: 'Administrator', description: 'Manages the application and its users' }, { value: 'reader', displayName: 'Reader' }],
    types: [{ name: 'License', endpoint: '/Licenses', multiValued: false, entitlements: [{ value: 'e5', displayName: 'Office 365 E5', description: 'The full suite' }] }],
  });
  // The team administration API takes an administrator's token, not a connection's.
  const adminToken = (await issueToken(deps, 'acme', 'admin@acme.example', { scope: ['read', 'write'], ttlSeconds: 3600, name: 'admin catalog' })).token;
  const mapped = await fetch(`${rollcall}/v2/admin/Catalog/mappings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ group, kind: 'role', value: 'admin' }),
  });
  assert.equal(mapped.status, 201, await mapped.text());

  const client = await createClient(deps, { name: 'Entra ID gallery app', redirectUris: [], team: 'acme', connection: 'Entra ID production', tokenLifetime: 3600 });
  // An application holding a token for the team (the Admins page's revoke).
  const application = await createClient(deps, { name: 'Payroll <app>', redirectUris: [], team: 'acme' });
  const granted = await fetch(`${rollcall}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${application.client_id}:${application.client_secret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  });
  assert.equal(granted.status, 200, await granted.clone().text());

  // A connection made by each path of the wizard; the generic one has made a request (Test is green), Entra's token a refused one.
  const wizard: Record<string, string> = {};
  const wizardInputs = { tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', subject: '3c9e2f4a-8b1d-4e6f-a5c7-0d2b9e8f1a46', redirectUri: 'https://system-admin.okta.com/admin/app/cpc/rollcall/oauth/callback' };
  for (const path of PATHS) {
    const made = await setUpConnection(deps, { team: { id: team0.id, name: 'acme' }, path, inputs: { name: `${path.providerLabel}: ${path.method}`.slice(0, 100), ...wizardInputs }, actor: CLI_ACTOR, requestId: null });
    wizard[`wizard:${path.id}`] = made.connectionId;
    if (made.secret?.kind === 'token' && (path.id === 'generic-token' || path.id === 'entra-token')) {
      const res = await fetch(`${rollcall}/v2/scim/Users${path.id === 'generic-token' ? '?count=1' : ''}`, {
        method: path.id === 'generic-token' ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${made.secret.value}`, 'content-type': 'application/scim+json' },
        ...(path.id === 'generic-token' ? {} : { body: JSON.stringify({ schemas: [USER_SCHEMA], userName: 'ada.lovelace@acme.example' }) }),
      });
      assert.equal(res.status, path.id === 'generic-token' ? 200 : 409, await res.text());
    }
  }
  // A setup link waiting to be used: its landing page, and its withdrawal's confirmation.
  const link = await makeSetupLink(database.storage, systemClock, { teamId: team0.id, userId: 'seed', recipient: 'it.colleague@acme.example', hours: 72, actor: CLI_ACTOR, requestId: null });
  const secret = await addClientSecret({ storage: database.storage, clock: systemClock, actor: CLI_ACTOR, requestId: null }, client.client_id, { name: 'Entra ID 2027', days: 20 });

  // Event subscriptions are an administrator's (the operator's here); a provisioning token may not make one.
  const subscriptionId = (await createSubscription({ storage: database.storage, clock: systemClock, receivers: new ReceiverPolicy(LOOPBACK_RECEIVERS) }, team, { method: 'push', url: `${receiver.url}?team=acme`, events: ['create', 'patch'] })).subscription.id;
  await created('/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'delivered.event@acme.example' });
  await receiver.waitFor(1, 10_000);
  await updateTeam(deps, 'acme', 'visible');
  // The request log and the delivery log are written off the request path, within a second.
  await new Promise((r) => setTimeout(r, 1500));
  return {
    users: users[0]!,
    deactivated: leaver,
    groups: group,
    clients: client.client_id,
    secrets: secret.id,
    subscriptions: subscriptionId,
    connections: connection.id,
    tokens: issued.id,
    admins: secondAdmin,
    applications: application.client_id,
    links: link.id,
    setup: link.token,
    ...wizard,
  };
}

for (const engine of engines) {
  describe(`every console page in Chromium on ${engine.name}`, { skip: browserMissing }, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let rollcall: string;
    let browser: Browser;
    let receiver: Receiver;
    let seeded: Seeded;

    before(async () => {
      receiver = await startReceiver();
      database = await engine.open();
      const port = await freePort();
      app = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage });
      rollcall = await app.listen({ host: '127.0.0.1', port });
      seeded = await seed(database, rollcall, receiver);
      browser = await launchChromium();
    });

    after(async () => {
      await browser?.close();
      await app?.close();
      await database?.dispose();
      await receiver?.close();
    });

    /** A browser context at `width`, signed in as `who` (an admin of the team) unless undefined. */
    async function contextAt(width: number, height: number, who?: string): Promise<BrowserContext> {
      const context = await browser.newContext({ viewport: { width, height }, locale: 'en-GB', timezoneId: 'Europe/Berlin' });
      if (who !== undefined) {
        const page = await context.newPage();
        await page.goto(`${rollcall}/console/sign-in`);
        await page.getByLabel('User name').fill(who);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${rollcall}/console`);
        await page.close();
      }
      return context;
    }

    /** A browser context holding the restricted session of a new setup link (its landing page's button pressed). */
    async function setupContextAt(width: number, height: number): Promise<BrowserContext> {
      const team = await requireTeam({ storage: database.storage, clock: systemClock, baseUrl: rollcall }, 'acme');
      const link = await makeSetupLink(database.storage, systemClock, { teamId: team.id, userId: 'test', recipient: `colleague.${width}@acme.example`, hours: 24, actor: CLI_ACTOR, requestId: null });
      const context = await contextAt(width, height);
      const page = await context.newPage();
      await page.goto(`${rollcall}/console/setup/${link.token}`);
      await page.getByRole('button', { name: 'Start the connection wizard' }).click();
      await page.waitForURL(`${rollcall}/console/setup/wizard`);
      await page.close();
      return context;
    }

    /** The second factor the verify page asks for: an authenticator app of totp.admin, set up once. */
    async function totpAdmin(): Promise<void> {
      if (totpReady) return;
      const context = await contextAt(1280, 800, 'totp.admin@acme.example');
      try {
        const page = await context.newPage();
        await page.goto(`${rollcall}/console/security`);
        await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
        const secret = String(await page.locator('#totp-secret').textContent());
        await page.getByLabel('Code the app shows now').fill(hotp(base32Decode(secret), timeStep(Date.now())));
        await page.getByRole('button', { name: 'Confirm' }).click();
        await page.waitForURL(`${rollcall}/console/security?done=totp-on`);
        totpReady = true;
      } finally {
        await context.close();
      }
    }
    let totpReady = false;

    /** Posts a form on a page reached from `from` and returns the path the redirect lands on. */
    async function posted(page: Page, from: string, fill: Record<string, string>, button: string, lands: RegExp): Promise<string> {
      await page.goto(`${rollcall}${from}`);
      for (const [label, value] of Object.entries(fill)) await page.getByLabel(label, { exact: true }).fill(value);
      await page.getByRole('button', { name: button }).click();
      await page.waitForURL(lands);
      return new URL(page.url()).pathname;
    }

    /** A password link for second.admin, made on the Admins page as the admin would. */
    async function passwordLink(context: BrowserContext): Promise<string> {
      const page = await context.newPage();
      try {
        await page.goto(`${rollcall}/console/admins`);
        await page.getByRole('button', { name: 'Make a password link for second.admin@acme.example' }).click();
        const url = new URL(String(await page.locator('#password-link').textContent()));
        return `${url.pathname}${url.search}`;
      } finally {
        await page.close();
      }
    }

    /**
     * The visits of a route: its seeded page, and the states of it worth seeing (a filter, a
     * secret shown once, each wizard path); undefined when the seeded data cannot fill it.
     */
    function visitsOf(url: string, width: number, state: { setupConnection?: string }): Visit[] | undefined {
      const today = new Date().toISOString().slice(0, 10);
      const wizardPaths = (base: string, setup: boolean) => PATHS.filter((p) => !setup || p.forSetupLinks).map((p): Visit => ({ name: `${setup ? 'setup-wizard' : 'connect'}-${p.id}`, path: `${base}/${p.id}`, ...(setup ? { as: 'setup' as const } : {}) }));
      // The Test state is a fragment the connection page polls until it is green (the seeded generic connection's page shows green).
      const polled = (page: Page, path: string) => async () => {
        const poll = page.waitForResponse((r) => r.url() === `${rollcall}${path}/test`);
        await page.goto(`${rollcall}${path}`);
        assert.equal((await poll).status(), 200, 'the Test state is polled');
        await page.waitForTimeout(200);
        return path;
      };
      const special: Record<string, (page?: Page) => Visit[]> = {
        '/console/users': () => [{ name: 'users' }, { name: 'users-deactivated', path: '/console/users?status=deactivated' }],
        '/console/users/:id': () => [{ name: 'user' }, { name: 'user-deactivated', path: `/console/users/${seeded.deactivated}` }],
        '/console/groups/:id': () => [{ name: 'group' }, { name: 'group-member-search', path: `/console/groups/${seeded.groups}?mq=ada&add=grace` }],
        '/console/audit': () => [{ name: 'audit' }, { name: 'audit-filtered', path: `/console/audit?action=create&from=${today}` }],
        '/console/admins': () => [
          { name: 'admins' },
          { name: 'admins-password-link', arrive: async (page) => posted(page, '/console/admins', {}, 'Make a password link for second.admin@acme.example', /\/console\/admins$/) },
        ],
        '/console/security': () => [
          { name: 'security' },
          {
            name: 'security-totp-pending',
            arrive: async (page) => {
              await page.goto(`${rollcall}/console/security`);
              const start = page.getByRole('button', { name: 'Set up an authenticator app' });
              if ((await start.count()) > 0) await start.click();
              await page.locator('#totp-secret').waitFor();
              return '/console/security';
            },
          },
        ],
        '/console/connect': () => [
          { name: 'connect' },
          { name: 'connect-link-made', arrive: async (page) => posted(page, '/console/connect', { 'For (email or name)': `it.${width}@acme.example` }, 'Make setup link', /\/console\/connect$/) },
        ],
        '/console/connect/:path': () => wizardPaths('/console/connect', false),
        '/console/connect/connections/:id': () => [
          ...PATHS.map((p): Visit => ({ name: `connect-${p.id}-connection`, path: `/console/connect/connections/${seeded[`wizard:${p.id}`]}` })),
          { name: 'connect-secret-shown', arrive: async (page) => posted(page, '/console/connect/generic-token', { 'Connection name': `Scripts at ${width} px` }, 'Create the connection', /\/console\/connect\/connections\/[^/]+$/) },
        ],
        '/console/connect/connections/:id/test': () => [
          { name: 'connect-test-red', arrive: async (page) => polled(page, `/console/connect/connections/${seeded['wizard:entra-token']}`)() },
        ],
        '/console/setup/wizard': () => [{ name: 'setup-wizard', path: '/console/setup/wizard', as: 'setup' }],
        '/console/setup/wizard/:path': () => wizardPaths('/console/setup/wizard', true),
        '/console/setup/wizard/connections/:id': () => [
          {
            name: 'setup-wizard-connection',
            as: 'setup',
            arrive: async (page) => {
              state.setupConnection = await posted(page, '/console/setup/wizard/generic-token', { 'Connection name': `Set up by a colleague at ${width} px` }, 'Create the connection', /\/console\/setup\/wizard\/connections\/[^/]+$/);
              return state.setupConnection;
            },
          },
        ],
        '/console/setup/wizard/connections/:id/test': () => (state.setupConnection ? [{ name: 'setup-wizard-test', as: 'setup', arrive: async (page) => polled(page, state.setupConnection!)() }] : []),
        '/console/connections/:id/tokens/:tokenId/issued': () => [
          {
            name: 'connection-token-issued',
            arrive: async (page) => posted(page, `/console/connections/${seeded.connections}`, { 'Token name': `Token at ${width} px` }, 'Issue token', /\/issued$/),
          },
        ],
        '/console/password': () => [{ name: 'password-link', as: 'out' }],
        '/console/sign-in/verify': () => [
          {
            name: 'sign-in-verify',
            as: 'out',
            arrive: async (page) => {
              await totpAdmin();
              await page.goto(`${rollcall}/console/sign-in`);
              await page.getByLabel('User name').fill('totp.admin@acme.example');
              await page.getByLabel('Password').fill(PASSWORD);
              await page.getByRole('button', { name: 'Sign in' }).click();
              await page.waitForURL(`${rollcall}/console/sign-in/verify`);
              return '/console/sign-in/verify';
            },
          },
        ],
      };
      const path = pathOf(url, seeded);
      const visits = special[url]?.() ?? (path === undefined ? undefined : [{ name: nameOf(url) }]);
      // A visit without a path of its own or a way there takes the route's seeded path.
      return visits?.map((v) => ({ ...(v.path === undefined && v.arrive === undefined ? { path } : {}), ...v, ...(v.as === undefined && SIGNED_OUT.has(url) ? { as: 'out' as const } : {}) }));
    }

    /** Visits a page and checks it; returns the problems found. */
    async function check(page: Page, visit: Visit, width: number): Promise<string[]> {
      const problems: string[] = [];
      const onConsole = (message: { type(): string; text(): string }) => void (message.type() === 'error' && problems.push(`console error: ${message.text()}`));
      const onResponse = (response: { status(): number; url(): string }) => void (response.status() >= 400 && problems.push(`${response.status()} for ${response.url()}`));
      page.on('console', onConsole);
      page.on('response', onResponse);
      try {
        let expected: string;
        if (visit.arrive) {
          expected = await visit.arrive(page);
        } else {
          const response = await page.goto(`${rollcall}${visit.path}`, { waitUntil: 'load' });
          if (response?.status() !== 200) problems.push(`answered ${response?.status()}`);
          expected = new URL(`${rollcall}${visit.path}`).pathname;
        }
        const at = new URL(page.url()).pathname;
        if (decodeURIComponent(at) !== decodeURIComponent(expected)) problems.push(`ended on ${at}, not ${expected}`);
        await screenshot(page, `${visit.name}-${width}.png`, { fullPage: true });
        problems.push(...describeViolations(await axeViolations(page)).map((v) => `axe: ${v}`));
        const overflow = await overflowOf(page);
        if (overflow.scrollWidth > overflow.viewport) problems.push(`scrolls sideways: ${overflow.scrollWidth} px wide in ${overflow.viewport}; ${overflow.wide.join('; ')}`);
        if (width <= 640) {
          if (overflow.scrollingTables.length > 0) problems.push(`tables scroll sideways: ${overflow.scrollingTables.join('; ')}`);
          if (overflow.unstackedTables > 0) problems.push(`${overflow.unstackedTables} table(s) not rendered by dataTable (table.ts): they do not stack`);
        }
      } finally {
        page.off('console', onConsole);
        page.off('response', onResponse);
      }
      return problems;
    }

    // A page's layout at a width does not depend on the engine, only its data does: PostgreSQL's
    // pass checks what its data makes of each page at the wide width only.
    for (const [width, height] of engine.name === 'sqlite' ? WIDTHS : WIDTHS.slice(1)) {
      it(`every GET route under /console is a page that passes at ${width} px, or is skipped with a reason`, async (t) => {
        const routes = consoleRoutes(app);
        assert.ok(routes.length >= 40, `the app registers the console's routes (${routes.length})`);
        const contexts = {
          admin: await contextAt(width, height, 'admin@acme.example'),
          out: await contextAt(width, height),
          setup: await setupContextAt(width, height),
        };
        const unvisitable: string[] = [];
        const state: { setupConnection?: string } = {};
        const names = new Set<string>();
        try {
          for (const route of routes) {
            if (route.skip !== undefined) {
              t.diagnostic(`skipped ${route.url}: ${route.skip}`);
              continue;
            }
            const visits = visitsOf(route.url, width, state);
            if (visits === undefined || visits.length === 0) {
              unvisitable.push(route.url);
              continue;
            }
            for (const visit of visits) {
              assert.ok(!names.has(visit.name), `one screenshot name per visit: ${visit.name}`);
              names.add(visit.name);
              // A password link is made fresh for each visit (it is single use).
              const resolved = route.url === '/console/password' ? { ...visit, path: await passwordLink(contexts.admin) } : visit;
              await t.test(`${route.url} as ${visit.name} (${resolved.path ?? 'reached through its form'})`, async () => {
                const page = await contexts[visit.as ?? 'admin'].newPage();
                try {
                  assert.deepEqual(await check(page, resolved, width), [], `${visit.name} at ${width} px`);
                } finally {
                  await page.close();
                }
              });
            }
          }
        } finally {
          for (const context of Object.values(contexts)) await context.close();
        }
        assert.deepEqual(unvisitable, [], 'routes with a parameter the seeded data has no id for: seed one (seed, Seeded) or add the route to SKIP with the reason');
      });
    }

    it('serves the icon every page links, and at /favicon.ico, as SVG', async () => {
      for (const path of ['/console/assets/favicon.svg', '/favicon.ico']) {
        const res = await fetch(`${rollcall}${path}`);
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.get('content-type'), 'image/svg+xml', path);
        assert.match(await res.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      }
      for (const path of ['/console/sign-in', '/console']) {
        const html = await (await fetch(`${rollcall}${path}`, { redirect: 'manual' })).text();
        if (html) assert.match(html, /<link rel="icon" href="\/console\/assets\/favicon\.svg" type="image\/svg\+xml">/, path);
      }
    });

    it("shows every timestamp in the reader's local time after its relative text", async () => {
      const context = await contextAt(1280, 800, 'admin@acme.example');
      try {
        const page = await context.newPage();
        await page.goto(`${rollcall}/console/events/subscriptions/${encodeURIComponent(seeded.subscriptions!)}`);
        const times = await page.locator('time[datetime]').evaluateAll((nodes) => nodes.map((n) => ({ datetime: n.getAttribute('datetime') ?? '', text: n.textContent ?? '', title: n.getAttribute('title') ?? '' })));
        assert.ok(times.length >= 2, 'the subscription page shows its creation time and a delivery attempt');
        const local = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'Europe/Berlin' });
        for (const time of times) {
          assert.match(time.text, /^(just now|\d+ (seconds?|minutes?) ago) · /, time.text);
          assert.equal(time.text.split(' · ')[1], local.format(new Date(time.datetime)), 'the local time of Europe/Berlin, in the reader\'s locale');
          assert.match(time.title, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
        }
      } finally {
        await context.close();
      }
    });
  });
}
