/**
 * Issue 30 item 7 at the HTTP level, on every engine: an admin sets up an authenticator app on
 * the console's Security page (the secret sealed at rest, confirmed by a code, audited); sign-in
 * then asks for a code after the password (RFC 6238, ±1 step), refuses a code replayed in its
 * step and a wrong one, and locks out like a password; recovery codes are shown once and work
 * once; a team that requires a second factor sends an admin without one to the Security page
 * first, refuses the password grant and the authorization pages until they have one, and keeps
 * an admin from removing their last factor; the authorization pages ask for the code too; a
 * passkey ceremony's options name the site as relying party and its challenge serves once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditEvents, createTeamUser } from '../../src/admin.ts';
import { hotp, timeStep } from '../../src/oauth/totp.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, passwordGrant, registerAdmin, registerClient } from '../support/oauth.ts';
import { base32Decode } from '../support/base32.ts';

const PASSWORD = 'correct horse battery staple';
const ADMIN = 'admin@acme.example';

const unescape = (s: string): string => s.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"');

async function passwordStep(t: TestApp, username = ADMIN): Promise<{ page: PageSession; location: string }> {
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body, '/console/sign-in'), username, password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return { page, location: String(res.headers.location) };
}

async function signedIn(t: TestApp, username = ADMIN): Promise<PageSession> {
  const { page, location } = await passwordStep(t, username);
  assert.equal(location, '/console');
  return page;
}

/** Sets up the authenticator app of the signed-in admin; returns its key. */
async function setUpTotp(t: TestApp, page: PageSession): Promise<Buffer> {
  const security = await page.get('/console/security');
  assert.equal(security.statusCode, 200, security.body);
  const begun = await page.post('/console/security/totp', hiddenFields(security.body, '/console/security/totp'));
  assert.equal(begun.statusCode, 303, begun.body);
  const shown = await page.get('/console/security');
  const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(shown.body)?.[1];
  assert.ok(secret, 'the secret is shown as text');
  const uri = new URL(unescape(/<a href="(otpauth:[^"]+)"/.exec(shown.body)?.[1] ?? ''));
  assert.equal(uri.searchParams.get('secret'), secret);
  const key = base32Decode(secret);
  const wrong = await page.post('/console/security/totp/confirm', { ...hiddenFields(shown.body, '/console/security/totp/confirm'), code: '000000' === codeNow(t, key) ? '111111' : '000000' });
  assert.equal(wrong.statusCode, 400);
  assert.match(wrong.body, /That code is not right/);
  const confirmed = await page.post('/console/security/totp/confirm', { ...hiddenFields(shown.body, '/console/security/totp/confirm'), code: codeNow(t, key) });
  assert.equal(confirmed.statusCode, 303, confirmed.body);
  assert.equal(confirmed.headers.location, '/console/security?done=totp-on');
  return key;
}

const codeNow = (t: TestApp, key: Buffer, offset = 0): string => hotp(key, timeStep(t.clock.now().getTime()) + offset);

async function verifyWith(page: PageSession, code: string) {
  const form = await page.get('/console/sign-in/verify');
  assert.equal(form.statusCode, 200, form.body);
  return page.post('/console/sign-in/verify', { ...hiddenFields(form.body, '/console/sign-in/verify'), code });
}

for (const engine of engines) {
  describe(`console second factors (HTTP, ${engine.name})`, () => {
    it('TOTP: set up and confirmed on the Security page, sealed at rest, audited; sign-in then asks for a code, refuses a wrong one and a replayed one', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, ADMIN, PASSWORD);
        const page = await signedIn(t);
        const key = await setUpTotp(t, page);
        const row = await t.storage.db.selectFrom('totp_factors').selectAll().executeTakeFirstOrThrow();
        assert.match(row.secret, /^v1\./);
        assert.ok(!row.secret.includes(key.toString('base64url')));
        assert.match((await page.get('/console/security?done=totp-on')).body, /An authenticator app is set up/);
        const actions = (await auditEvents(adminDeps(t), t.team.name, undefined, 1000)).map((a) => a.action);
        assert.ok(actions.includes('totp_enabled'), actions.join());

        // The password alone opens nothing now: the second step comes first.
        t.clock.advance(60_000);
        const { page: next, location } = await passwordStep(t);
        assert.equal(location, '/console/sign-in/verify');
        assert.equal((await next.get('/console')).headers.location, '/console/sign-in');
        const wrong = await verifyWith(next, codeNow(t, key, 3));
        assert.equal(wrong.statusCode, 401);
        const code = codeNow(t, key, -1); // one step late is accepted
        const passed = await verifyWith(next, code);
        assert.equal(passed.statusCode, 303, passed.body);
        assert.equal(passed.headers.location, '/console');
        assert.equal((await next.get('/console/users')).statusCode, 200);

        // The same code again, in another browser: refused (its step was used).
        const { page: replay } = await passwordStep(t);
        assert.equal((await verifyWith(replay, code)).statusCode, 401);
        // Its own current code passes.
        assert.equal((await verifyWith(replay, codeNow(t, key))).statusCode, 303);
        const failed = (await auditEvents(adminDeps(t), t.team.name, undefined, 1000)).filter((a) => a.action === 'second_factor_failed');
        assert.equal(failed.length, 2);
      } finally {
        await t.close();
      }
    });

    it('the audit says what happened: the password alone writes no sign_in, a wrong code second_factor_failed, the sign-in completed by the code sign_in', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, ADMIN, PASSWORD);
        const page = await signedIn(t);
        const key = await setUpTotp(t, page);
        const since = t.clock.now().toISOString();
        t.clock.advance(60_000);
        const after = async () => (await auditEvents(adminDeps(t), t.team.name, since, 1000)).filter((a) => a.at > since).map((a) => a.action);
        const { page: next, location } = await passwordStep(t);
        assert.equal(location, '/console/sign-in/verify');
        assert.deepEqual(await after(), [], 'the password was right, but the sign-in is not complete');
        assert.equal((await verifyWith(next, codeNow(t, key, 3))).statusCode, 401);
        assert.deepEqual(await after(), ['second_factor_failed']);
        assert.equal((await verifyWith(next, codeNow(t, key))).statusCode, 303);
        const rows = (await auditEvents(adminDeps(t), t.team.name, since, 1000)).filter((a) => a.at > since);
        assert.deepEqual(rows.map((a) => a.action), ['second_factor_failed', 'sign_in']);
        assert.deepEqual(rows[1]!.detail, { method: 'form', secondFactor: 'totp' });
      } finally {
        await t.close();
      }
    });

    it('an admin who lost every factor: another admin resets them from the Admins page after a confirmation saying what goes; signed out, they set one up at their next sign-in; audited', async () => {
      const t = await createTestApp({ engine });
      try {
        const OTHER = 'other@acme.example';
        await registerAdmin(t, ADMIN, PASSWORD);
        await createTeamUser(adminDeps(t), t.team.name, OTHER, { password: PASSWORD, admin: true });
        const page = await signedIn(t);
        await setUpTotp(t, page);
        const on = await page.post('/console/settings/second-factor', { ...hiddenFields((await page.get('/console/settings')).body, '/console/settings/second-factor'), required: '1' });
        assert.equal(on.statusCode, 303);
        const other = await signedIn(t, OTHER);
        await setUpTotp(t, other);
        const codes = await other.post('/console/security/recovery-codes', hiddenFields((await other.get('/console/security')).body, '/console/security/recovery-codes'));
        assert.equal(codes.statusCode, 303);
        assert.equal((await other.get('/console/users')).statusCode, 200);

        const admins = await page.get('/console/admins');
        const reset = new RegExp(`href="(/console/admins/[A-Z0-9]{20}/reset-factors)" aria-label="Reset second factors of ${OTHER}"`).exec(admins.body)?.[1];
        assert.ok(reset, admins.body);
        const self = /href="(\/console\/admins\/[A-Z0-9]{20})\/reset-factors"/g;
        assert.equal([...admins.body.matchAll(self)].length, 1, 'no reset link for oneself');
        const confirm = await page.get(reset);
        assert.equal(confirm.statusCode, 200, confirm.body);
        assert.match(confirm.body, /This removes <strong>the authenticator app and 10 unused recovery codes<\/strong>/);
        assert.match(confirm.body, /this team requires a second factor, are sent to set one up/);
        assert.equal((await other.get('/console/users')).statusCode, 200, 'the confirmation page changes nothing');
        const done = await page.post(reset, hiddenFields(confirm.body, reset));
        assert.equal(done.statusCode, 303, done.body);
        assert.equal(done.headers.location, '/console/admins?done=factors-reset');
        assert.match((await page.get('/console/admins?done=factors-reset')).body, /Second factors reset/);

        assert.equal((await other.get('/console/users')).headers.location, '/console/sign-in', 'signed out everywhere');
        const { page: back, location } = await passwordStep(t, OTHER);
        assert.equal(location, '/console', 'no second step: they have no factor left');
        assert.equal((await back.get('/console/users')).headers.location, '/console/security', 'the team requires one: set it up first');
        const row = (await auditEvents(adminDeps(t), t.team.name, undefined, 1000)).find((a) => a.action === 'second_factors_reset');
        assert.ok(row);
        assert.deepEqual({ ...(row.detail as Record<string, unknown>), sessionsEnded: undefined }, { userName: OTHER, passkeys: 0, totp: true, recoveryCodes: 10, sessionsEnded: undefined });
        assert.ok(((row.detail as { sessionsEnded: number }).sessionsEnded) >= 1);
        assert.equal((row.actor as { via: string }).via, 'console');

        const mine = await t.storage.db.selectFrom('users').select('id').where('user_name', '=', ADMIN).executeTakeFirstOrThrow();
        const refused = await page.get(`/console/admins/${mine.id}/reset-factors`);
        assert.equal(refused.statusCode, 409);
        assert.match(refused.body, /cannot reset your own second factors/);
      } finally {
        await t.close();
      }
    });

    it('wrong codes are limited like passwords: the sixth in a row is a 429', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, ADMIN, PASSWORD);
        const key = await setUpTotp(t, await signedIn(t));
        t.clock.advance(60_000);
        const { page } = await passwordStep(t);
        const wrong = codeNow(t, key, 5);
        for (let i = 0; i < 5; i++) assert.equal((await verifyWith(page, wrong)).statusCode, 401, `attempt ${i + 1}`);
        const locked = await verifyWith(page, codeNow(t, key));
        assert.equal(locked.statusCode, 429);
      } finally {
        await t.close();
      }
    });

    it('recovery codes: shown once (post/redirect/get), each works once in place of a code, audited', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, ADMIN, PASSWORD);
        const page = await signedIn(t);
        const security = await page.get('/console/security');
        const early = await page.post('/console/security/recovery-codes', hiddenFields(security.body, '/console/security/recovery-codes'));
        assert.equal(early.statusCode, 409, 'no codes without a factor');
        await setUpTotp(t, page);
        const made = await page.post('/console/security/recovery-codes', hiddenFields((await page.get('/console/security')).body, '/console/security/recovery-codes'));
        assert.equal(made.statusCode, 303);
        const shown = await page.get('/console/security');
        const codes = /<pre id="recovery-codes">([^<]+)<\/pre>/.exec(shown.body)?.[1]?.split('\n') ?? [];
        assert.equal(codes.length, 10);
        assert.match(codes[0]!, /^[a-z2-9]{5}-[a-z2-9]{5}$/);
        const again = await page.get('/console/security');
        assert.doesNotMatch(again.body, /recovery-codes">/);
        assert.match(again.body, /10 unused recovery code/);
        const stored = await t.storage.db.selectFrom('recovery_codes').select('code_hash').execute();
        assert.ok(stored.every((r) => !codes.some((c) => r.code_hash.includes(c))));

        const { page: first } = await passwordStep(t);
        assert.equal((await verifyWith(first, codes[0]!.toUpperCase())).statusCode, 303);
        const { page: second } = await passwordStep(t);
        assert.equal((await verifyWith(second, codes[0]!)).statusCode, 401, 'a used recovery code is refused');
        assert.equal((await verifyWith(second, codes[1]!)).statusCode, 303);
        const actions = (await auditEvents(adminDeps(t), t.team.name, undefined, 1000)).map((a) => a.action);
        assert.equal(actions.filter((a) => a === 'recovery_code_used').length, 2);
        assert.ok(actions.includes('recovery_codes_generated'));
      } finally {
        await t.close();
      }
    });

    it('a team that requires a second factor: only an admin with one turns it on; an admin without one is sent to the Security page before anything else, and cannot use the password grant or authorize an application', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, ADMIN, PASSWORD);
        await createTeamUser(adminDeps(t), t.team.name, 'other@acme.example', { password: PASSWORD, admin: true });
        const page = await signedIn(t);
        const settings = await page.get('/console/settings');
        assert.match(settings.body, /Require a passkey or an authenticator app/);
        const refused = await page.post('/console/settings/second-factor', { ...hiddenFields(settings.body, '/console/settings/second-factor'), required: '1' });
        assert.equal(refused.statusCode, 409);
        assert.match(refused.body, /for yourself first/);
        await setUpTotp(t, page);
        const on = await page.post('/console/settings/second-factor', { ...hiddenFields((await page.get('/console/settings')).body, '/console/settings/second-factor'), required: '1' });
        assert.equal(on.statusCode, 303);
        assert.match((await page.get('/console/settings')).body, /name="required" value="1" checked/);
        const audit = (await auditEvents(adminDeps(t), t.team.name, undefined, 1000)).find((a) => a.action === 'team_updated');
        assert.deepEqual(audit?.detail, { requireSecondFactor: true });

        // Their only factor cannot go while the team requires one.
        const security = await page.get('/console/security');
        const remove = await page.post('/console/security/totp/remove', hiddenFields(security.body, '/console/security/totp/remove'));
        assert.equal(remove.statusCode, 409);
        assert.match(remove.body, /requires a second factor/);

        // The other admin: every page but Security sends them there.
        const other = await signedIn(t, 'other@acme.example');
        for (const path of ['/console', '/console/users', '/console/settings']) {
          const res = await other.get(path);
          assert.equal(res.statusCode, 303, path);
          assert.equal(res.headers.location, '/console/security');
        }
        const told = await other.get('/console/security');
        assert.equal(told.statusCode, 200);
        assert.match(told.body, /Your team requires a second factor/);

        const client = await registerClient(t, ['https://app.example/callback'], t.team.name);
        const grant = await passwordGrant(t, client, { userName: 'other@acme.example', password: PASSWORD });
        assert.equal(grant.statusCode, 400);
        assert.equal(grant.json().error, 'invalid_grant');
        const oauth = new PageSession(t);
        const query = new URLSearchParams({ client_id: client.id, response_type: 'code', redirect_uri: 'https://app.example/callback', state: 's1' }).toString();
        const form = await oauth.get(`/oauth/authorize?${query}`);
        const denied = await oauth.post('/oauth/authorize', { ...hiddenFields(form.body, '/oauth/authorize'), username: 'other@acme.example', password: PASSWORD });
        assert.equal(denied.statusCode, 403);
        assert.match(denied.body, /Your team requires a second factor/);

        // Once they set one up, the console opens.
        await setUpTotp(t, other);
        assert.equal((await other.get('/console/users')).statusCode, 200);
      } finally {
        await t.close();
      }
    });

    it('the authorization pages ask an admin with an authenticator app for a code after the password, then show the consent page', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, ADMIN, PASSWORD);
        const key = await setUpTotp(t, await signedIn(t));
        const client = await registerClient(t, ['https://app.example/callback'], t.team.name);
        const grant = await passwordGrant(t, client, { userName: ADMIN, password: PASSWORD });
        assert.equal(grant.json().error, 'invalid_grant', 'the password grant takes no second factor');
        t.clock.advance(60_000);
        const oauth = new PageSession(t);
        const query = new URLSearchParams({ client_id: client.id, response_type: 'code', redirect_uri: 'https://app.example/callback', state: 's1' }).toString();
        const form = await oauth.get(`/oauth/authorize?${query}`);
        const step = await oauth.post('/oauth/authorize', { ...hiddenFields(form.body, '/oauth/authorize'), username: ADMIN, password: PASSWORD });
        assert.equal(step.statusCode, 200, step.body);
        assert.match(step.body, /Confirm it is you/);
        // Not signed in yet: the authorization request still shows the sign-in page.
        assert.doesNotMatch((await oauth.get(`/oauth/authorize?${query}`)).body, /Allow Acme Sync/);
        const fields = hiddenFields(step.body, '/oauth/authorize/verify');
        assert.equal((await oauth.post('/oauth/authorize/verify', { ...fields, code: codeNow(t, key, 4) })).statusCode, 401);
        const passed = await oauth.post('/oauth/authorize/verify', { ...fields, code: codeNow(t, key) });
        assert.equal(passed.statusCode, 303, passed.body);
        const consent = await oauth.get(String(passed.headers.location));
        assert.match(consent.body, /Allow Acme Sync/);
      } finally {
        await t.close();
      }
    });

    it('passkeys: registration options name the site as relying party; an answer that does not verify is refused and stores nothing; a challenge serves once', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, ADMIN, PASSWORD);
        const page = await signedIn(t);
        const security = await page.get('/console/security');
        assert.match(security.body, /data-passkey="create"/);
        const fields = hiddenFields(security.body, '/console/security/passkeys');
        const options = await page.post('/console/security/passkeys/options', { _csrf: fields._csrf! });
        assert.equal(options.statusCode, 200, options.body);
        assert.equal(options.headers['cache-control'], 'no-store');
        const json = options.json();
        assert.equal(json.rp.id, 'rollcall.test');
        assert.equal(json.user.name, ADMIN);
        assert.equal(json.authenticatorSelection.userVerification, 'required');
        assert.equal(json.authenticatorSelection.residentKey, 'required');
        assert.match(json.challenge, /^[A-Za-z0-9_-]{43}$/);
        const forged = await page.post('/console/security/passkeys', { ...fields, name: 'Laptop', credential: JSON.stringify({ id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'oA' }, clientExtensionResults: {} }) });
        assert.equal(forged.statusCode, 400);
        assert.match(forged.body, /did not verify/);
        const reused = await page.post('/console/security/passkeys', { ...fields, name: 'Laptop', credential: '{"id":"abc","response":{}}' });
        assert.equal(reused.statusCode, 400);
        assert.match(reused.body, /expired or was used already/);
        const garbage = await page.post('/console/security/passkeys', { ...fields, credential: 'not json' });
        assert.equal(garbage.statusCode, 400);
        assert.equal((await t.storage.db.selectFrom('passkeys').selectAll().execute()).length, 0);

        // Signing in with a passkey nobody registered: refused with the sign-in page.
        const anon = new PageSession(t);
        const signIn = await anon.get('/console/sign-in');
        const passkeyForm = hiddenFields(signIn.body, '/console/sign-in/passkey');
        const request = await anon.post('/console/sign-in/passkey/options', { _csrf: passkeyForm._csrf! });
        assert.equal(request.statusCode, 200);
        assert.equal(request.json().rpId, 'rollcall.test');
        assert.equal(request.json().allowCredentials, undefined);
        const refused = await anon.post('/console/sign-in/passkey', { ...passkeyForm, credential: JSON.stringify({ id: 'unknown', rawId: 'unknown', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' }, clientExtensionResults: {} }) });
        assert.equal(refused.statusCode, 401);
        assert.match(refused.body, /not accepted/);
      } finally {
        await t.close();
      }
    });
  });
}
