/**
 * The console in a real browser (Debian's headless Chromium, playwright-core), at 1280 px and at
 * 390 px: keyboard-only sign-in, search a user, open a group, keyboard-only token issue, use the
 * token on SCIM, a failing SCIM request read back in the request log, revoke the token and see
 * the 401, subscribe a local receiver to the team's events, see a delivery in its log, pause it
 * with a reason and find it on the overview, change a setting, build a catalog of roles and
 * entitlements, map the group to a role, read a member's access and the role's holders;
 * axe-core run inside every page (no violation of any impact); a screenshot of each state only
 * these flows reach (a token just issued, a member's access, a removal to confirm), saved to
 * docs/console/ when UPDATE_SCREENSHOTS=1 (the README shows them), otherwise to a temporary
 * directory removed afterwards, so that the suite leaves the tree as it found it (pages.test.ts
 * saves every page's). REQUIRE_BROWSER=1 makes a missing browser a failure; elsewhere the tests
 * are reported as skipped, with the reason, when /usr/bin/chromium is absent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createTeam, createTeamUser } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { axeViolations, browserMissing, describeViolations, freePort, launchChromium, screenshot } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const PASSWORD = 'browser console password';
const HOSTILE = ['<script>alert(1)</script>@x.example', '"quoted\' o\'hara"@x.example', '\u202Eevil\u202C@x.example', '😀emoji@x.example'];
/** The states only these flows reach; pages.test.ts saves the screenshot of every page as it is first shown. */
const FLOW_SHOTS = new Set(['token-issued', 'user-access', 'access-confirm']);

/** Presses Tab until the element with `id` has the focus (a keyboard user's way there). */
async function tabTo(page: Page, id: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if ((await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id ?? '')) === id) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`#${id} cannot be reached with Tab`);
}

for (const [width, height] of [[1280, 800], [390, 844]] as const) {
  describe(`console in Chromium at ${width} px`, { skip: browserMissing }, () => {
    let database: TestDatabase;
    let browser: Browser;
    let rollcall: string;
    let close: () => Promise<void>;
    let page: Page;
    let groupId: string;
    let receiver: Receiver;

    before(async () => {
      receiver = await startReceiver();
      database = await engines[0]!.open();
      const port = await freePort();
      const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage });
      rollcall = await served.listen({ host: '127.0.0.1', port });
      close = () => served.close();
      const deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
      await createTeam(deps, 'acme');
      await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
      const ids: string[] = [];
      for (const name of ['ada.lovelace@acme.example', 'grace.hopper@acme.example', ...HOSTILE]) ids.push(String((await createTeamUser(deps, 'acme', name, {})).id));
      const admin = await fetch(`${rollcall}/v2/scim/Users?filter=userName%20eq%20%22x%22`); // unauthenticated: not logged
      assert.equal(admin.status, 401);
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: { width, height } });
      page = await context.newPage();
      groupId = '';
      void ids;
    });

    after(async () => {
      await browser?.close();
      await close?.();
      await database?.dispose();
      await receiver?.close();
    });

    const shot = async (name: string) => {
      if (FLOW_SHOTS.has(name)) await screenshot(page, `${name}-${width}.png`);
      assert.deepEqual(describeViolations(await axeViolations(page)), [], `axe on ${name} at ${width} px`);
    };

    it('signs in with the keyboard only', async () => {
      await page.goto(`${rollcall}/console`);
      assert.ok(page.url().endsWith('/console/sign-in'));
      await shot('sign-in');
      // The user name field has the focus on arrival.
      await tabTo(page, 'username');
      await page.keyboard.type('admin@acme.example');
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${rollcall}/console`);
      assert.equal(await page.locator('h1').textContent(), 'Overview');
      await shot('overview');
    });

    it('searches a user and opens it; hostile names are shown as text', async () => {
      await page.goto(`${rollcall}/console/users`);
      assert.equal(await page.locator('a', { hasText: '<script>alert(1)</script>@x.example' }).count(), 1);
      await shot('users');
      await page.getByLabel('Search').fill('grace');
      await page.getByRole('button', { name: 'Search' }).click();
      assert.equal(await page.locator('tbody tr').count(), 1);
      await page.getByRole('link', { name: 'grace.hopper@acme.example' }).click();
      assert.equal(await page.locator('h1').textContent(), 'grace.hopper@acme.example');
      await shot('user');
    });

    it('opens a group and its members', async () => {
      const token = await issueByFetch();
      const users = (await (await fetch(`${rollcall}/v2/scim/Users?count=10`, { headers: { authorization: `Bearer ${token}` } })).json()) as { Resources: { id: string }[] };
      const created = await fetch(`${rollcall}/v2/scim/Groups`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `Engineering <b>"${width}"</b> 😀`, members: users.Resources.map((u) => ({ value: u.id })) }),
      });
      assert.equal(created.status, 201);
      groupId = ((await created.json()) as { id: string }).id;
      await page.goto(`${rollcall}/console/groups`);
      await shot('groups');
      await page.getByRole('link', { name: `Engineering <b>"${width}"</b> 😀` }).click();
      assert.ok(page.url().endsWith(`/console/groups/${groupId}`));
      assert.equal(await page.locator('table:has(caption:text("Members")) tbody tr').first().locator('a').count(), 1);
      await shot('group');
    });

    it("builds a catalog, maps the group to a role, reads a member's access and the role's holders, and confirms the removal of a mapped role", async () => {
      await page.goto(`${rollcall}/console`);
      await page.getByRole('link', { name: 'Roles & entitlements' }).click();
      assert.equal(await page.locator('h1').textContent(), 'Roles & entitlements');
      await page.locator('#role-value').fill('admin');
      await page.locator('#role-display').fill('Administrator <b>');
      await page.getByRole('button', { name: 'Add role', exact: true }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Role added/);
      await page.getByLabel('Name (a SCIM resource type').fill('License');
      await page.getByLabel('Endpoint').fill('/Licenses');
      await page.getByLabel('How many a user may hold').selectOption('single');
      await page.getByRole('button', { name: 'Add entitlement type', exact: true }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Entitlement type added/);
      await page.locator('#entitlement-value').fill('e5');
      await page.locator('#entitlement-display').fill('Office E5');
      await page.getByRole('button', { name: 'Add entitlement', exact: true }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Entitlement added/);
      assert.match(String(await page.locator('main').textContent()), /single-valued/);
      await shot('access');

      await page.getByRole('link', { name: 'Group mappings' }).click();
      await page.getByLabel('Group (its id or its displayName)').fill(groupId);
      await page.getByLabel('Role or entitlement').selectOption('role:admin');
      await page.getByRole('button', { name: 'Map group' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Group mapped/);
      assert.match(String(await page.locator('tbody tr').first().textContent()), new RegExp(`Engineering <b>"${width}"</b> 😀.*admin.*Administrator <b>`, 's'));
      await shot('mappings');

      await page.goto(`${rollcall}/console/users`);
      await page.getByRole('link', { name: 'grace.hopper@acme.example' }).click();
      const access = page.locator('h3:text("Roles") + .table-wrap tbody tr').first();
      assert.match(String(await access.textContent()), new RegExp(`admin.*Administrator <b>.*via group Engineering <b>"${width}"</b> 😀`, 's'));
      assert.equal(await access.getByRole('link').getAttribute('href'), `/console/groups/${groupId}`);
      await shot('user-access');

      await page.goto(`${rollcall}/console/access`);
      await page.getByRole('link', { name: 'Holders of admin' }).click();
      assert.match(String(await page.locator('tbody').textContent()), /grace\.hopper@acme\.example.*via group Engineering/s);
      await shot('holders');

      await page.goto(`${rollcall}/console/access`);
      await page.getByRole('button', { name: 'Remove role admin' }).click();
      assert.match(String(await page.getByRole('alert').textContent()), /role "admin" is mapped from 1 group; confirm below to remove it from them/);
      await shot('access-confirm');
      await page.getByRole('button', { name: 'Remove role "admin" from them' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Role removed\. 1 group no longer maps to it\./);
    });

    /** A token for the test's own SCIM calls, issued through the console's forms (not keyboard-only), of a connection of its own. */
    async function issueByFetch(): Promise<string> {
      await page.goto(`${rollcall}/console/connections`);
      await page.getByLabel('Name', { exact: true }).fill(`setup ${Date.now()}`);
      await page.getByRole('button', { name: 'Add connection' }).click();
      await page.getByLabel('Token name').fill('setup token');
      await page.getByRole('button', { name: 'Issue token' }).click();
      return String(await page.locator('#new-token').textContent()).trim();
    }

    it("adds a connection and issues its token with the keyboard only, uses it, reads a failing request in the log naming the connection, revokes it after a confirmation: 401", async () => {
      await page.goto(`${rollcall}/console/connections`);
      await tabTo(page, 'connection-name');
      await page.keyboard.type('Entra ID <prod> "west"');
      await page.keyboard.press('Tab');
      // Past "Provider" (not said) to the button.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/connections\/[A-Z0-9]{20}/);
      await tabTo(page, 'token-name');
      await page.keyboard.type('first token');
      await page.keyboard.press('Tab');
      await page.keyboard.press('ArrowDown');
      // Past "For" (a provisioning token, the default) to the button.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#new-token');
      const token = String(await page.locator('#new-token').textContent()).trim();
      assert.match(token, /^rc_at_/);
      assert.equal(String(await page.locator('#scim-base').textContent()).trim(), `${rollcall}/v2/scim`);
      await shot('token-issued');
      await page.reload();
      assert.equal(await page.locator('#new-token').count(), 0, 'a reload shows the token gone');
      const connectionPage = page.url().replace(/\/tokens\/.*$/, '');

      const ok = await fetch(`${rollcall}/v2/scim/Users`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      const conflict = await fetch(`${rollcall}/v2/scim/Users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'grace.hopper@acme.example', password: 'never-in-the-log-123' }),
      });
      assert.equal(conflict.status, 409);

      // The log is written off the request path, about a second later: the page is asked again until it shows it.
      const row = page.locator('tbody tr', { hasText: 'uniqueness' });
      await until(async () => {
        await page.goto(`${rollcall}/console/requests`);
        await page.getByLabel('Status').selectOption('4xx');
        await page.getByRole('button', { name: 'Filter' }).click();
        return (await row.count()) > 0;
      }, 'the 409 in the request log', 30_000, 200);
      assert.equal(await row.count(), 1);
      assert.match(String(await row.textContent()), /POST.*\/v2\/scim\/Users.*409.*uniqueness/s);
      assert.match(String(await row.textContent()), /Entra ID <prod> "west"/, 'the log names the connection');
      assert.doesNotMatch(await page.content(), /never-in-the-log/);
      await shot('requests');

      await page.goto(connectionPage);
      await page.getByRole('link', { name: 'Revoke first token' }).click();
      await page.getByRole('button', { name: 'Revoke "first token"' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /revoked/);
      await shot('connection');
      await page.goto(`${rollcall}/console/connections`);
      await shot('connections');
      const refused = await fetch(`${rollcall}/v2/scim/Users`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(refused.status, 401);
    });

    it('subscribes a receiver to the events, reads a delivery in its log, pauses it with a reason, and finds it on the overview', async () => {
      await page.goto(`${rollcall}/console/events`);
      assert.match(String(await page.locator('main').textContent()), /No subscriptions yet/);
      // Refused: plain http off loopback, with the reason shown.
      await page.getByLabel('Receiver URL').fill('http://receiver.example/events');
      await page.getByRole('button', { name: 'Add subscription' }).click();
      assert.match(String(await page.getByRole('alert').textContent()), /must be https/);
      const url = `${receiver.url}?team=<acme>&"q"`;
      await page.getByLabel('Receiver URL').fill(url);
      await page.getByLabel('create').check();
      await page.getByLabel('patch').check();
      await page.getByRole('button', { name: 'Add subscription' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Subscription added/);
      const detail = page.url().replace(/\?.*$/, '');

      const token = await issueByFetch();
      const created = await fetch(`${rollcall}/v2/scim/Users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `events.${width}@acme.example` }),
      });
      assert.equal(created.status, 201);
      await receiver.waitFor(1, 10_000);
      // The attempt is recorded once the receiver's answer is in.
      await until(async () => {
        await page.goto(detail);
        const rows = page.locator('tbody tr');
        return (await rows.count()) > 0 && /202/.test(String(await rows.first().textContent()));
      }, 'the delivery attempt on the page', 30_000, 100);
      assert.match(String(await page.locator('main').textContent()), /<acme>&"q"/);

      await page.getByLabel('Reason').fill('receiver under maintenance <b>');
      await page.getByRole('button', { name: 'Pause' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Paused/);
      assert.match(String(await page.locator('dl').textContent()), /paused: receiver under maintenance <b>/);
      await shot('subscription');
      await page.goto(`${rollcall}/console/events`);
      assert.match(String(await page.locator('tbody tr').first().textContent()), /create, patch.*paused: receiver under maintenance <b>/s);
      await shot('events');
      await page.goto(`${rollcall}/console`);
      assert.match(String(await page.locator('.alert', { hasText: 'need attention' }).textContent()), /1 event subscription\(s\) need attention.*is paused: receiver under maintenance <b>/s);
      assert.match(String(await page.locator('.tile', { hasText: 'events pending' }).textContent()), /^0events pending \(1 subscription\)$/);
      await shot('overview');

      // Resume, then replay from the first kept event: the receiver gets the wanted ones again.
      await page.goto(detail);
      await page.getByRole('button', { name: 'Resume' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Resumed/);
      const before = receiver.received.length;
      await page.getByLabel('Replay from seq').fill('1');
      await page.getByRole('button', { name: 'Replay' }).click();
      // The replay asks first, counting what it sends again (issue 30 item 5).
      assert.match(String(await page.locator('#replay-summary').textContent()), /Re-send \d+ events? \(seq 1 to \d+\)/);
      await page.getByRole('button', { name: /^Re-send/ }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Replay started/);
      await receiver.waitFor(before + 1, 10_000);
    });

    it('reads the audit log, and changes a setting', async () => {
      await page.goto(`${rollcall}/console/audit`);
      await page.getByLabel('Action').fill('token_revoked');
      await page.getByRole('button', { name: 'Filter' }).click();
      assert.ok((await page.locator('tbody tr').count()) >= 1);
      await shot('audit');
      await page.goto(`${rollcall}/console/settings`);
      await page.getByLabel('Deactivated users').selectOption('visible');
      await page.getByRole('button', { name: 'Save' }).click();
      assert.match(String(await page.getByRole('status').first().textContent()), /Saved/);
      assert.equal(await page.getByLabel('Deactivated users').inputValue(), 'visible');
      await shot('settings');
    });
  });
}
