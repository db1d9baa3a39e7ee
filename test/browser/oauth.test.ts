/**
 * The sign-in and consent pages in a real browser (Debian's headless Chromium driven by
 * playwright-core): a user signs in, approves, the browser follows the redirect to a client
 * listening on 127.0.0.1, which exchanges the code and calls the SCIM API with the token; a
 * second run denies; a third uses an unregistered redirect URI and must stay on the error page.
 * CI installs Chromium (.ci/run) and sets REQUIRE_BROWSER=1, which makes a missing browser a
 * failure; elsewhere these tests are skipped when /usr/bin/chromium is absent. The sign-in page
 * (with its passkey button) and the consent page pass the console's page checks at 390 and
 * 1280 px: no axe-core violation of any impact, no sideways scrolling, no failed request or
 * console error; their screenshots go to docs/console/ only with UPDATE_SCREENSHOTS=1.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { createClient, createTeam, createTeamUser } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { axeViolations, browserMissing, describeViolations, freePort, launchChromium, overflowOf, screenshot } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

describe('authorization pages in Chromium', { skip: browserMissing }, () => {
  let database: TestDatabase;
  let browser: Browser;
  let rollcall: string;
  let clientApp: Server;
  let clientUrl: string;
  let client: { client_id: string; client_secret: string };
  let close: () => Promise<void>;
  const password = 'browser test password';

  before(async () => {
    database = await engines[0]!.open();
    // The client application: exchanges the code it receives and lists users with the token.
    clientApp = createServer((req, res) => {
      const url = new URL(req.url ?? '/', clientUrl);
      void (async () => {
        const error = url.searchParams.get('error');
        if (error) {
          res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1 id="result">denied: ${error} state=${url.searchParams.get('state')}</h1>`);
          return;
        }
        const tokenResponse = await fetch(`${rollcall}/oauth/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ grant_type: 'authorization_code', code: url.searchParams.get('code') ?? '', redirect_uri: `${clientUrl}/callback` }).toString(),
        });
        const tokens = (await tokenResponse.json()) as { access_token?: string; error?: string };
        const users = await fetch(`${rollcall}/v2/scim/Users`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        const list = (await users.json()) as { totalResults?: number };
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(`<h1 id="result">token ${tokenResponse.status} users ${users.status} total ${list.totalResults} state=${url.searchParams.get('state')}</h1>`);
      })();
    });
    clientUrl = await listen(clientApp);

    // The issuer (PUBLIC_BASE_URL) must be the address the browser uses: take a free port first.
    const port = await freePort();
    const served = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: `http://127.0.0.1:${port}` }, storage: database.storage });
    rollcall = await served.listen({ host: '127.0.0.1', port });
    close = () => served.close();

    const deps = { storage: database.storage, clock: systemClock, baseUrl: rollcall };
    await createTeam(deps, 'acme');
    await createTeamUser(deps, 'acme', 'admin@acme.example', { password, admin: true });
    client = await createClient(deps, { name: 'Acme Directory Sync', redirectUris: [`${clientUrl}/callback`] });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await close?.();
    await new Promise((r) => clientApp?.close(r));
    await database?.dispose();
  });

  const authorizeUrl = (redirectUri: string, state: string) =>
    `${rollcall}/oauth/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: redirectUri, response_type: 'code', state }).toString()}`;

  it('signs in, approves, follows the redirect; the client exchanges the code and calls the SCIM API', async () => {
    const page = await browser.newPage();
    await page.goto(authorizeUrl(`${clientUrl}/callback`, 'state-approve'));
    assert.equal(await page.locator('h1').textContent(), 'Sign in');
    assert.match(String(await page.locator('.lead').textContent()), /Acme Directory Sync/);
    await page.getByLabel('User name').fill('admin@acme.example');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match(String(await page.getByRole('alert').textContent()), /incorrect/);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match(String(await page.locator('h1').textContent()), /Allow Acme Directory Sync to access acme\?/);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${clientUrl}/callback**`);
    assert.equal(await page.locator('#result').textContent(), 'token 200 users 200 total 1 state=state-approve');
    await page.close();
  });

  it('deny sends the browser back with error=access_denied and the state', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(authorizeUrl(`${clientUrl}/callback`, 'state-deny'));
    await page.getByLabel('User name').fill('admin@acme.example');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${clientUrl}/callback**`);
    assert.equal(await page.locator('#result').textContent(), 'denied: access_denied state=state-deny');
    await context.close();
  });

  it('an unregistered redirect URI shows the error page and never leaves Rollcall', async () => {
    const page = await browser.newPage();
    const response = await page.goto(authorizeUrl('https://evil.example/steal', 'state-evil'));
    assert.equal(response?.status(), 400);
    assert.equal(await page.locator('h1').textContent(), 'This sign-in link is not valid');
    assert.ok(page.url().startsWith(rollcall), page.url());
    assert.equal(await page.getByLabel('Password').count(), 0);
    await page.close();
  });

  /** The page checks of the console (pages.test.ts) on the page as it is now; failed requests and console errors as `problems` collected. */
  async function pageProblems(page: Page, name: string, width: number, problems: string[]): Promise<string[]> {
    await screenshot(page, `${name}-${width}.png`, { fullPage: true });
    const found = [...problems, ...describeViolations(await axeViolations(page)).map((v) => `axe: ${v}`)];
    const overflow = await overflowOf(page);
    if (overflow.scrollWidth > overflow.viewport) found.push(`scrolls sideways: ${overflow.scrollWidth} px in ${overflow.viewport}; ${overflow.wide.join('; ')}`);
    return found;
  }

  for (const [width, height] of [[390, 844], [1280, 800]] as const) {
    it(`the sign-in page (with its passkey button) and the consent page pass axe and do not scroll sideways at ${width} px`, async () => {
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => void (m.type() === 'error' && problems.push(`console error: ${m.text()}`)));
      page.on('response', (r) => void (r.status() >= 400 && problems.push(`${r.status()} for ${r.url()}`)));
      try {
        await page.goto(authorizeUrl(`${clientUrl}/callback`, `state-${width}`));
        assert.equal(await page.getByRole('button', { name: 'Use a passkey' }).count(), 1, 'the sign-in page offers a passkey');
        assert.deepEqual(await pageProblems(page, 'oauth-sign-in', width, problems), [], `the OAuth sign-in page at ${width} px`);
        await page.getByLabel('User name').fill('admin@acme.example');
        await page.getByLabel('Password').fill(password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Allow' }).waitFor();
        assert.deepEqual(await pageProblems(page, 'oauth-consent', width, problems), [], `the consent page at ${width} px`);
      } finally {
        await context.close();
      }
    });
  }
});
