/**
 * Team budgets (src/budgets.ts) seen by a team admin: the console's settings list every limit
 * with its value, unit and meaning, and mark the ones the operator set for the team
 * (`updateTeamLimits`, what `rollcall team update --limit` calls), from the next page on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { updateTeamLimits } from '../../src/admin.ts';
import { BUDGETS } from '../../src/budgets.ts';
import { createTestApp } from '../support/app.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';

describe('team budgets in the console', () => {
  it('settings list every limit, and the ones set for the team with their default', async () => {
    const t = await createTestApp();
    try {
      await registerAdmin(t, 'admin@acme.example', PASSWORD);
      const page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);
      const before = (await page.get('/console/settings')).body;
      for (const name of Object.keys(BUDGETS)) assert.match(before, new RegExp(`<code>${name.replace('.', '\\.')}</code>`), name);
      assert.match(before, /<code>subscriptions<\/code><\/td><td data-label="Value">10 subscriptions<\/td>/);
      assert.doesNotMatch(before, /set for this team/);

      await updateTeamLimits(adminDeps(t), 'acme', [{ name: 'subscriptions', value: 3 }]);
      const after = (await page.get('/console/settings')).body;
      assert.match(after, /<code>subscriptions<\/code><\/td><td data-label="Value">3 subscriptions <span class="note">\(set for this team; default 10\)<\/span>/);
    } finally {
      await t.close();
    }
  });
});
