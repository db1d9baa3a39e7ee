/**
 * Issue 13 item 8: sign-in names are per team (DESIGN.md section 5). The same userName may sign
 * in to two teams; a client bound to a team decides the team and never checks (or records in the
 * audit trail of) another team; a client bound to no team resolves a name held by several teams
 * without revealing anything: exactly one match signs in, several ask which team (the form lists
 * only the teams whose password was proved; the password grant takes `team`). No answer differs
 * between "the name exists in another team" and "the name exists nowhere". On every engine.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { LOGIN_CANDIDATES } from '../../src/oauth/accounts.ts';
import { DEFAULT_LIMITS } from '../../src/oauth/limits.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, passwordGrant, postForm, registerAdmin, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const NAME = 'ops@shared.example';
const PASSWORD_A = 'the acme admin password';
const PASSWORD_B = 'the globex admin password';

async function signInEvents(t: TestApp, teamId: string): Promise<string[]> {
  const rows = await t.storage.db.selectFrom('audit_events').select('action').where('team_id', '=', teamId).where('action', 'in', ['sign_in', 'sign_in_failed']).execute();
  return rows.map((r) => r.action);
}

/** The form's answer without what changes on every page (the CSRF token). */
const comparable = (body: string): string => body.replace(/name="_csrf" value="[^"]*"/g, '');

for (const engine of engines) {
  describe(`per-team sign-in names (${engine.name})`, () => {
    let t: TestApp;
    let globex: { team: { id: string; name: string }; token: string };
    beforeEach(async () => {
      // Room for the failed attempts these tests make on purpose (the lockout has its own tests).
      t = await createTestApp({ engine, limits: { ...DEFAULT_LIMITS, accountFailures: { points: 20, seconds: 900 } } });
      globex = await t.addTeam('globex');
    });
    afterEach(() => t.close());

    const introspectTeam = async (client: TestClient, body: Record<string, unknown>) =>
      json(await postForm(t, '/oauth/introspect', { token: String(body.access_token) }, { client })).team;

    it('the same userName gets a password in two teams (no 409), and each signs in to its own team', async () => {
      const a = await t.request('POST', '/v2/scim/Users', { userName: NAME, userType: 'admin', password: PASSWORD_A });
      assert.equal(a.statusCode, 201, a.body);
      const b = await t.app.inject({
        method: 'POST',
        url: '/v2/scim/Users',
        headers: { authorization: `Bearer ${globex.token}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({ userName: NAME, userType: 'admin', password: PASSWORD_B }),
      });
      assert.equal(b.statusCode, 201, `team B may use a name team A signs in with: ${b.body}`);
      assert.doesNotMatch(b.body, /another team/);
      const unbound = await registerClient(t);
      const asA = await passwordGrant(t, unbound, { userName: NAME, password: PASSWORD_A });
      assert.equal(asA.statusCode, 200, asA.body);
      assert.equal(await introspectTeam(unbound, json(asA)), t.team.id);
      const asB = await passwordGrant(t, unbound, { userName: NAME, password: PASSWORD_B });
      assert.equal(asB.statusCode, 200, asB.body);
      assert.equal(await introspectTeam(unbound, json(asB)), globex.team.id);
    });

    it('a client bound to team A checks only team A: no audit row in team B, and the same answer whether or not B\'s password was given', async () => {
      await registerAdmin(t, NAME, PASSWORD_A);
      await registerAdmin(t, NAME, PASSWORD_B, 'globex');
      const boundToA = await registerClient(t, ['https://app.example/callback'], t.team.name);
      const withB = await passwordGrant(t, boundToA, { userName: NAME, password: PASSWORD_B });
      const wrong = await passwordGrant(t, boundToA, { userName: NAME, password: 'neither of the two passwords' });
      assert.equal(withB.statusCode, 400);
      assert.deepEqual(json(withB), json(wrong));
      assert.equal(json(withB).error, 'invalid_grant');
      // Even naming team B does not get a client bound to A into B.
      const named = await passwordGrant(t, boundToA, { userName: NAME, password: PASSWORD_B }, { team: 'globex' });
      assert.deepEqual(json(named), json(wrong));

      // The sign-in form: 401 both ways (it answered 403 for B's password before).
      const browser = new PageSession(t);
      const url = `/oauth/authorize?client_id=${boundToA.id}&response_type=code`;
      const page = await browser.get(url);
      const formB = await browser.post('/oauth/authorize', { ...hiddenFields(page.body), username: NAME, password: PASSWORD_B });
      const formWrong = await browser.post('/oauth/authorize', { ...hiddenFields(formB.body), username: NAME, password: 'neither of the two passwords' });
      assert.equal(formB.statusCode, 401);
      assert.equal(formWrong.statusCode, 401);
      assert.equal(comparable(formB.body), comparable(formWrong.body));

      assert.deepEqual(await signInEvents(t, globex.team.id), [], "team B's audit trail never hears of team A's client");
      // Four failures in team A's trail; the request naming team B considered no account at all.
      assert.equal((await signInEvents(t, t.team.id)).filter((a) => a === 'sign_in_failed').length, 4);
      const ok = await passwordGrant(t, boundToA, { userName: NAME, password: PASSWORD_A });
      assert.equal(ok.statusCode, 200);
      assert.equal(await introspectTeam(boundToA, json(ok)), t.team.id);
    });

    it('an unbound client and a name whose password is right in two teams: the password grant asks for team, the form lists only the proven teams', async () => {
      const same = 'one password for both teams';
      await registerAdmin(t, NAME, same);
      await registerAdmin(t, NAME, same, 'globex');
      await t.addTeam('initech');
      await registerAdmin(t, NAME, 'initech has its own password', 'initech');
      const unbound = await registerClient(t);

      const ambiguous = await passwordGrant(t, unbound, { userName: NAME, password: same });
      assert.equal(ambiguous.statusCode, 400);
      assert.equal(json(ambiguous).error, 'invalid_grant');
      assert.match(String(json(ambiguous).error_description), /team parameter/);
      const chosen = await passwordGrant(t, unbound, { userName: NAME, password: same }, { team: 'globex' });
      assert.equal(chosen.statusCode, 200, chosen.body);
      assert.equal(await introspectTeam(unbound, json(chosen)), globex.team.id);

      const browser = new PageSession(t);
      const url = `/oauth/authorize?client_id=${unbound.id}&response_type=code`;
      const page = await browser.get(url);
      const choice = await browser.post('/oauth/authorize', { ...hiddenFields(page.body), username: NAME, password: same });
      assert.equal(choice.statusCode, 200);
      assert.doesNotMatch(String(choice.headers['set-cookie'] ?? ''), /rollcall_session=/, 'no session before a team is chosen');
      const options = [...choice.body.matchAll(/<option value="([^"]+)">/g)].map((m) => m[1]);
      assert.deepEqual(options.sort(), ['acme', 'globex'], 'only the teams whose password was proved');
      const signedIn = await browser.post('/oauth/authorize', { ...hiddenFields(choice.body), username: NAME, password: same, team: 'globex' });
      assert.equal(signedIn.statusCode, 303, signedIn.body);
      assert.match((await browser.get(url)).body, /Allow Acme Sync to access globex\?/);
    });

    it('no answer differs between "the name exists in another team" and "the name does not exist"', async () => {
      await registerAdmin(t, 'only-globex@shared.example', PASSWORD_B, 'globex');
      const boundToA = await registerClient(t, ['https://app.example/callback'], t.team.name);
      const unbound = await registerClient(t);
      for (const client of [boundToA, unbound]) {
        const elsewhere = await passwordGrant(t, client, { userName: 'only-globex@shared.example', password: 'a wrong password here' });
        const nowhere = await passwordGrant(t, client, { userName: 'nobody@shared.example', password: 'a wrong password here' });
        assert.equal(elsewhere.statusCode, nowhere.statusCode);
        assert.deepEqual(json(elsewhere), json(nowhere));
      }
      // Team A creating, renaming or setting a password on that name learns nothing either.
      const created = await t.request('POST', '/v2/scim/Users', { userName: 'only-globex@shared.example', userType: 'admin', password: 'acme has it now too' });
      assert.equal(created.statusCode, 201, created.body);
      const other = await t.request('POST', '/v2/scim/Users', { userName: 'someone@shared.example', userType: 'admin', password: 'acme has it now too' });
      const renamed = await t.request('PATCH', `/v2/scim/Users/${json(other).id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', path: 'userName', value: 'only-globex@SHARED.example' }],
      });
      assert.equal(renamed.statusCode, 409, 'the clash is inside team A (the user created above), named as such');
      assert.doesNotMatch(renamed.body, /another team|signs in/);
    });

    if (engine.name === 'sqlite') {
      it(`an unbound sign-in always verifies ${LOGIN_CANDIDATES} passwords: the time does not tell how many teams hold a name`, async () => {
        await registerAdmin(t, NAME, PASSWORD_A);
        await registerAdmin(t, NAME, PASSWORD_B, 'globex');
        const unbound = await registerClient(t);
        // The work is counted, not timed (issue 27 item 14): every scrypt derivation of the process
        // goes through node:crypto's scrypt, wrapped here for the two sign-ins only.
        const original = crypto.scrypt;
        let derivations = 0;
        const counted = async (userName: string): Promise<number> => {
          derivations = 0;
          const res = await passwordGrant(t, unbound, { userName, password: 'a wrong password here' });
          assert.equal(res.statusCode, 400);
          return derivations;
        };
        crypto.scrypt = ((...args: Parameters<typeof original>) => {
          derivations++;
          return (original as (...a: unknown[]) => void)(...args);
        }) as typeof original;
        syncBuiltinESMExports();
        try {
          // A name held by two teams, and a name held by none: the same work, padded with decoys.
          assert.deepEqual([await counted(NAME), await counted('nobody@shared.example')], [LOGIN_CANDIDATES, LOGIN_CANDIDATES]);
        } finally {
          crypto.scrypt = original;
          syncBuiltinESMExports();
        }
      });
    }

    it('an unbound client\'s sign-in form offers an optional team field: a name squatted by more teams than are checked still signs in to the team named', async () => {
      // Three other teams took the name first (the oldest holders are the ones checked without a team).
      for (const name of ['squat1', 'squat2', 'squat3']) {
        await t.addTeam(name);
        await registerAdmin(t, NAME, `${name} password is long enough`, name);
      }
      await registerAdmin(t, NAME, PASSWORD_A, t.team.name);
      const unbound = await registerClient(t);
      const page = new PageSession(t);
      const form = await page.get(`/oauth/authorize?client_id=${unbound.id}&response_type=code`);
      assert.match(form.body, /<input id="team" name="team"/);
      const fields = hiddenFields(form.body);
      const without = await page.post('/oauth/authorize', { ...fields, username: NAME, password: PASSWORD_A });
      assert.equal(without.statusCode, 401, 'the three oldest holders are checked, the team\'s own account is not');
      const retry = hiddenFields((await page.get(`/oauth/authorize?client_id=${unbound.id}&response_type=code`)).body);
      const named = await page.post('/oauth/authorize', { ...retry, team: t.team.name, username: NAME, password: PASSWORD_A });
      assert.equal(named.statusCode, 303, named.body.slice(0, 300));
      const bound = await registerClient(t, ['https://app.example/callback'], t.team.name);
      const boundForm = await page.get(`/oauth/authorize?client_id=${bound.id}&response_type=code`);
      assert.doesNotMatch(boundForm.body, /name="team"/, 'a client bound to a team decides the team itself');
    });
  });
}
