/**
 * `rollcall schema add | list | show | remove` as an operator runs them (issue 11): a schema file
 * registered for a team, listed and shown as /Schemas shows it, a type change and a malformed
 * file refused with the location, removal. (The HTTP side: test/http/extensions.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall } from '../support/processes.ts';

const URN = 'urn:example:params:scim:schemas:extension:Badge:2.0:User';

describe('rollcall schema', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-schema-'));
    database = `sqlite:${join(dir, 'r.db')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('adds, lists, shows and removes a team extension; refuses a bad file and a type change with the location', () => {
    assert.equal(rollcall(['team', 'create', '--name', 'acme', '--database', database]).code, 0);
    const file = join(dir, 'badge.json');
    writeFileSync(file, JSON.stringify({ id: URN, name: 'Badge', attributes: [{ name: 'badgeNumber', type: 'string', uniqueness: 'server' }] }));
    const added = rollcall(['schema', 'add', '--team', 'acme', file, '--json', '--database', database]);
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual(JSON.parse(added.stdout), { ...JSON.parse(added.stdout), id: URN, resourceType: 'User', required: false, attributes: 1 });

    const listed = rollcall(['schema', 'list', '--team', 'acme', '--database', database]);
    assert.match(listed.stdout, new RegExp(`${URN}\\s+User\\s+1 attribute`));
    const shown = JSON.parse(rollcall(['schema', 'show', '--team', 'acme', URN, '--database', database]).stdout);
    assert.equal(shown.attributes[0].name, 'badgeNumber');
    assert.equal(shown.attributes[0].uniqueness, 'server');

    writeFileSync(file, JSON.stringify({ id: URN, attributes: [{ name: 'badgeNumber', type: 'integer' }] }));
    const retyped = rollcall(['schema', 'add', '--team', 'acme', file, '--database', database]);
    assert.equal(retyped.code, 1);
    assert.match(retyped.stderr, /changing the type of "badgenumber" from string to integer is refused/);

    writeFileSync(file, JSON.stringify({ id: URN, attributes: [{ name: 'badge number', type: 'string' }] }));
    const bad = rollcall(['schema', 'add', '--team', 'acme', file, '--database', database]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /schema\.attributes\[0\]\.name/);

    const removed = rollcall(['schema', 'remove', '--team', 'acme', URN, '--database', database]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(rollcall(['schema', 'list', '--team', 'acme', '--database', database]).stdout, /no extension schemas/);
    assert.equal(rollcall(['schema', 'remove', '--team', 'acme', URN, '--database', database]).code, 1);
  });

  it('issue 27 item 9: over a team budget, schema add fails with one line naming the budget; within it, the index is built before the command ends', () => {
    const file = join(dir, 'budget.json');
    writeFileSync(file, JSON.stringify({ id: URN, attributes: [{ name: 'badgeNumber', type: 'string', uniqueness: 'server' }, { name: 'desk', type: 'string', uniqueness: 'server' }] }));
    assert.equal(rollcall(['team', 'update', '--name', 'acme', '--limit', 'indexed.attributes=1', '--database', database]).code, 0);
    const refused = rollcall(['schema', 'add', '--team', 'acme', file, '--database', database]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.match(refused.stderr, /^rollcall: Team acme would have 2 indexed attributes \(uniqueness: server\); its budget "indexed\.attributes" is 1 \(invalidValue\)$/m);
    assert.equal(rollcall(['team', 'update', '--name', 'acme', '--limit', 'indexed.attributes=default', '--database', database]).code, 0);
    const added = rollcall(['schema', 'add', '--team', 'acme', file, '--json', '--database', database]);
    assert.equal(added.code, 0, added.stderr);
    const view = JSON.parse(added.stdout);
    assert.deepEqual([view.indexed, view.pending], [['badgeNumber', 'desk'], []]);
  });
});
