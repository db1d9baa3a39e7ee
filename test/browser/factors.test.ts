/**
 * Issue 30 item 7 in a real browser (Debian's headless Chromium, playwright-core), with Chromium's
 * WebAuthn virtual authenticator (DevTools protocol: a CTAP2 platform authenticator holding
 * discoverable credentials, the user verified): an admin registers a passkey on the Security
 * page, signs out, and signs in to the console with the passkey alone; the passkey signs in on
 * the OAuth authorization page too, up to the code sent to the client; another admin sets up an
 * authenticator app, and signs in with the password and a code (RFC 6238) typed into the second
 * step. axe-core runs on each new page (no serious or critical violation), and the Security
 * page and the second step do not scroll sideways at 390 px. The site is http://localhost:<port>
 * (WebAuthn needs a secure context and a domain as relying party ID; localhost is both).
 * REQUIRE_BROWSER=1 makes a missing browser a failure; elsewhere the tests are skipped with the reason.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createClient, createTeam, createTeamUser } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { hotp, timeStep } from '../../src/oauth/totp.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { browserMissing, freePort, launchChromium, seriousViolations, sidewaysScroll } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { base32Decode } from '../support/base32.ts';

const PASSWORD = 'browser factors password';

/** Whether the page scrolls sideways at 390 px. */
async function scrollsSideways(page: Page): Promise<boolean> {
  await page.setViewportSize({ width: 390, height: 844 });
  const wide = (await sidewaysScroll(page)) > 0;
  await page.setViewportSize({ width: 1280, height: 800 });
  return wide;
}

for (const engine of engines) describe(`second factors in Chromium (${engine.name})`, { skip: browserMissing }, () => {
  let database: TestDatabase;
  let browser: Browser;
  let rollcall: string;
  let close: () => Promise<void>;
  let page: Page;
  let cdp: CDPSession;
  let clientId: string;
  let authenticator: string;

  before(async () => {
    database = await engine.open();
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: base }, storage: database.storage });
    await served.listen({ host: '127.0.0.1', port });
    rollcall = base;
    close = () => served.close();
    const deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
    await createTeam(deps, 'acme');
    await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
    await createTeamUser(deps, 'acme', 'totp@acme.example', { password: PASSWORD, admin: true });
    clientId = (await createClient(deps, { name: 'Acme Sync', redirectUris: [`http://localhost:${port}/callback`], team: 'acme' })).client_id;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const added = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    authenticator = added.authenticatorId;
  });

  after(async () => {
    await browser?.close();
    await close?.();
    await database?.dispose();
  });

  const signInWithPassword = async (userName: string) => {
    await page.goto(`${rollcall}/console/sign-in`);
    await page.getByLabel('User name').fill(userName);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  };

  it('registers a passkey on the Security page', async () => {
    await signInWithPassword('admin@acme.example');
    await page.waitForURL(`${rollcall}/console`);
    await page.getByRole('link', { name: 'Security' }).click();
    assert.equal(await page.locator('h1').textContent(), 'Security');
    assert.deepEqual(await seriousViolations(page), [], 'axe on the Security page');
    assert.equal(await scrollsSideways(page), false, 'the Security page at 390 px');
    await page.getByLabel('Name of the new passkey').fill('Virtual <laptop>');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${rollcall}/console/security?done=passkey-added`);
    assert.match(String(await page.getByRole('status').first().textContent()), /Passkey added/);
    assert.match(String(await page.locator('tbody').textContent()), /Virtual <laptop>/);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0]!.isResidentCredential, true);
  });

  it('signs out and signs in to the console with the passkey alone', async () => {
    await page.goto(`${rollcall}/console`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${rollcall}/console/sign-in`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${rollcall}/console`);
    assert.equal(await page.locator('h1').textContent(), 'Overview');
    assert.match(String(await page.locator('.who').textContent()), /admin@acme\.example/);
  });

  it('signs in with the passkey on the OAuth authorization page and approves: the client gets a code', async () => {
    const state = 'xyz';
    await page.goto(`${rollcall}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: `${rollcall}/callback`, state }).toString()}`);
    assert.deepEqual(await seriousViolations(page), [], 'axe on the OAuth sign-in page');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.match(String(await page.locator('h1').textContent()), /Allow Acme Sync/);
    const callback = page.waitForRequest((r) => r.url().startsWith(`${rollcall}/callback`));
    await page.getByRole('button', { name: 'Allow' }).click();
    const url = new URL((await callback).url());
    assert.match(String(url.searchParams.get('code')), /^rc_ac_/);
    assert.equal(url.searchParams.get('state'), state);
  });

  it('sets up an authenticator app and signs in with the password and a code', async () => {
    await page.goto(`${rollcall}/console`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInWithPassword('totp@acme.example');
    await page.waitForURL(`${rollcall}/console`);
    await page.goto(`${rollcall}/console/security`);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = String(await page.locator('#totp-secret').textContent());
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.match(String(await page.getByRole('link', { name: 'Open in your authenticator app' }).getAttribute('href')), /^otpauth:\/\/totp\//);
    const key = base32Decode(secret);
    const step = timeStep(Date.now());
    await page.getByLabel('Code the app shows now').fill(hotp(key, step));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${rollcall}/console/security?done=totp-on`);
    assert.match(String(await page.getByRole('status').first().textContent()), /authenticator app is set up/);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInWithPassword('totp@acme.example');
    await page.waitForURL(`${rollcall}/console/sign-in/verify`);
    assert.equal(await page.locator('h1').textContent(), 'Confirm it is you');
    assert.deepEqual(await seriousViolations(page), [], 'axe on the second step');
    assert.equal(await scrollsSideways(page), false, 'the second step at 390 px');
    // The step just used is spent; the next one is within the window.
    await page.getByLabel(/Code from your authenticator app/).fill(hotp(key, step + 1));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${rollcall}/console`);
    assert.match(String(await page.locator('.who').textContent()), /totp@acme\.example/);
  });
});
