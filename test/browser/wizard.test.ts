/**
 * The connection wizard in a real browser (Debian's headless Chromium, playwright-core) at 390 px
 * (issue 30, items 6 and 9): each path (Entra ID gallery with client credentials and with
 * workload identity federation, Entra ID non-gallery with a token, Okta with the authorization
 * code flow and with a token, a generic SCIM client) is followed from "Connect a provider" to the
 * values to paste (copied with the copy button), then a fake identity provider on 127.0.0.1
 * (test/support/fake-idp.ts) makes the connection's first request with those values and the page
 * turns green by itself; a failing request turns it red with the request log's reason. A setup
 * link is opened by a fresh browser, used once (refused the second time), reaches only the
 * wizard, and an expired one is refused. axe-core runs on every page (no serious or critical
 * violation) and no page scrolls sideways. REQUIRE_BROWSER=1 makes a missing browser a failure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createTeam, createTeamUser } from '../../src/admin.ts';
import type { Clock } from '../../src/clock.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { browserMissing, freePort, launchChromium, seriousViolations, sidewaysScroll, signInToConsole } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { EntraStandIn } from '../support/entra-standin.ts';
import { FakeIdp } from '../support/fake-idp.ts';

const PASSWORD = 'browser wizard password';
const WIDTH = 390;

/** Real time, moved forward by the test (a link's expiry). */
class MovableClock implements Clock {
  offset = 0;
  now(): Date {
    return new Date(Date.now() + this.offset);
  }
}

/** axe finds nothing serious, and the page does not scroll sideways. */
async function checked(page: Page, what: string): Promise<void> {
  assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
  const sideways = await sidewaysScroll(page);
  assert.ok(sideways <= 0, `${what} scrolls sideways at ${WIDTH} px (by ${sideways} px)`);
}

for (const engine of engines) describe(`connection wizard in Chromium at ${WIDTH} px, on ${engine.name}`, { skip: browserMissing }, () => {
  let database: TestDatabase;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let rollcall: string;
  let close: () => Promise<void>;
  let idp: FakeIdp;
  let entra: EntraStandIn;
  const clock = new MovableClock();

  before(async () => {
    database = await engine.open();
    const port = await freePort();
    const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage, clock });
    rollcall = await served.listen({ host: '127.0.0.1', port });
    close = () => served.close();
    const deps = { storage: database.storage, clock, baseUrl: rollcall };
    await createTeam(deps, 'acme');
    await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
    idp = await FakeIdp.start();
    entra = await EntraStandIn.start(() => clock.now());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: WIDTH, height: 844 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rollcall });
    page = await context.newPage();
    await signInToConsole(page, rollcall, 'admin@acme.example', PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await close?.();
    await idp?.close();
    await entra?.close();
    await database?.dispose();
  });

  /** Follows a path from the wizard's start to its connection page; returns the values to paste. */
  async function follow(on: Page, base: string, method: string, fill: Record<string, string>, prepare?: () => Promise<void>): Promise<Record<string, string>> {
    await on.goto(`${rollcall}${base}`);
    await checked(on, 'the wizard\'s start');
    await on.getByRole('link', { name: method, exact: true }).click();
    await checked(on, `the form of ${method}`);
    await prepare?.();
    for (const [label, value] of Object.entries(fill)) await on.getByLabel(label, { exact: true }).fill(value);
    await on.getByRole('button', { name: 'Create the connection' }).click();
    await on.waitForURL(/\/connections\/[A-Z0-9]{20}$/);
    await checked(on, `the values of ${method}`);
    assert.equal(await on.locator('#test-state [data-state="waiting"]').count(), 1);
    const values: Record<string, string> = {};
    for (const code of await on.locator('code[id^="v-"]').all()) values[String(await code.getAttribute('id')).slice(2)] = String(await code.textContent()).trim();
    return values;
  }

  /** The Test state once it turned `state` by itself (the page polls), its text. */
  async function turned(on: Page, state: 'ok' | 'failed'): Promise<string> {
    await on.locator(`#test-state [data-state="${state}"]`).waitFor({ timeout: 20_000 });
    await checked(on, `the Test state "${state}"`);
    return String(await on.locator('#test-state').textContent());
  }

  it('Entra ID non-gallery, Secret Token: Test Connection turns the page green', async () => {
    const values = await follow(page, '/console/connect', 'Non-gallery app: Secret Token', { 'Connection name': 'Entra ID <prod> "west"' });
    assert.equal(values['tenant-url'], `${rollcall}/v2/scim`);
    await page.getByRole('button', { name: 'Copy Secret Token' }).click();
    assert.equal(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), values.token);
    assert.equal((await idp.scim(values['tenant-url']!, values.token!)).status, 200);
    const text = await turned(page, 'ok');
    assert.match(text, /Connected\..*GET \/v2\/scim\/Users\?filter=userName.*200/s);
    await page.reload();
    assert.equal(await page.locator('#v-token').count(), 0, 'the token is shown once');
    assert.equal(await page.locator('#test-state [data-state="ok"]').count(), 1);
  });

  it('Entra ID gallery, client credentials: the token endpoint, then SCIM; green', async () => {
    const values = await follow(page, '/console/connect', 'Gallery app: OAuth 2.0 client credentials', { 'Connection name': 'Entra ID gallery' });
    assert.equal(values['token-endpoint'], `${rollcall}/oauth/token`);
    assert.match(values['client-secret']!, /^rc_cs_/);
    assert.equal(await idp.clientCredentials(values['token-endpoint']!, values['client-id']!, values['client-secret']!, values['tenant-url']!), 200);
    assert.match(await turned(page, 'ok'), /GET \/v2\/scim\/Users.*200/s);
  });

  it('Entra ID gallery, workload identity federation: an assertion of the tenant (keys on a 127.0.0.1 JWKS), then SCIM; green', async () => {
    const values = await follow(
      page,
      '/console/connect',
      'Gallery app: workload identity federation',
      { 'Connection name': 'Entra ID federated', 'Object ID of the provisioning identity': entra.objectId, 'Issuer URL (instead of the tenant ID)': entra.issuer },
      () => page.getByText('Another cloud or issuer').click(),
    );
    assert.equal(values.issuer, entra.issuer);
    assert.equal(await idp.federated(entra, values['token-endpoint']!, values['client-id']!, values['tenant-url']!), 200);
    assert.match(await turned(page, 'ok'), /200/);
  });

  it('Okta, authorization code: Okta sends the admin through Rollcall\'s sign-in, exchanges the code, queries; green', async () => {
    const values = await follow(page, '/console/connect', 'OAuth 2.0 authorization code', { 'Connection name': 'Okta production', 'Okta\'s redirect URI': idp.oktaRedirectUri });
    idp.okta = { authorizeEndpoint: values['authorize-endpoint']!, tokenEndpoint: values['token-endpoint']!, clientId: values['client-id']!, clientSecret: values['client-secret']!, scopes: values.scopes!, scimBase: values['base-url']! };
    const okta = await context.newPage();
    await okta.goto(`${idp.origin}/authenticate`);
    await okta.getByLabel('User name').fill('admin@acme.example');
    await okta.getByLabel('Password').fill(PASSWORD);
    await okta.getByRole('button', { name: 'Sign in' }).click();
    await okta.getByRole('button', { name: 'Allow' }).click();
    await okta.waitForURL(`${idp.oktaRedirectUri}?**`);
    assert.equal(String(await okta.locator('#result').textContent()), 'Rollcall answered 200');
    await okta.close();
    assert.match(await turned(page, 'ok'), /200/);
  });

  it('Okta, HTTP Header token: green', async () => {
    const values = await follow(page, '/console/connect', 'HTTP Header: Bearer token', { 'Connection name': 'Okta header' });
    assert.equal(values['unique-id'], 'userName');
    assert.equal((await idp.scim(values['base-url']!, values.token!)).status, 200);
    assert.match(await turned(page, 'ok'), /200/);
  });

  it('a generic SCIM client: a failing first request turns the page red with the reason, a good one green', async () => {
    const values = await follow(page, '/console/connect', 'Bearer token', { 'Connection name': 'nightly script' });
    assert.equal((await idp.scim(values['base-url']!, values.token!, '/Users?filter=userName%20zz%20%22x%22')).status, 400);
    const red = await turned(page, 'failed');
    assert.match(red, /The last request failed\..*400.*invalidFilter: /s);
    assert.equal((await idp.scim(values['base-url']!, values.token!)).status, 200);
    assert.match(await turned(page, 'ok'), /200/);
  });

  it('a setup link: opened by a fresh browser, used once, reaching only the wizard; refused the second time; an expired one refused', async () => {
    await page.goto(`${rollcall}/console/connect`);
    await page.getByLabel('For (email or name)').fill('it-admin@acme.example');
    await page.getByRole('button', { name: 'Make setup link' }).click();
    const link = String(await page.locator('#setup-link').textContent()).trim();
    await checked(page, 'the setup link made');
    await page.reload();
    assert.equal(await page.locator('#setup-link').count(), 0, 'shown once');

    const fresh = await browser.newContext({ viewport: { width: WIDTH, height: 844 } });
    const colleague = await fresh.newPage();
    await colleague.goto(link);
    await checked(colleague, 'the setup link\'s landing');
    await colleague.getByRole('button', { name: 'Start the connection wizard' }).click();
    await colleague.waitForURL(`${rollcall}/console/setup/wizard`);
    assert.equal(await colleague.locator('nav.main').count(), 0, 'no console navigation');
    assert.equal(await colleague.getByRole('link', { name: 'OAuth 2.0 authorization code' }).count(), 0);
    const values = await follow(colleague, '/console/setup/wizard', 'Non-gallery app: Secret Token', { 'Connection name': 'Entra via a link' });
    assert.equal((await idp.scim(values['tenant-url']!, values.token!)).status, 200);
    assert.match(await turned(colleague, 'ok'), /200/);
    await colleague.goto(`${rollcall}/console/users`);
    assert.ok(colleague.url().endsWith('/console/sign-in'), 'the rest of the console is out of reach');
    await fresh.close();

    const another = await browser.newContext({ viewport: { width: WIDTH, height: 844 } });
    const second = await another.newPage();
    const refused = await second.goto(link);
    assert.equal(refused?.status(), 410);
    assert.match(String(await second.getByRole('alert').textContent()), /used already/);
    await checked(second, 'a used link');

    await page.goto(`${rollcall}/console/connect`);
    await page.getByLabel('For (email or name)').fill('late@acme.example');
    await page.getByLabel('Expires in').selectOption('24');
    await page.getByRole('button', { name: 'Make setup link' }).click();
    const expiring = String(await page.locator('#setup-link').textContent()).trim();
    clock.offset += 25 * 3_600_000;
    const expired = await second.goto(expiring);
    assert.equal(expired?.status(), 410);
    assert.match(String(await second.getByRole('alert').textContent()), /expired/);
    await another.close();
  });
});
