/**
 * Issue 9 item 1 (DESIGN.md section 4, "Group display vs displayName"): `display` is the
 * contract's other name for a Group's `displayName`. `/Schemas` describes it as readOnly so that
 * schema-driven clients, which fill every writable attribute they find, leave it alone; it is
 * still accepted on input; when both names arrive in one request, `displayName` wins (create,
 * PUT, PATCH with a path or a no-path value object). A client that GETs a group, changes
 * `displayName` and PUTs the body back (old `display` still in it) gets its change.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('Group display vs displayName', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const names = async (id: string) => {
    const got = json(await t.request('GET', `/v2/scim/Groups/${id}`));
    return [got.displayName, got.display];
  };

  it('/Schemas describes display as a readOnly alias, displayName as readWrite and required', async () => {
    const schema = json(await t.request('GET', `/v2/scim/Schemas/${GROUP}`));
    const attrs = schema.attributes as { name: string; mutability: string; required: boolean }[];
    assert.equal(attrs.find((a) => a.name === 'display')?.mutability, 'readOnly');
    const displayName = attrs.find((a) => a.name === 'displayName');
    assert.equal(displayName?.mutability, 'readWrite');
    assert.equal(displayName?.required, true);
  });

  it('the contract\'s create with display alone still works (the alias is accepted on input)', async () => {
    const res = await t.request('POST', '/v2/scim/Groups', { display: 'Sales', active: true });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(await names(String(json(res).id)), ['Sales', 'Sales']);
  });

  it('create with both names, different values: displayName wins (201, not 400)', async () => {
    const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Real', display: 'Stale' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).displayName, 'Real');
    assert.equal(json(res).display, 'Real');
  });

  it('a GET body with displayName changed and the old display PUT back gets the change', async () => {
    const created = json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Before' }));
    const id = String(created.id);
    const body = json(await t.request('GET', `/v2/scim/Groups/${id}`));
    assert.equal(body.display, 'Before');
    body.displayName = 'After';
    const put = await t.request('PUT', `/v2/scim/Groups/${id}`, body);
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(json(put).displayName, 'After');
    assert.deepEqual(await names(id), ['After', 'After']);
    // The order of the keys does not matter either.
    const put2 = await t.request('PUT', `/v2/scim/Groups/${id}`, { schemas: [GROUP], display: 'Old', displayName: 'Newer' });
    assert.equal(put2.statusCode, 200, put2.body);
    assert.deepEqual(await names(id), ['Newer', 'Newer']);
    // display alone on PUT renames (the alias is input).
    assert.equal((await t.request('PUT', `/v2/scim/Groups/${id}`, { schemas: [GROUP], display: 'ViaAlias' })).statusCode, 200);
    assert.deepEqual(await names(id), ['ViaAlias', 'ViaAlias']);
  });

  it('PATCH: a no-path value object with both names takes displayName; path "display" still renames', async () => {
    const id = String(json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'One' })).id);
    const patch = (ops: unknown[]) => t.request('PATCH', `/v2/scim/Groups/${id}`, { schemas: [PATCH], Operations: ops });
    const both = await patch([{ op: 'replace', value: { displayName: 'Two', display: 'One' } }]);
    assert.equal(both.statusCode, 204, both.body);
    assert.deepEqual(await names(id), ['Two', 'Two']);
    const reversed = await patch([{ op: 'replace', value: { display: 'Two', displayName: 'Three' } }]);
    assert.equal(reversed.statusCode, 204, reversed.body);
    assert.deepEqual(await names(id), ['Three', 'Three']);
    assert.equal((await patch([{ op: 'replace', path: 'display', value: 'Four' }])).statusCode, 204);
    assert.deepEqual(await names(id), ['Four', 'Four']);
    // Two operations in one PATCH naming both: displayName wins whatever the order.
    const ops = await patch([
      { op: 'replace', path: 'displayName', value: 'Five' },
      { op: 'replace', path: 'display', value: 'Four' },
    ]);
    assert.equal(ops.statusCode, 204, ops.body);
    assert.deepEqual(await names(id), ['Five', 'Five']);
  });

  it('displayName still wins uniqueness checks when display names another group', async () => {
    await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Taken' });
    const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Free', display: 'Taken' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(json(res).displayName, 'Free');
  });
});
