/**
 * The console's client page in a real browser (Debian's headless Chromium, playwright-core;
 * DESIGN.md sections 9 and 11, issue 29 items 1 and 8): reached from the connections page, it
 * lists the client's secrets with a warning for one expiring within 30 days and one expired,
 * shows the token endpoint, client id and SCIM base URL with copy buttons that copy exactly
 * those, adds a secret that is shown once (a reload adds nothing and shows it no more) and that
 * really authenticates, and revokes a secret only after a confirmation page. axe-core finds no
 * serious or critical violation, at 1280 and 390 px. Skipped, with the reason, when /usr/bin/chromium is absent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createClient, createTeam, createTeamUser } from '../../src/admin.ts';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { systemClock } from '../../src/clock.ts';
import { addClientSecret } from '../../src/oauth/client-secret-admin.ts';
import { newSecretRow } from '../../src/oauth/client-secret-admin.ts';
import { insertClientSecret } from '../../src/storage/repos/client-secrets.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { browserMissing, freePort, launchChromium, seriousViolations, signInToConsole } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const PASSWORD = 'browser client page password';

for (const [width, height] of [[1280, 900], [390, 844]] as const) {
  describe(`the console client page in Chromium at ${width} px`, { skip: browserMissing }, () => {
    let database: TestDatabase;
    let browser: Browser;
    let rollcall: string;
    let close: () => Promise<void>;
    let page: Page;
    let clientId: string;
    let soonSecret: string;
    let addedSecret: string;

    const tokenStatus = async (secret: string) =>
      (await fetch(`${rollcall}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
      })).status;
    const secretRows = () => page.locator('tbody tr[data-secret-id]');

    before(async () => {
      database = await engines[0]!.open();
      const port = await freePort();
      const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage });
      rollcall = await served.listen({ host: '127.0.0.1', port });
      close = () => served.close();
      const deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
      await createTeam(deps, 'acme');
      await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
      const client = await createClient(deps, { name: 'Entra provisioning', redirectUris: [], team: 'acme', tokenLifetime: 3600 });
      clientId = client.client_id;
      const changer = { storage: database.storage, clock: systemClock, actor: CLI_ACTOR, requestId: null };
      soonSecret = (await addClientSecret(changer, clientId, { name: 'expiring soon', days: 10 })).clientSecret;
      const expired = newSecretRow(clientId, 'long expired', 1, new Date(Date.now() - 3 * 86_400_000));
      await insertClientSecret(database.storage.db, expired.row);
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: { width, height } });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rollcall });
      page = await context.newPage();
    });

    after(async () => {
      await browser?.close();
      await close?.();
      await database?.dispose();
    });

    it('is reached from the connections page and warns of secrets expiring within 30 days or expired', async () => {
      await signInToConsole(page, rollcall, 'admin@acme.example', PASSWORD);
      await page.goto(`${rollcall}/console/connections`);
      await page.getByRole('link', { name: 'Entra provisioning' }).click();
      await page.waitForURL(`${rollcall}/console/connections/clients/${clientId}`);
      assert.equal(await secretRows().count(), 3);
      assert.match(String(await page.locator('#expiry-warning').textContent()), /2 secrets of this client expire within 30 days or expired/);
      assert.match(String(await page.locator('tr', { hasText: 'expiring soon' }).textContent()), /Expires in (9|10) days/);
      assert.match(String(await page.locator('tr', { hasText: 'long expired' }).textContent()), /Expired/);
      assert.doesNotMatch(String(await page.locator('tr', { hasText: 'initial' }).textContent()), /Expire/);
      assert.deepEqual(await seriousViolations(page), []);
    });

    it('shows the token endpoint, client id and SCIM base URL with copy buttons that copy them', async () => {
      const expected: [string, string][] = [['token-endpoint', `${rollcall}/oauth/token`], ['client-id', clientId], ['scim-base', `${rollcall}/v2/scim`]];
      for (const [id, value] of expected) {
        assert.equal((await page.locator(`#${id}`).textContent())?.trim(), value);
        await page.locator(`button[data-copy="${id}"]`).click();
        await page.locator(`#${id}-status`, { hasText: 'Copied' }).waitFor();
        assert.equal(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), value);
      }
    });

    it('adds a secret shown once; a reload adds no other and shows it no more; the secret authenticates', async () => {
      await page.getByLabel('Name').fill('Entra 2027');
      await page.getByLabel('Expires in').selectOption('365');
      await page.getByRole('button', { name: 'Add secret' }).click();
      await page.waitForURL(`${rollcall}/console/connections/clients/${clientId}`);
      const secret = String(await page.locator('#new-secret').textContent()).trim();
      assert.match(secret, /^rc_cs_[A-Za-z0-9_-]{43}$/);
      assert.equal(await secretRows().count(), 4);
      assert.equal(await tokenStatus(secret), 200);
      await page.reload();
      assert.equal(await page.locator('#new-secret').count(), 0, 'the secret is shown only once');
      assert.equal(await secretRows().count(), 4, 'a reload adds nothing');
      assert.ok(!(await page.content()).includes(secret));
      addedSecret = secret;
    });

    it('revokes a secret only after a confirmation page; the revoked secret is refused, the others work', async () => {
      assert.equal(await tokenStatus(soonSecret), 200);
      await page.locator('tr', { hasText: 'expiring soon' }).getByRole('link', { name: /Revoke/ }).click();
      assert.match(String(await page.locator('main').textContent()), /Revoke the secret expiring soon/);
      assert.equal(await tokenStatus(soonSecret), 200, 'nothing is revoked before the confirmation');
      await page.getByRole('button', { name: 'Revoke secret' }).click();
      await page.waitForURL(`${rollcall}/console/connections/clients/${clientId}?revoked=1`);
      assert.match(String(await page.locator('[role=status]').first().textContent()), /The secret is revoked/);
      assert.equal(await secretRows().count(), 3);
      assert.equal(await page.locator('tr', { hasText: 'expiring soon' }).count(), 0);
      assert.equal(await tokenStatus(soonSecret), 401);
      assert.equal(await tokenStatus(addedSecret), 200);
    });
  });
}
