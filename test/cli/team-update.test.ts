/**
 * Issue 9 item 2 at the command line: `rollcall team update --deactivated-users visible` on a
 * team where a re-hire shares a userName with a deactivated user is refused, exit code 1, with an
 * error naming the userName and both users; the setting is unchanged. After one of them is
 * renamed it goes through.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTeam, createTeamUser } from '../../src/admin.ts';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { systemClock } from '../../src/clock.ts';
import { PasswordHasher } from '../../src/oauth/passwords.ts';
import type { ScimContext } from '../../src/scim/context.ts';
import { deleteUser, patchUser } from '../../src/scim/users.ts';
import { connect } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { rollcall } from '../support/processes.ts';

describe('rollcall team update and shared userNames', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-team-update-'));
    database = `sqlite:${join(dir, 'r.db')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to show deactivated users while two users share a userName, naming them; accepts once resolved', async () => {
    const storage = connect(database);
    let oldId: string;
    let newId: string;
    try {
      await migrate(storage);
      const deps = { storage, clock: systemClock, baseUrl: 'https://rollcall.test' };
      const team = await createTeam(deps, 'acme');
      const ctx: ScimContext = { storage, clock: systemClock, baseUrl: deps.baseUrl, team, actor: CLI_ACTOR, requestId: null, cursorSecret: 'test', passwords: new PasswordHasher() };
      oldId = String((await createTeamUser(deps, 'acme', 'pat@acme.example', {})).id);
      await deleteUser(ctx, oldId);
      newId = String((await createTeamUser(deps, 'acme', 'PAT@acme.example', {})).id);
    } finally {
      await storage.close();
    }
    const refused = rollcall(['team', 'update', '--name', 'acme', '--deactivated-users', 'visible', '--database', database]);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /pat@acme\.example/i);
    assert.match(refused.stderr, new RegExp(oldId));
    assert.match(refused.stderr, new RegExp(newId));
    const listed = rollcall(['team', 'list', '--json', '--database', database]);
    assert.equal(JSON.parse(listed.stdout)[0].deactivatedUsers, 'hidden');

    const again = connect(database);
    try {
      const team = (await again.db.selectFrom('teams').selectAll().executeTakeFirstOrThrow());
      const ctx: ScimContext = { storage: again, clock: systemClock, baseUrl: 'https://rollcall.test', team, actor: CLI_ACTOR, requestId: null, cursorSecret: 'test', passwords: new PasswordHasher() };
      await patchUser(ctx, newId, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'userName', value: 'pat.2@acme.example' }] });
    } finally {
      await again.close();
    }
    const accepted = rollcall(['team', 'update', '--name', 'acme', '--deactivated-users', 'visible', '--json', '--database', database]);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.equal(JSON.parse(accepted.stdout).deactivatedUsers, 'visible');
  });
});
