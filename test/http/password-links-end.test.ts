/**
 * A password link ends with its admin (review of issue 30, finding 9): an admin deactivated,
 * deleted or removed as admin loses their unused password links, so reactivating or restoring
 * them does not bring a link back to life. On every engine, over HTTP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** Signs in the team's first admin; adds `userName` as an admin on the Admins page; answers the password link shown and the new admin's id. */
async function adminWithLink(t: TestApp, userName: string): Promise<{ link: string; id: string }> {
  await registerAdmin(t, 'admin@acme.example', PASSWORD);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);
  const shown = await page.get('/console/admins');
  assert.equal((await page.post('/console/admins', { ...hiddenFields(shown.body, '/console/admins'), userName })).statusCode, 303);
  const link = /<code id="password-link" class="wrap">https:\/\/rollcall\.test(\/console\/password\?token=rc_pw_[A-Za-z0-9_-]+)<\/code>/.exec((await page.get('/console/admins')).body)?.[1];
  assert.ok(link, 'the link is shown');
  const id = String((await t.storage.db.selectFrom('users').select('id').where('user_name', '=', userName).executeTakeFirstOrThrow()).id);
  return { link, id };
}

/** Opens the link and sets a password with it: 303 when it worked. */
async function useLink(t: TestApp, link: string): Promise<number> {
  const browser = new PageSession(t);
  const opened = await browser.get(link);
  if (opened.statusCode !== 200) return opened.statusCode;
  return (await browser.post('/console/password', { ...hiddenFields(opened.body, '/console/password'), password: 'bo sets a long password', repeat: 'bo sets a long password' })).statusCode;
}

const active = (value: boolean) => ({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value }] });

for (const engine of engines) {
  describe(`password links end with their admin (${engine.name})`, () => {
    it('deactivated then reactivated within the day: the link stays dead', async () => {
      const t = await createTestApp({ engine });
      try {
        const { link, id } = await adminWithLink(t, 'bo@acme.example');
        assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, active(false))).statusCode, 200);
        assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, active(true))).statusCode, 200);
        assert.equal(await useLink(t, link), 410);
      } finally {
        await t.close();
      }
    });

    it('deleted then restored (a team that shows deactivated users): the link stays dead', async () => {
      const t = await createTestApp({ engine, deactivatedUsers: 'visible' });
      try {
        const { link, id } = await adminWithLink(t, 'bo@acme.example');
        assert.equal((await t.request('DELETE', `/v2/scim/Users/${id}`)).statusCode, 204);
        assert.equal((await t.request('PUT', `/v2/scim/Users/${id}/activate`)).statusCode, 200);
        assert.equal(await useLink(t, link), 410);
      } finally {
        await t.close();
      }
    });

    it('an admin left as they were can use the link (control)', async () => {
      const t = await createTestApp({ engine });
      try {
        const { link } = await adminWithLink(t, 'bo@acme.example');
        assert.equal(await useLink(t, link), 303);
      } finally {
        await t.close();
      }
    });
  });
}
