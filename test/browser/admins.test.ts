/**
 * Issue 30, items 3 and 5 in a real browser (Debian's headless Chromium, playwright-core), at
 * 1280 px and at 390 px: the Admins page; adding an admin and opening their one-time password
 * link in another browser (no session) to set the password and sign in; making a password link
 * for an admin; removing an admin through the confirmation page; revoking an application's
 * tokens through the confirmation page that counts them (its token then gets a 401); deleting a
 * subscription and replaying one through their confirmation pages; the confirmation before a
 * client secret's revocation. axe-core runs on every page (no serious or critical violation) and
 * no page scrolls sideways. REQUIRE_BROWSER=1 makes a missing browser a failure; elsewhere the
 * tests are reported as skipped when /usr/bin/chromium is absent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createClient, createTeam, createTeamUser } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { browserMissing, freePort, launchChromium, seriousViolations, sidewaysScroll, signInToConsole } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const PASSWORD = 'browser console password';

/** The page is accessible and does not scroll sideways. */
async function check(page: Page, name: string, width: number): Promise<void> {
  assert.deepEqual(await seriousViolations(page), [], `axe on ${name} at ${width} px`);
  const sideways = await sidewaysScroll(page);
  assert.ok(sideways <= 0, `${name} at ${width} px scrolls sideways by ${sideways} px`);
}

for (const [width, height] of [[1280, 800], [390, 844]] as const) {
  describe(`admins and applications in Chromium at ${width} px`, { skip: browserMissing }, () => {
    let database: TestDatabase;
    let browser: Browser;
    let context: BrowserContext;
    let rollcall: string;
    let close: () => Promise<void>;
    let page: Page;
    let deps: { storage: TestDatabase['storage']; clock: typeof systemClock; baseUrl: string };

    before(async () => {
      database = await engines[0]!.open();
      const port = await freePort();
      const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage, delivery: false });
      rollcall = await served.listen({ host: '127.0.0.1', port });
      close = () => served.close();
      deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
      await createTeam(deps, 'acme');
      await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
      await createTeamUser(deps, 'acme', 'grace.hopper@acme.example', {});
      browser = await launchChromium();
      context = await browser.newContext({ viewport: { width, height } });
      page = await context.newPage();
      await signInToConsole(page, rollcall, 'admin@acme.example', PASSWORD);
    });

    after(async () => {
      await browser?.close();
      await close?.();
      await database?.dispose();
    });

    it('adds an admin; the one-time link, opened without a session, sets their password, and they sign in', async () => {
      await page.getByRole('link', { name: 'Admins & apps' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Admins and applications');
      await check(page, 'admins', width);
      await page.getByLabel('User name').fill('grace.hopper@acme.example');
      await page.getByRole('button', { name: 'Add admin' }).click();
      assert.match(String(await page.locator('#link-title').textContent()), /grace\.hopper@acme\.example is now an admin/);
      const link = String(await page.locator('#password-link').textContent());
      assert.match(link, /\/console\/password\?token=rc_pw_/);
      await check(page, 'admins with a new link', width);
      await page.reload();
      assert.equal(await page.locator('#password-link').count(), 0, 'shown once');

      const stranger = await browser.newContext({ viewport: { width, height } });
      try {
        const other = await stranger.newPage();
        await other.goto(link);
        assert.equal(await other.locator('h1').textContent(), 'Set your password');
        await check(other, 'password link', width);
        await other.getByLabel('New password (at least 12 characters)').fill('grace sets a password');
        await other.getByLabel('The same password again').fill('grace sets a password');
        await other.getByRole('button', { name: 'Set password' }).click();
        await other.waitForURL(/\/console\/sign-in/);
        await other.getByLabel('User name').fill('grace.hopper@acme.example');
        await other.getByLabel('Password').fill('grace sets a password');
        await other.getByRole('button', { name: 'Sign in' }).click();
        await other.waitForURL(`${rollcall}/console`);
        await other.goto(link);
        assert.match(String(await other.getByRole('alert').textContent()), /used already/);
      } finally {
        await stranger.close();
      }
    });

    it('makes a password link for an admin, then removes them through the confirmation page', async () => {
      await page.goto(`${rollcall}/console/admins`);
      await page.getByRole('button', { name: 'Make a password link for grace.hopper@acme.example' }).click();
      assert.match(String(await page.locator('#link-title').textContent()), /Password link for grace\.hopper@acme\.example/);
      await page.getByRole('link', { name: 'Remove grace.hopper@acme.example as admin' }).click();
      assert.match(String(await page.getByRole('alert').textContent()), /Remove grace\.hopper@acme\.example as an admin\?.*1 other admin can still sign in/s);
      await check(page, 'remove an admin', width);
      await page.getByRole('button', { name: 'Remove admin' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Admin removed/);
      assert.equal(await page.getByText('grace.hopper@acme.example').count(), 0);
    });

    it("revokes an application's tokens through the confirmation that counts them; its token then gets a 401", async () => {
      const client = await createClient(deps, { name: 'Payroll <app>', redirectUris: [], team: 'acme' });
      const issued = await fetch(`${rollcall}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      const token = ((await issued.json()) as { access_token: string }).access_token;
      const status = async () => (await fetch(`${rollcall}/v2/scim/Users?count=1`, { headers: { authorization: `Bearer ${token}` } })).status;
      assert.equal(await status(), 200);
      await page.goto(`${rollcall}/console/admins`);
      await page.getByRole('link', { name: 'Revoke tokens of Payroll <app>' }).click();
      assert.match(String(await page.getByRole('alert').textContent()), /This ends 1 live token/);
      await check(page, 'revoke an application', width);
      await page.getByRole('button', { name: 'Revoke 1 token' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /revoked on every server/);
      assert.equal(await status(), 401);

      // A client secret's revocation asks first too.
      await page.goto(`${rollcall}/console/connections/clients/${client.client_id}`);
      await page.getByRole('link', { name: /^Revoke / }).first().click();
      assert.match(String(await page.getByRole('alert').textContent()), /Revoke the secret/);
      await check(page, 'revoke a client secret', width);
    });

    it('replays and deletes a subscription through their confirmation pages', async () => {
      await page.goto(`${rollcall}/console/events`);
      await page.getByLabel('Receiver URL').fill('https://receiver.example/a-very-long-path/that-should-wrap/at-390-pixels/events?team=acme');
      await page.getByRole('button', { name: 'Add subscription' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Subscription added/);
      await page.getByLabel('Replay from seq').fill('1');
      await page.getByRole('button', { name: 'Replay' }).click();
      assert.match(String(await page.locator('#replay-summary').textContent()), /Re-send \d+ events? \(seq 1 to \d+\)/);
      await check(page, 'replay confirmation', width);
      await page.getByRole('button', { name: /^Re-send/ }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Replay/);
      await page.getByRole('button', { name: 'Delete subscription…' }).click();
      assert.match(String(await page.locator('#delete-summary').textContent()), /pending events? will never be sent|Nothing is pending/);
      await check(page, 'delete confirmation', width);
      await page.getByRole('button', { name: 'Delete subscription' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Subscription deleted/);
    });
  });
}
