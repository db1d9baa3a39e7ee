/**
 * The API reference page (/docs/api, issue 34 item 1) in a real browser (Debian's headless
 * Chromium, playwright-core): Swagger UI renders the operations of the OpenAPI document, every
 * request the page makes goes to its own origin (no CDN, no validator badge), no CSP violation,
 * script error or console error occurs, and "Try it out" reaches this site only, never a server
 * the document names elsewhere. axe-core runs on the rendered page: no critical violation.
 *
 * Two documents: a small fixed OpenAPI 3.1 document (test/fixtures/openapi-small.json), served
 * beside the page's plugin, proves the rendering path on its own; the real app's
 * /v2/openapi.json is checked when the app has that route (it is built on another branch; the
 * test says so when it skips). Skipped, with the reason, when /usr/bin/chromium is absent.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { apiDocs } from '../../src/http/api-docs.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { axeViolations, browserMissing, describeViolations, launchChromium } from '../support/browser.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const FIXTURE = readFileSync(new URL('../fixtures/openapi-small.json', import.meta.url), 'utf8');
/** An address no test listens on: a request to it would be a request to "another host". */
const ELSEWHERE = 'http://127.0.0.2:9';

interface Watched {
  readonly page: Page;
  readonly requests: string[];
  readonly problems: string[];
}

/** A page that records every request it makes, every console error, script error and CSP violation. */
async function watchedPage(browser: Browser): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Runs before the page's own scripts and outside its CSP: collects CSP violations as events.
  await context.addInitScript(() => {
    const seen: string[] = [];
    (globalThis as unknown as { cspViolations: string[] }).cspViolations = seen;
    type Violation = { violatedDirective: string; blockedURI: string };
    const target = (globalThis as unknown as { document: { addEventListener(type: string, listener: (e: Violation) => void): void } }).document;
    target.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const page = await context.newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { page, requests, problems };
}

const cspViolations = (page: Page): Promise<string[]> => page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations);

const otherOrigins = (requests: readonly string[], origin: string): string[] => requests.filter((url) => new URL(url).origin !== origin);

/** The operation block of `method path`, once Swagger UI has rendered it. */
async function operation(page: Page, method: string, path: string) {
  const block = page.locator(`.opblock.opblock-${method}`, { has: page.locator('.opblock-summary-path', { hasText: new RegExp(`^${path.replace(/[{}]/g, '\\$&')}$`) }) });
  await block.first().waitFor({ timeout: 20_000 });
  return block.first();
}

/** The page's plugin on its own server, on 127.0.0.1, with a fixed document and a stand-in list of users. */
async function fixtureServer(document: string): Promise<{ app: FastifyInstance; origin: string }> {
  const app = Fastify();
  await app.register(apiDocs, { baseUrl: 'http://127.0.0.1', documentUrl: '/fixture/openapi.json' });
  app.get('/fixture/openapi.json', async (_request, reply) => reply.type('application/json').send(document));
  app.get('/v2/scim/Users', async (_request, reply) =>
    reply.type('application/scim+json').send({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 0, Resources: [] }),
  );
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, origin };
}

describe('the API reference page in Chromium, on a fixed OpenAPI 3.1 document', { skip: browserMissing }, () => {
  let browser: Browser;
  let servers: FastifyInstance[] = [];

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  it('renders the operations and models, with every request to its own origin and no CSP violation or error', async (t) => {
    const { app, origin } = await fixtureServer(FIXTURE);
    servers.push(app);
    const { page, requests, problems } = await watchedPage(browser);
    await page.goto(`${origin}/docs/api`);
    const users = await operation(page, 'get', '/v2/scim/Users');
    await operation(page, 'post', '/v2/scim/Users');
    await operation(page, 'get', '/v2/scim/Groups/{id}');
    assert.match(String(await page.locator('.info .title').textContent()), /Rollcall fixture API/);
    // Open an operation and the models: what Swagger UI draws only on demand draws here too.
    await users.locator('.opblock-summary-control').click();
    await users.getByText('A SCIM filter (RFC 7644 3.4.2.2)').waitFor();
    // OpenAPI 3.1 schemas are drawn by Swagger UI's JSON Schema 2020-12 components.
    const model = page.locator('section.models article.json-schema-2020-12', { hasText: 'ListResponse' });
    await model.getByRole('button', { name: 'Expand all' }).click();
    await model.getByText('totalResults').first().waitFor();
    await model.getByText('userName').first().waitFor();
    assert.ok(requests.includes(`${origin}/fixture/openapi.json`), 'the document was fetched from this site');
    assert.deepEqual(otherOrigins(requests, origin), [], 'every request goes to the page\'s origin');
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(problems, []);
    const violations = await axeViolations(page);
    t.diagnostic(`axe-core on the fixed document: ${violations.length === 0 ? 'no violations' : describeViolations(violations).join('; ')}`);
    assert.deepEqual(violations.filter((v) => v.impact === 'critical'), [], 'no critical accessibility violation');
  });

  it('"Try it out" sends its request to this site, and refuses a server of the document on another origin', async () => {
    const elsewhere = JSON.stringify({ ...JSON.parse(FIXTURE), servers: [{ url: ELSEWHERE }] });
    for (const [document, target] of [[FIXTURE, 'here'], [elsewhere, 'elsewhere']] as const) {
      const { app, origin } = await fixtureServer(document);
      servers.push(app);
      const { page, requests, problems } = await watchedPage(browser);
      await page.goto(`${origin}/docs/api`);
      const users = await operation(page, 'get', '/v2/scim/Users');
      await users.locator('.opblock-summary-control').click();
      await users.getByRole('button', { name: 'Try it out' }).click();
      await users.getByRole('button', { name: 'Execute' }).click();
      if (target === 'here') {
        await users.locator('.live-responses-table .response-col_status', { hasText: '200' }).first().waitFor();
        assert.ok(requests.includes(`${origin}/v2/scim/Users`), 'the request went to this site');
        assert.deepEqual(problems, []);
      } else {
        await users.getByText(`This page sends requests only to ${origin}`).first().waitFor();
        assert.ok(!requests.some((url) => url.startsWith(ELSEWHERE)), 'nothing was sent to the other origin');
      }
      assert.deepEqual(otherOrigins(requests, origin), [], `${target}: every request goes to the page's origin`);
      assert.deepEqual(await cspViolations(page), [], `${target}: no CSP violation`);
      await page.context().close();
    }
  });
});

describe('the API reference page in Chromium, on the app\'s own /v2/openapi.json', { skip: browserMissing }, () => {
  let database: TestDatabase;
  let browser: Browser;
  let app: FastifyInstance;
  let origin: string;

  before(async () => {
    database = await engines[0]!.open();
    app = await buildApp({ config: { ...TEST_CONFIG, publicBaseUrl: 'http://127.0.0.1' }, storage: database.storage, delivery: false });
    origin = await app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.dispose();
  });

  it('renders the SCIM operations from the served document, all requests to its origin, no CSP violation or error', async (t) => {
    const { page, requests, problems } = await watchedPage(browser);
    await page.goto(`${origin}/docs/api`);
    const users = await operation(page, 'get', '/v2/scim/Users');
    assert.match(String(await users.textContent()), /\/v2\/scim\/Users/);
    assert.ok(requests.includes(`${origin}/v2/openapi.json`), 'the page loaded the app\'s document');
    assert.deepEqual(otherOrigins(requests, origin), [], 'every request goes to the page\'s origin');
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(problems, []);
    const violations = await axeViolations(page);
    t.diagnostic(`axe-core on /v2/openapi.json: ${violations.length === 0 ? 'no violations' : describeViolations(violations).join('; ')}`);
    assert.deepEqual(violations.filter((v) => v.impact === 'critical'), [], 'no critical accessibility violation');
  });
});
