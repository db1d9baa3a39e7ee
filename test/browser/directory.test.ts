/**
 * Issue 30 item 2 in a real browser (Debian's headless Chromium, playwright-core), at 1280 px and
 * at 390 px: an admin creates a user, edits it, deactivates it after the confirmation, finds it
 * under the Deactivated filter and reactivates it, then adds a member to a group found by a
 * userName search and removes one. Every page passes axe-core (no serious or critical
 * violation) and, at 390 px, does not scroll sideways. REQUIRE_BROWSER=1 makes a missing
 * browser a failure; elsewhere the tests are skipped with the reason.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createTeam, createTeamUser } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { issueAccessToken } from '../../src/oauth/tokens.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { browserMissing, freePort, launchChromium, seriousViolations, sidewaysScroll, signInToConsole } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const PASSWORD = 'browser directory password';

for (const [width, height] of [[1280, 800], [390, 844]] as const) {
  describe(`console directory in Chromium at ${width} px`, { skip: browserMissing }, () => {
    let database: TestDatabase;
    let browser: Browser;
    let rollcall: string;
    let close: () => Promise<void>;
    let page: Page;
    let token: string;

    before(async () => {
      database = await engines[0]!.open();
      const port = await freePort();
      const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage });
      rollcall = await served.listen({ host: '127.0.0.1', port });
      close = () => served.close();
      const deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
      const team = await createTeam(deps, 'acme');
      await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
      token = (await issueAccessToken(database.storage.db, systemClock, { teamId: team.id, userId: null, clientId: null, scope: ['read', 'write'], ttlSeconds: 3600 })).token;
      browser = await launchChromium();
      page = await (await browser.newContext({ viewport: { width, height } })).newPage();
      await signInToConsole(page, rollcall, 'admin@acme.example', PASSWORD);
    });

    after(async () => {
      await browser?.close();
      await close?.();
      await database?.dispose();
    });

    /** The page passes axe and fits the viewport. */
    const checked = async (what: string) => {
      assert.deepEqual(await seriousViolations(page), [], `axe on ${what} at ${width} px`);
      assert.ok((await sidewaysScroll(page)) <= 0, `${what} scrolls sideways at ${width} px`);
    };
    const status = async () => String(await page.getByRole('status').first().textContent());

    it('creates a user, edits it, deactivates it after the confirmation, finds it under Deactivated and reactivates it', async () => {
      await page.goto(`${rollcall}/console/users`);
      await page.getByRole('link', { name: 'Create a user' }).click();
      await checked('the create form');
      await page.getByLabel('User name (required)').fill('katherine@acme.example');
      await page.getByLabel('Given name').fill('Katherine');
      await page.getByLabel('Family name').fill('Johnson');
      await page.getByLabel('Email').fill('katherine@work.example');
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.waitForURL(/\/console\/users\/[A-Z0-9]+\?done=created$/);
      assert.match(await status(), /User created/);
      assert.match(String(await page.locator('main').textContent()), /Katherine Johnson/);
      await checked('the new user');

      // Bad input is refused with SCIM's message and the form kept.
      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByLabel('User name (required)').fill('');
      await page.getByLabel('User name (required)').evaluate((input) => (input as unknown as { removeAttribute(n: string): void }).removeAttribute('required'));
      await page.getByRole('button', { name: 'Save changes' }).click();
      assert.equal(await page.getByRole('alert').count(), 1);
      await checked('the refused edit');
      await page.getByLabel('User name (required)').fill('katherine@acme.example');
      await page.getByLabel('Given name').fill('Katherine G.');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.waitForURL(/\?done=saved$/);
      assert.match(await status(), /Changes saved/);
      assert.match(String(await page.locator('main').textContent()), /Katherine G\. Johnson/);

      await page.getByRole('link', { name: 'Deactivate…' }).click();
      assert.match(String(await page.locator('main').textContent()), /Deactivate katherine@acme\.example\?.*leaves every SCIM read/s);
      await checked('the deactivation confirmation');
      await page.getByRole('button', { name: 'Deactivate' }).click();
      await page.waitForURL(/\?done=deactivated$/);
      assert.match(String(await page.locator('main').textContent()), /This user is deactivated/);

      await page.goto(`${rollcall}/console/users`);
      assert.equal(await page.getByRole('link', { name: 'katherine@acme.example' }).count(), 0);
      await page.getByLabel('Status').selectOption('deactivated');
      await page.getByRole('button', { name: 'Search' }).click();
      await checked('the deactivated users');
      await page.getByRole('link', { name: 'katherine@acme.example' }).click();
      await page.getByRole('button', { name: 'Reactivate' }).click();
      await page.waitForURL(/\?done=reactivated$/);
      assert.match(await status(), /User reactivated/);
      const id = /\/console\/users\/([A-Z0-9]+)/.exec(page.url())![1]!;
      const scim = await fetch(`${rollcall}/v2/scim/Users/${id}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(scim.status, 200);
      assert.equal(((await scim.json()) as { active: boolean }).active, true);
    });

    it("adds a member found by a userName search and removes one; the group's members are counted", async () => {
      const ids: string[] = [];
      for (const userName of ['dorothy@acme.example', 'mary@acme.example']) {
        const res = await fetch(`${rollcall}/v2/scim/Users`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName }) });
        ids.push(((await res.json()) as { id: string }).id);
      }
      const created = await fetch(`${rollcall}/v2/scim/Groups`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Computing', members: [{ value: ids[0] }] }),
      });
      assert.equal(created.status, 201);
      await page.goto(`${rollcall}/console/groups`);
      assert.match(String(await page.locator('tr', { hasText: 'Computing' }).textContent()), /Computing\s*Members\s*1|Computing\s*1/);
      await checked('the groups list');
      await page.getByRole('link', { name: 'Computing' }).click();
      await page.getByLabel('Find users to add').fill('mary');
      await page.getByRole('button', { name: 'Find' }).click();
      await checked('the users to add');
      await page.getByRole('button', { name: 'Add mary@acme.example' }).click();
      await page.waitForURL(/\?done=added/);
      assert.match(await status(), /Member added/);
      assert.match(String(await page.locator('main').textContent()), /1-2 of 2 members/);
      await checked('the group');
      await page.getByRole('button', { name: 'Remove dorothy@acme.example' }).click();
      await page.waitForURL(/\?done=removed/);
      assert.match(String(await page.locator('main').textContent()), /1-1 of 1 members/);
      // The members table (the group's history below names both, linked).
      const members = page.getByRole('table', { name: 'Members' });
      assert.equal(await members.getByRole('link', { name: 'mary@acme.example' }).count(), 1);
      assert.equal(await members.getByRole('link', { name: 'dorothy@acme.example' }).count(), 0);
    });
  });
}
