/**
 * Issue 31 item 5 (DESIGN.md section 12), on every engine: every change of a team's catalog is an
 * event on its feed (RFC 9967 `create` / `put` / `delete` on Role, Entitlement and ResourceType,
 * `version` the team's schema version after the change; removing a type announces its entries'
 * removal too), listed by GET /v2/events like any event, rendered as SETs (refs at /Roles,
 * /Entitlements, /ResourceTypes, values percent-encoded) and webhooks (`role.created`, ...). A
 * group mapped to or unmapped from an entry is one `patch` event on the entry, `changed:
 * ["groups"]`, rendered as a PatchOp on path `groups` and a webhook's `data.groups` delta. A
 * user's direct roles change is part of the user's own SCIM event.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { addEntitlement, addEntitlementType, addRole, removeEntitlementType, removeRole } from '../../src/access/catalog.ts';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { recordAuditedChange } from '../../src/events/feed.ts';
import { setClaims } from '../../src/events/set.ts';
import { webhookBody } from '../../src/events/webhook.ts';
import { eventsAfter } from '../../src/storage/repos/events.ts';
import type { EventRow } from '../../src/storage/repos/events.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps } from '../support/oauth.ts';

type Json = Record<string, unknown>;
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const AUDIENCE = 'https://receiver.example/events';
const CHANGE = { actor: CLI_ACTOR };

const payloadOf = (row: EventRow, full: boolean): { uri: string; payload: Json; claims: Json } => {
  const claims = setClaims(row, { issuer: BASE_URL, audience: AUDIENCE, full });
  const [uri, payload] = Object.entries(claims.events as Record<string, Json>)[0]!;
  return { uri, payload, claims };
};

for (const engine of engines) {
  describe(`catalog events (${engine.name})`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine });
    });
    afterEach(() => t.close());

    const feed = async (after = 0) => eventsAfter(t.storage.db, t.team.id, after, 100);
    const version = async () => Number((await t.storage.db.selectFrom('teams').select('schema_version').where('id', '=', t.team.id).executeTakeFirstOrThrow()).schema_version);

    it('a role added, changed and removed is a create, put and delete on /Roles/{value}, with the schema version, listed and rendered', async () => {
      await addRole(adminDeps(t), t.team, { value: 'app admin/1', displayName: 'Administrator' }, CHANGE);
      const v1 = await version();
      await addRole(adminDeps(t), t.team, { value: 'app admin/1', displayName: 'Administrator' }, CHANGE);
      await addRole(adminDeps(t), t.team, { value: 'app admin/1', displayName: 'Admin', description: 'All of it' }, CHANGE);
      await removeRole(adminDeps(t), t.team, 'app admin/1', CHANGE);
      const rows = await feed();
      assert.deepEqual(rows.map((r) => [r.type, r.resource_type, r.resource_id, JSON.parse(r.changed)]), [
        ['create', 'Role', 'app admin/1', ['displayName']],
        ['put', 'Role', 'app admin/1', ['displayName', 'description']],
        ['delete', 'Role', 'app admin/1', []],
      ], 'the unchanged add made no event');
      assert.equal(Number(rows[0]!.version), v1);
      assert.equal(Number(rows[2]!.version), await version());

      const listed = await t.request('GET', '/v2/events');
      assert.equal(listed.statusCode, 200);
      assert.deepEqual((json(listed).events as Json[]).map((e) => [e.change, e.resourceType, e.id]), rows.map((r) => [r.type, 'Role', 'app admin/1']));

      const ref = `${BASE_URL}/v2/scim/Roles/app%20admin%2F1`;
      const created = payloadOf(rows[0]!, true);
      assert.equal(created.uri, 'urn:ietf:params:scim:event:prov:create:full');
      assert.equal(created.payload.ref, ref);
      assert.deepEqual(created.claims.sub_id, { format: 'scim', uri: '/Roles/app%20admin%2F1' });
      assert.deepEqual(created.payload.data, { id: 'app admin/1', displayName: 'Administrator', meta: { resourceType: 'Role', version: `W/"${v1}"`, location: ref } });
      const put = payloadOf(rows[1]!, false);
      assert.deepEqual(put.payload.attributes, ['displayName', 'description']);
      assert.deepEqual(Object.keys(payloadOf(rows[2]!, true).claims.events as Json), ['urn:ietf:params:scim:event:prov:delete']);

      const hook = JSON.parse(webhookBody(rows[0]!, BASE_URL)) as { type: string; data: { resource: Json } };
      assert.equal(hook.type, 'role.created');
      assert.deepEqual(hook.data.resource, { type: 'Role', id: 'app admin/1', location: ref, version: `W/"${v1}"` });
      assert.equal((JSON.parse(webhookBody(rows[2]!, BASE_URL)) as { type: string }).type, 'role.deleted');
    });

    it('an entitlement type and its entitlements: ResourceType and Entitlement events; removing the type announces each entry removed, then the type', async () => {
      await addEntitlementType(adminDeps(t), t.team, { name: 'License', endpoint: '/Licenses' }, CHANGE);
      await addEntitlement(adminDeps(t), t.team, 'License', { value: 'e5', displayName: 'Office E5' }, CHANGE);
      await addEntitlementType(adminDeps(t), t.team, { name: 'License', endpoint: '/Licenses', required: true }, CHANGE);
      await removeEntitlementType(adminDeps(t), t.team, 'license', CHANGE);
      const rows = await feed();
      assert.deepEqual(rows.map((r) => [r.type, r.resource_type, r.resource_id, JSON.parse(r.changed)]), [
        ['create', 'ResourceType', 'License', ['name', 'endpoint', 'required', 'multiValued']],
        ['create', 'Entitlement', 'e5', ['displayName', 'type']],
        ['put', 'ResourceType', 'License', ['required']],
        ['delete', 'Entitlement', 'e5', []],
        ['delete', 'ResourceType', 'License', []],
      ]);
      assert.equal(rows[3]!.version, rows[4]!.version, 'one change, one version');
      const entitlement = payloadOf(rows[1]!, true);
      assert.equal(entitlement.payload.ref, `${BASE_URL}/v2/scim/Entitlements/e5`);
      assert.deepEqual({ ...(entitlement.payload.data as Json), meta: undefined }, { id: 'e5', displayName: 'Office E5', type: 'License', meta: undefined });
      const type = payloadOf(rows[0]!, true);
      assert.equal(type.payload.ref, `${BASE_URL}/v2/scim/ResourceTypes/License`);
      assert.equal((type.payload.data as Json).endpoint, '/Licenses');
      assert.equal((JSON.parse(webhookBody(rows[1]!, BASE_URL)) as { type: string }).type, 'entitlement.created');
      assert.equal((JSON.parse(webhookBody(rows[2]!, BASE_URL)) as { type: string }).type, 'resourcetype.replaced');
    });

    it('a mapping event (one patch on the role, changed ["groups"]) renders as a PatchOp on groups and a webhook groups delta', async () => {
      await addRole(adminDeps(t), t.team, { value: 'admin', displayName: 'Administrator' }, CHANGE);
      const after = (await feed()).at(-1)!.seq;
      // What the mapping operations (helper D1) append: one event naming the group, not one per member.
      for (const members of [{ added: ['G1'] }, { removed: ['G1'] }]) {
        await t.storage.db.transaction().execute((trx) =>
          recordAuditedChange(
            { clock: t.clock },
            trx,
            { teamId: t.team.id, actor: CLI_ACTOR, requestId: null, action: 'role_updated', resourceType: 'Role', resourceId: 'admin', detail: { mapped: members } },
            { teamId: t.team.id, type: 'patch', resourceType: 'Role', resourceId: 'admin', version: 7, changed: ['groups'], actor: CLI_ACTOR, txn: 'req-9', externalId: null, data: JSON.stringify({ id: 'admin', displayName: 'Administrator' }), members },
          ),
        );
      }
      const [mapped, unmapped] = await feed(after);
      assert.deepEqual(payloadOf(mapped!, true).payload, { ref: `${BASE_URL}/v2/scim/Roles/admin`, version: 'W/"7"', data: { schemas: [PATCH], Operations: [{ op: 'add', path: 'groups', value: [{ value: 'G1' }] }] } });
      assert.deepEqual((payloadOf(unmapped!, true).payload.data as Json).Operations, [{ op: 'remove', path: 'groups[value eq "G1"]' }]);
      assert.deepEqual(payloadOf(mapped!, false).payload.attributes, ['groups']);
      const hook = JSON.parse(webhookBody(mapped!, BASE_URL)) as { type: string; data: Json };
      assert.equal(hook.type, 'role.updated');
      assert.deepEqual(hook.data.groups, { added: ['G1'] });
      assert.deepEqual(hook.data.changed, ['groups']);
      assert.equal('members' in hook.data, false);
      assert.deepEqual((JSON.parse(webhookBody(unmapped!, BASE_URL)) as { data: Json }).data.groups, { removed: ['G1'] });
      const listed = (json(await t.request('GET', `/v2/events?after=${after}`)).events as Json[]).map((e) => [e.change, e.resourceType, e.id, e.members]);
      assert.deepEqual(listed, [['patch', 'Role', 'admin', { added: ['G1'] }], ['patch', 'Role', 'admin', { removed: ['G1'] }]]);
    });

    it("a user's direct roles change is part of the user's own SCIM event (changed names roles)", async () => {
      await addRole(adminDeps(t), t.team, { value: 'admin', displayName: 'Administrator' }, CHANGE);
      const user = json(await t.request('POST', '/v2/scim/Users', { userName: 'bjensen' }));
      const after = (await feed()).at(-1)!.seq;
      const r = await t.request('PATCH', `/v2/scim/Users/${String(user.id)}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'roles', value: [{ value: 'admin' }] }] });
      assert.equal(r.statusCode, 200, r.body);
      const rows = await feed(after);
      assert.deepEqual(rows.map((e) => [e.type, e.resource_type, JSON.parse(e.changed)]), [['patch', 'User', ['roles']]]);
      assert.deepEqual((payloadOf(rows[0]!, true).payload.data as Json).Operations, [{ op: 'replace', path: 'roles', value: [{ value: 'admin' }] }]);
    });
  });
}
