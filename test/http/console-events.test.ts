/**
 * Issue 12, the console's Events page at the HTTP level: the team's subscriptions (receiver,
 * format (issue 34), events, variant, state with the paused reason, last delivered seq, pending), a subscription's
 * delivery log in pages, and the actions add, pause, resume, replay and delete, each a POST with
 * the CSRF token that writes an audit row naming the console admin, with clear errors (receiver
 * https only, http on loopback, no internal address unless allowed; replay within the feed;
 * another team's subscription is a 404).
 * Hostile receiver URLs, reasons and receiver answers are escaped. The overview shows the
 * pending events and every paused or failing subscription with its reason.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { auditEvents, updateTeamLimits } from '../../src/admin.ts';
import { newId } from '../../src/ids.ts';
import { pruneEvents } from '../../src/storage/repos/events.ts';
import { insertAttempt } from '../../src/storage/repos/subscriptions.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp, TestAppOptions } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';
import { startReceiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const PASSWORD = 'correct horse battery staple';
const HOSTILE_URL = 'https://x.example/"><script>alert(1)</script>?k=<img src=x onerror=alert(2)>';

async function consoleOf(options: TestAppOptions = {}): Promise<{ t: TestApp; page: PageSession }> {
  const t = await createTestApp(options);
  await registerAdmin(t, 'admin@acme.example', PASSWORD);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return { t, page };
}

/** Posts a form whose fields may repeat (checkboxes), with the page's CSRF token. */
async function submit(t: TestApp, page: PageSession, from: string, action: string, fields: [string, string][]): Promise<LightMyRequestResponse> {
  const hidden = hiddenFields((await page.get(from)).body, action);
  const res = await t.app.inject({
    method: 'POST',
    url: action,
    headers: { cookie: page.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams([...Object.entries(hidden), ...fields]).toString(),
  });
  page.jar.take(res);
  return res;
}

async function subscribe(t: TestApp, body: Record<string, unknown>, token = t.token): Promise<string> {
  const res = await t.request('POST', '/v2/events/subscriptions', body, { 'content-type': 'application/json', authorization: `Bearer ${token}` });
  assert.equal(res.statusCode, 201, res.body);
  return String(json(res).id);
}

async function users(t: TestApp, n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.request('POST', '/v2/scim/Users', { userName: `${prefix}${i}@acme.example` });
    assert.equal(res.statusCode, 201, res.body);
    ids.push(String(json(res).id));
  }
  return ids;
}

/** A page without the stacked tables' cell labels (for matching rows). */
const unlabelled = (html: string): string => html.replace(/ data-label="[^"]*"/g, '');

const consoleAudit = async (t: TestApp, action: string) =>
  (await auditEvents(adminDeps(t), 'acme', undefined, 200)).filter((e) => e.action === action && (e.actor as { via: string }).via === 'console');

/** The cells of the row of the subscriptions table that links to `id`. */
function rowOf(body: string, id: string): string {
  const row = [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!).find((r) => r.includes(`/console/events/subscriptions/${id}"`));
  assert.ok(row, `a row for ${id}`);
  return row.replace(/<[^>]+>/g, '|').replace(/\|+/g, '|');
}

for (const engine of engines) {
  describe(`console Events page (${engine.name})`, () => {
    it("lists only the team's subscriptions: receiver, events, variant, state, paused reason, last delivered seq, pending", async () => {
      const { t, page } = await consoleOf({ engine });
      try {
        const empty = await page.get('/console/events');
        assert.equal(empty.statusCode, 200);
        assert.match(empty.body, /No subscriptions yet/);
        const all = await subscribe(t, { url: 'https://all.example/events' });
        const creates = await subscribe(t, { url: 'https://creates.example/events', events: ['create'], full: true });
        const other = await t.addTeam('other');
        const foreign = await subscribe(t, { url: 'https://other-team.example/events' }, other.token);
        const [first] = await users(t, 3, 'u');
        const patched = await t.request('PATCH', `/v2/scim/Users/${first}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] });
        assert.equal(patched.statusCode, 200, patched.body);
        const paused = await t.request('POST', `/v2/events/subscriptions/${creates}/pause`, {}, { 'content-type': 'application/json' });
        assert.equal(paused.statusCode, 200);

        const body = (await page.get('/console/events')).body;
        assert.match(body, /change feed is at seq 5 \(1 to 5 kept/);
        assert.equal(rowOf(body, all), '|https://all.example/events|SET|all|notice|active|1|4|');
        assert.equal(rowOf(body, creates), '|https://creates.example/events|SET|create|full|paused|: |paused by an administrator|1|3|');
        assert.ok(!body.includes(foreign) && !body.includes('other-team.example'), "another team's subscription is not shown");
        const detail = await page.get(`/console/events/subscriptions/${foreign}`);
        assert.equal(detail.statusCode, 404);
      } finally {
        await t.close();
      }
    });

    it('adds a subscription (https, or http on loopback) from the form: audited as the admin; bad URLs and events are refused with a clear error, nothing written', async () => {
      const { t, page } = await consoleOf({ engine });
      try {
        const refused: [string, RegExp][] = [
          ['http://receiver.example/events', /must be https \(plain http only on a loopback address/],
          ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address: .*unless the operator allows them/],
          ['https://[fd00::1]/events', /fd00::1 is a unique-local address/],
          ['ftp://receiver.example/events', /must be https/],
          ['not a url', /is not an absolute URL/],
          ['https://user:secret@receiver.example/', /must not carry credentials/],
          ['', /enter the receiver URL/],
        ];
        for (const [url, message] of refused) {
          const res = await submit(t, page, '/console/events', '/console/events/subscriptions', [['url', url]]);
          assert.equal(res.statusCode, 400, url);
          assert.match(res.body, /class="alert" role="alert"/);
          assert.match(res.body, message, url);
        }
        const badEvent = await submit(t, page, '/console/events', '/console/events/subscriptions', [['url', 'https://r.example/'], ['events', 'explode']]);
        assert.equal(badEvent.statusCode, 400);
        assert.match(badEvent.body, /unknown event &quot;explode&quot;/);
        assert.match(badEvent.body, /value="https:\/\/r\.example\/"/, 'the form keeps what was typed');
        assert.deepEqual((await t.request('GET', '/v2/events/subscriptions')).json(), { subscriptions: [] });
        assert.deepEqual(await consoleAudit(t, 'subscription_created'), []);

        const created = await submit(t, page, '/console/events', '/console/events/subscriptions', [['url', 'https://app.example/scim-events?key=s3cret'], ['events', 'create'], ['events', 'delete'], ['full', '1']]);
        assert.equal(created.statusCode, 303, created.body);
        const id = /^\/console\/events\/subscriptions\/([A-Z0-9]+)\?done=created$/.exec(String(created.headers.location))?.[1];
        assert.ok(id, String(created.headers.location));
        const shown = await page.get(String(created.headers.location));
        assert.match(shown.body, /Subscription added/);
        const api = json(await t.request('GET', `/v2/events/subscriptions/${id}`));
        assert.deepEqual([api.url, api.events, api.full, api.state], ['https://app.example/scim-events?key=s3cret', ['create', 'delete'], true, 'active']);
        const loopback = await submit(t, page, '/console/events', '/console/events/subscriptions', [['url', 'http://127.0.0.1:9/events']]);
        assert.equal(loopback.statusCode, 303);

        const audited = (await consoleAudit(t, 'subscription_created')).map((a) => ({ ...a, detail: a.detail as Record<string, unknown> }));
        assert.equal(audited.length, 2);
        assert.equal(audited.find((a) => a.resourceId === id)?.detail.url, 'https://app.example/scim-events?…', 'the audit row keeps no query (receivers put secrets there)');
        assert.deepEqual(audited.find((a) => a.resourceId === id)?.detail.events, ['create', 'delete']);
      } finally {
        await t.close();
      }
    });

    it('pause (with a reason), resume, replay and delete: CSRF POSTs, each audited as the admin, each shown; refusals are clear', async () => {
      const { t, page } = await consoleOf({ engine });
      try {
        const id = await subscribe(t, { url: 'https://app.example/events' });
        await users(t, 5, 'r');
        const path = `/console/events/subscriptions/${id}`;

        const noCsrf = await page.post(`${path}/pause`, { reason: 'forged' });
        assert.equal(noCsrf.statusCode, 403);
        assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).state, 'active', 'a forged form changes nothing');

        const paused = await submit(t, page, path, `${path}/pause`, [['reason', 'receiver under maintenance']]);
        assert.equal(paused.statusCode, 303);
        assert.equal(paused.headers.location, `${path}?done=paused`);
        const pausedPage = (await page.get(`${path}?done=paused`)).body;
        assert.match(pausedPage, /Paused: nothing is sent/);
        assert.match(pausedPage, /paused<\/span>: <span dir="auto">receiver under maintenance<\/span>/);
        assert.match(pausedPage, /action="[^"]+\/resume"/, 'a paused subscription offers resume');
        assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).pausedReason, 'receiver under maintenance');
        const resumed = await submit(t, page, path, `${path}/resume`, []);
        assert.equal(resumed.statusCode, 303);
        assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).state, 'active');
        const longReason = await submit(t, page, path, `${path}/pause`, [['reason', 'x'.repeat(201)]]);
        assert.equal(longReason.statusCode, 400);
        assert.match(longReason.body, /the reason is at most 200 characters/);

        // A replay asks first (issue 30 item 5): its page counts the events, and refusals are shown on the subscription page.
        const replay = async (from: string) => {
          const confirm = await page.get(`${path}/replay?from=${encodeURIComponent(from)}`);
          if (confirm.statusCode !== 200) return confirm;
          return submit(t, page, `${path}/replay?from=${encodeURIComponent(from)}`, `${path}/replay`, []);
        };
        for (const [from, status, message] of [
          ['abc', 400, /replay from a sequence number: a whole number/],
          ['0', 400, /a whole number, 1 or more/],
          ['99', 400, /from 99 is past the end of the feed \(last seq 6\)/],
        ] as const) {
          const res = await replay(from);
          assert.equal(res.statusCode, status, from);
          assert.match(res.body, message);
        }
        const pausedAgain = await submit(t, page, path, `${path}/pause`, []);
        assert.equal(pausedAgain.statusCode, 303);
        const whilePaused = await replay('6');
        assert.equal(whilePaused.headers.location, `${path}?done=replayed-paused`);
        assert.match((await page.get(String(whilePaused.headers.location))).body, /Replay set: .* once the subscription is resumed/);
        assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).cursor, 5);
        assert.equal((await submit(t, page, path, `${path}/resume`, [])).statusCode, 303);
        const replayed = await replay('4');
        assert.equal(replayed.statusCode, 303);
        assert.equal(replayed.headers.location, `${path}?done=replayed`, 'an active subscription: the replay starts now');
        const after = json(await t.request('GET', `/v2/events/subscriptions/${id}`));
        assert.equal(after.cursor, 3);
        assert.match((await page.get(`${path}?done=replayed`)).body, /Replay started/);

        assert.equal(await pruneEvents(t.storage.db, '2999-01-01T00:00:00.000Z', 500), 6);
        const pruned = await replay('3');
        assert.equal(pruned.statusCode, 410);
        assert.match(pruned.body, /were pruned by the retention/);

        const other = await t.addTeam('other');
        const foreign = await subscribe(t, { url: 'https://other.example/' }, other.token);
        const foreignPath = `/console/events/subscriptions/${foreign}`;
        for (const action of ['pause', 'resume', 'replay', 'delete']) {
          // Another team's subscription has no page here: post with a valid token of this session.
          const forged = await t.app.inject({
            method: 'POST',
            url: `${foreignPath}/${action}`,
            headers: { cookie: page.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
            payload: new URLSearchParams({ ...hiddenFields((await page.get(path)).body, `${path}/pause`), from: '1', confirmed: '1' }).toString(),
          });
          assert.equal(forged.statusCode, 404, action);
        }
        assert.equal((await t.request('GET', `/v2/events/subscriptions/${foreign}`, undefined, { authorization: `Bearer ${other.token}` })).json().state, 'active');

        const deleted = await submit(t, page, `${path}/delete`, `${path}/delete`, []);
        assert.equal(deleted.statusCode, 303);
        assert.equal(deleted.headers.location, '/console/events?done=deleted');
        assert.match((await page.get('/console/events?done=deleted')).body, /Subscription deleted/);
        assert.equal((await t.request('GET', `/v2/events/subscriptions/${id}`)).statusCode, 404);
        assert.equal((await page.get(path)).statusCode, 404);

        const trail = (await auditEvents(adminDeps(t), 'acme', undefined, 200)).filter((e) => e.resourceType === 'Subscription' && e.resourceId === id);
        assert.deepEqual(
          trail.map((e) => [e.action, (e.actor as { via: string }).via]).sort(),
          [
            ['subscription_created', 'scim'],
            ['subscription_deleted', 'console'],
            ['subscription_paused', 'console'],
            ['subscription_paused', 'console'],
            ['subscription_replayed', 'console'],
            ['subscription_replayed', 'console'],
            ['subscription_resumed', 'console'],
            ['subscription_resumed', 'console'],
          ],
          'refused actions wrote no row',
        );
        assert.equal((trail.find((e) => e.action === 'subscription_paused')?.detail as Record<string, unknown>).reason, 'receiver under maintenance');
        assert.deepEqual(
          trail.filter((e) => e.action === 'subscription_replayed').map((e) => e.detail),
          [{ url: 'https://app.example/events', from: 6, cursorWas: 1 }, { url: 'https://app.example/events', from: 4, cursorWas: 5 }],
        );
      } finally {
        await t.close();
      }
    });
  });
}

describe('console Events page: delivery log, escaping, overview', () => {
  it('the delivery log shows time, seq, status, latency and error, newest first, 50 a page; a bad position is a 400', async () => {
    const { t, page } = await consoleOf();
    try {
      const id = await subscribe(t, { url: 'https://app.example/events' });
      for (let i = 1; i <= 60; i++) {
        await insertAttempt(t.storage.db, { id: newId(), subscription_id: id, seq: i, at: new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString(), status: i % 2 ? 202 : 503, latency_ms: i, error: i % 2 ? null : 'http 503' });
      }
      const path = `/console/events/subscriptions/${id}`;
      const first = unlabelled((await page.get(path)).body);
      const seqsOf = (html: string) => [...html.matchAll(/<tr><td><time datetime="2026-01-02T[^"]+"[^>]*>[^<]*<\/time><\/td><td>(\d+)<\/td>/g)].map((m) => Number(m[1]));
      assert.deepEqual(seqsOf(first), Array.from({ length: 50 }, (_, i) => 60 - i));
      assert.match(first, /<td><time datetime="2026-01-02T00:01:00\.000Z" title="2026-01-02 00:01:00 UTC">[^<]+<\/time><\/td><td>60<\/td><td><span class="status-4">503<\/span><\/td><td>60 ms<\/td><td><code>http 503<\/code><\/td>/);
      assert.match(first, /<td>59<\/td><td>202<\/td><td>59 ms<\/td>/);
      const next = /href="([^"]+)" rel="next">Older attempts/.exec(first)?.[1];
      assert.ok(next);
      const second = unlabelled((await page.get(next.replace(/&amp;/g, '&'))).body);
      assert.deepEqual(seqsOf(second), [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
      assert.doesNotMatch(second, /Older attempts/);
      const bad = await page.get(`${path}?before=${encodeURIComponent('<script>')}`);
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /the page position is not valid/);
      assert.doesNotMatch(bad.body, /<script>/);
    } finally {
      await t.close();
    }
  });

  it('hostile receiver URLs, paused reasons and receiver errors are escaped on the Events page, the subscription page and the overview', async () => {
    const { t, page } = await consoleOf();
    try {
      const id = await subscribe(t, { url: HOSTILE_URL });
      await insertAttempt(t.storage.db, { id: newId(), subscription_id: id, seq: 1, at: '2026-01-02T00:00:00.000Z', status: 500, latency_ms: 3, error: 'HTTP 500: <script>alert(3)</script>' });
      const path = `/console/events/subscriptions/${id}`;
      assert.equal((await submit(t, page, path, `${path}/pause`, [['reason', '<img src=y onerror=alert(4)>\u202Eevil']])).statusCode, 303);
      const refused = await submit(t, page, '/console/events', '/console/events/subscriptions', [['url', 'http://"><script>alert(5)</script>.example/']]);
      assert.equal(refused.statusCode, 400);
      const bodies = [(await page.get('/console/events')).body, (await page.get(path)).body, (await page.get('/console')).body, refused.body];
      for (const body of bodies) {
        assert.doesNotMatch(body, /<script>alert/);
        assert.doesNotMatch(body, /<img src=/);
      }
      assert.match(bodies[0]!, /https:\/\/x\.example\/&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;\?k=&lt;img src=x onerror=alert\(2\)&gt;/);
      assert.match(bodies[1]!, /HTTP 500: &lt;script&gt;alert\(3\)&lt;\/script&gt;/);
      assert.match(bodies[2]!, /&lt;img src=y onerror=alert\(4\)&gt;\u202Eevil/);
      assert.match(bodies[3]!, /value="http:\/\/&quot;&gt;&lt;script&gt;alert\(5\)/);
    } finally {
      await t.close();
    }
  });

  it('overview: no subscriptions; then real pending events, and a subscription paused by failing deliveries shown with its reason', async () => {
    const receiver = await startReceiver(() => ({ status: 500, body: '<b>down</b>' }));
    const { t, page } = await consoleOf({ deps: { delivery: { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 20, timeoutMs: 10_000, giveUpAfterMs: 0 } } });
    try {
      const quiet = (await page.get('/console')).body;
      assert.match(quiet, /<span class="n">0<\/span><span class="l">events pending \(no subscriptions\)<\/span>/);
      assert.match(quiet, /no event subscription paused or failing/);

      const id = await subscribe(t, { url: receiver.url });
      await users(t, 3, 'o');
      // The first attempt fails and, with no time allowed for failing, pauses the subscription.
      await until(async () => json(await t.request('GET', `/v2/events/subscriptions/${id}`)).state === 'paused');
      const overview = (await page.get('/console')).body;
      assert.match(overview, /<span class="n">3<\/span><span class="l">events pending \(1 subscription\)<\/span>/);
      assert.match(overview, /1 event subscription\(s\) need attention/);
      assert.match(overview, new RegExp(`href="/console/events/subscriptions/${id}">http://127\\.0\\.0\\.1:\\d+/events</a> is paused: <span dir="auto">paused after failing since [^<]+ \\(1 attempts\\); last error: http 500</span>`));
      assert.doesNotMatch(overview, /Nothing failing/);
      const detail = unlabelled((await page.get(`/console/events/subscriptions/${id}`)).body);
      // The log keeps the status's category, never the receiver's answer.
      assert.match(detail, /<td>2<\/td><td><span class="status-4">500<\/span><\/td><td>\d+ ms<\/td><td><code>http 500<\/code>/);
      assert.doesNotMatch(detail, /down/);

      // Fixed and resumed: everything is delivered, nothing pending, nothing failing.
      receiver.answer = () => ({ status: 202 });
      const resumed = await submit(t, page, `/console/events/subscriptions/${id}`, `/console/events/subscriptions/${id}/resume`, []);
      assert.equal(resumed.statusCode, 303);
      await until(async () => json(await t.request('GET', `/v2/events/subscriptions/${id}`)).cursor === 4);
      const healthy = (await page.get('/console')).body;
      assert.match(healthy, /<span class="n">0<\/span><span class="l">events pending \(1 subscription\)<\/span>/);
      assert.match(healthy, /no event subscription paused or failing/);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('overview: an active subscription whose deliveries fail is shown as failing, with when it tries again', async () => {
    const receiver = await startReceiver(() => ({ status: 503 }));
    const { t, page } = await consoleOf({ deps: { delivery: { pollIntervalMs: 10, backoffBaseMs: 60_000, backoffMaxMs: 60_000, timeoutMs: 10_000 } } });
    try {
      const id = await subscribe(t, { url: receiver.url });
      await users(t, 1, 'f');
      await until(async () => Number(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).failures) >= 1);
      const overview = (await page.get('/console')).body;
      assert.match(overview, /is failing: <span dir="auto">failing since [^<]+ \(1 attempts\); next attempt /);
      assert.match((await page.get('/console/events')).body, /<span class="status-4">failing<\/span> since/);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it("over the team's subscriptions budget the form shows the refusal (400) and it is counted per team", async () => {
    const { t, page } = await consoleOf();
    try {
      await updateTeamLimits(adminDeps(t), 'acme', [{ name: 'subscriptions', value: 1 }]);
      assert.equal((await submit(t, page, '/console/events', '/console/events/subscriptions', [['url', 'https://one.example/events']])).statusCode, 303);
      const refused = await submit(t, page, '/console/events', '/console/events/subscriptions', [['url', 'https://two.example/events']]);
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /holds 1 event subscriptions, its budget is 1/);
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, new RegExp(`rollcall_budget_refusals_total\\{team="${t.team.id}",budget="subscriptions"\\} 1`));
    } finally {
      await t.close();
    }
  });
});
