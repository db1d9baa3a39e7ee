/**
 * Issue 30, items 1 and 9, in a real browser (Debian's headless Chromium, playwright-core, the
 * harness of console.test.ts): an admin adds a connection and issues its token in the console;
 * the token works on SCIM; the admin is deactivated, then deleted, and the token keeps working.
 * Another admin then finds the connection on the Connections page, deletes it after the
 * confirmation that says what stops, and the token gets a 401. axe-core runs inside each page
 * (no serious or critical violation), at 1280 px and at 390 px. REQUIRE_BROWSER=1 makes a
 * missing browser a failure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createTeam, createTeamUser, issueToken } from '../../src/admin.ts';
import { deactivateUser } from '../../src/admin-users.ts';
import { systemClock } from '../../src/clock.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { browserMissing, freePort, launchChromium, seriousViolations, sidewaysScroll, signInToConsole } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const PASSWORD = 'browser console password';

/** Whether the page scrolls sideways, past a pixel of rounding (it must not, at 390 px either). */
const scrollsSideways = async (page: Page): Promise<boolean> => (await sidewaysScroll(page)) > 1;

async function signIn(page: Page, rollcall: string, userName: string): Promise<void> {
  await page.context().clearCookies();
  await signInToConsole(page, rollcall, userName, PASSWORD);
}

for (const [width, height] of [[1280, 800], [390, 844]] as const) {
  describe(`connections in Chromium at ${width} px`, { skip: browserMissing }, () => {
    let database: TestDatabase;
    let browser: Browser;
    let rollcall: string;
    let close: () => Promise<void>;
    let page: Page;
    let deps: Parameters<typeof createTeam>[0];

    before(async () => {
      database = await engines[0]!.open();
      const port = await freePort();
      const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage });
      rollcall = await served.listen({ host: '127.0.0.1', port });
      close = () => served.close();
      deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
      await createTeam(deps, 'acme', 'visible');
      await createTeamUser(deps, 'acme', 'leaver@acme.example', { password: PASSWORD, admin: true });
      await createTeamUser(deps, 'acme', 'stayer@acme.example', { password: PASSWORD, admin: true });
      browser = await launchChromium();
      page = await (await browser.newContext({ viewport: { width, height } })).newPage();
    });

    after(async () => {
      await browser?.close();
      await close?.();
      await database?.dispose();
    });

    const checked = async (what: string) => {
      assert.deepEqual(await seriousViolations(page), [], `axe on ${what} at ${width} px`);
      assert.equal(await scrollsSideways(page), false, `${what} scrolls sideways at ${width} px`);
    };

    it('the admin who made a connection is deactivated, then deleted: its token works on; another admin deletes it after a confirmation: 401', async () => {
      await signIn(page, rollcall, 'leaver@acme.example');
      await page.goto(`${rollcall}/console/connections`);
      await page.getByLabel('Name', { exact: true }).fill('Entra ID production');
      await page.getByLabel('Provider').selectOption('entra');
      await page.getByRole('button', { name: 'Add connection' }).click();
      await page.waitForURL(/\/console\/connections\/[A-Z0-9]{20}\?done=created$/);
      await checked('a connection');
      await page.getByLabel('Token name').fill('Entra token');
      await page.getByRole('button', { name: 'Issue token' }).click();
      const token = String(await page.locator('#new-token').textContent()).trim();
      assert.match(token, /^rc_at_/);
      await checked('the token issued');
      const scim = () => fetch(`${rollcall}/v2/scim/Users`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
      assert.equal(await scim(), 200);

      // The other admin's own script token, for the deletion.
      const stayer = (await issueToken(deps, 'acme', 'stayer@acme.example', { scope: ['read', 'write'], ttlSeconds: 3600, name: 'script' })).token;
      const leaver = await deactivateUser(deps, 'acme', 'leaver@acme.example');
      assert.equal(await scim(), 200, 'the admin who made the connection is deactivated: it works on');
      const deleted = await fetch(`${rollcall}/v2/scim/Users/${leaver.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${stayer}` } });
      assert.equal(deleted.status, 204);
      assert.equal(await scim(), 200, 'the admin who made the connection is deleted: it works on');

      await signIn(page, rollcall, 'stayer@acme.example');
      await page.goto(`${rollcall}/console/connections`);
      assert.match(String(await page.locator('main').textContent()), /Entra ID production.*1 live token: Entra token/s);
      await checked('the connections');
      await page.getByRole('link', { name: 'Entra ID production' }).click();
      await page.getByRole('link', { name: 'Delete this connection…' }).click();
      assert.match(String(await page.getByRole('alert').textContent()), /Deleting "Entra ID production" stops 1 live token and 0 OAuth clients/);
      await checked('the delete confirmation');
      assert.equal(await scim(), 200, 'the confirmation deletes nothing');
      await page.getByRole('button', { name: 'Delete "Entra ID production"' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /deleted/);
      assert.equal(await scim(), 401);
    });
  });
}
