/**
 * The feed is a complete history (issue 10 item 7): for random sequences of SCIM writes (users
 * created, patched, replaced, deleted, reactivated; groups created with members, renamed,
 * members added and removed, replaced, deleted), replaying the team's events in seq order
 * onto an empty copy rebuilds exactly the users, groups and memberships the database holds.
 * The replay reads only GET /v2/events and the `:full` payloads a subscription would get
 * (here the stored document and the membership delta each event carries).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { eventsAfter } from '../../src/storage/repos/events.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

type Op =
  | { kind: 'createUser'; title: string }
  | { kind: 'patchUser'; user: number; title: string }
  | { kind: 'putUser'; user: number; nick: string }
  | { kind: 'deleteUser'; user: number }
  | { kind: 'activateUser'; user: number }
  | { kind: 'createGroup'; members: number[] }
  | { kind: 'addMembers'; group: number; members: number[] }
  | { kind: 'removeMember'; group: number; member: number }
  | { kind: 'renameGroup'; group: number; name: string }
  | { kind: 'putGroup'; group: number; members: number[] }
  | { kind: 'deleteGroup'; group: number };

const small = fc.integer({ min: 0, max: 7 });
const text = fc.constantFrom('a', 'b', 'Eng', 'Ops', 'Σ', 'x y');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('createUser' as const), title: text }),
  fc.record({ kind: fc.constant('createUser' as const), title: text }),
  fc.record({ kind: fc.constant('patchUser' as const), user: small, title: text }),
  fc.record({ kind: fc.constant('putUser' as const), user: small, nick: text }),
  fc.record({ kind: fc.constant('deleteUser' as const), user: small }),
  fc.record({ kind: fc.constant('activateUser' as const), user: small }),
  fc.record({ kind: fc.constant('createGroup' as const), members: fc.array(small, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('addMembers' as const), group: small, members: fc.array(small, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('removeMember' as const), group: small, member: small }),
  fc.record({ kind: fc.constant('renameGroup' as const), group: small, name: text }),
  fc.record({ kind: fc.constant('putGroup' as const), group: small, members: fc.array(small, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('deleteGroup' as const), group: small }),
);

async function apply(t: TestApp, ops: readonly Op[]): Promise<void> {
  const users: string[] = [];
  const groups: string[] = [];
  const pick = (list: string[], i: number) => list[i % Math.max(1, list.length)];
  const ids = (idx: number[]) => [...new Set(idx.map((i) => pick(users, i)).filter((v): v is string => v !== undefined))].map((value) => ({ value }));
  let n = 0;
  for (const o of ops) {
    n += 1;
    switch (o.kind) {
      case 'createUser': {
        const r = await t.request('POST', '/v2/scim/Users', { userName: `u${n}@acme.example`, title: o.title });
        if (r.statusCode === 201) users.push(String(json(r).id));
        break;
      }
      case 'patchUser':
        if (pick(users, o.user)) await t.request('PATCH', `/v2/scim/Users/${pick(users, o.user)}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: o.title }] });
        break;
      case 'putUser':
        if (pick(users, o.user)) await t.request('PUT', `/v2/scim/Users/${pick(users, o.user)}`, { userName: `p${n}@acme.example`, nickName: o.nick });
        break;
      case 'deleteUser':
        if (pick(users, o.user)) await t.request('DELETE', `/v2/scim/Users/${pick(users, o.user)}`);
        break;
      case 'activateUser':
        if (pick(users, o.user)) await t.request('PUT', `/v2/scim/Users/${pick(users, o.user)}/activate`);
        break;
      case 'createGroup': {
        const r = await t.request('POST', '/v2/scim/Groups', { displayName: `g${n}`, members: ids(o.members) });
        if (r.statusCode === 201) groups.push(String(json(r).id));
        break;
      }
      case 'addMembers':
        if (pick(groups, o.group)) await t.request('PATCH', `/v2/scim/Groups/${pick(groups, o.group)}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: ids(o.members) }] });
        break;
      case 'removeMember':
        if (pick(groups, o.group) && pick(users, o.member)) {
          await t.request('PATCH', `/v2/scim/Groups/${pick(groups, o.group)}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${pick(users, o.member)}"]` }] });
        }
        break;
      case 'renameGroup':
        if (pick(groups, o.group)) await t.request('PATCH', `/v2/scim/Groups/${pick(groups, o.group)}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: `${o.name}${n}` }] });
        break;
      case 'putGroup':
        if (pick(groups, o.group)) await t.request('PUT', `/v2/scim/Groups/${pick(groups, o.group)}`, { displayName: `q${n}`, members: ids(o.members) });
        break;
      case 'deleteGroup':
        if (pick(groups, o.group)) await t.request('DELETE', `/v2/scim/Groups/${pick(groups, o.group)}`);
        break;
    }
  }
}

interface Copy {
  users: Map<string, { document: unknown; deleted: boolean; version: string }>;
  groups: Map<string, { document: unknown; members: Set<string>; version: string }>;
}

/** Replays the feed, as a consumer of GET /v2/events and :full payloads would, onto an empty copy. */
async function replay(t: TestApp): Promise<Copy> {
  const copy: Copy = { users: new Map(), groups: new Map() };
  let after = 0;
  const rows = await eventsAfter(t.storage.db, t.team.id, 0, 100_000);
  for (;;) {
    const page = json(await t.request('GET', `/v2/events?after=${after}&limit=7`)) as { events: { seq: number }[]; next: number; more: boolean };
    after = page.next;
    if (!page.more) break;
  }
  assert.equal(after, rows.at(-1)?.seq ?? 0, 'the listing reaches the end of the feed');
  for (const row of rows) {
    const document = row.data === null ? undefined : (JSON.parse(row.data) as unknown);
    const version = `W/"${row.version}"`;
    if (row.resource_type === 'User') {
      copy.users.set(row.resource_id, { document, deleted: row.type === 'delete', version });
    } else if (row.type === 'delete') {
      copy.groups.delete(row.resource_id);
    } else {
      const members = row.type === 'create' ? new Set<string>() : (copy.groups.get(row.resource_id)?.members ?? new Set<string>());
      const delta = row.members === null ? {} : (JSON.parse(row.members) as { cleared?: boolean; added?: string[]; removed?: string[] });
      if (delta.cleared) members.clear();
      for (const id of delta.removed ?? []) members.delete(id);
      for (const id of delta.added ?? []) members.add(id);
      copy.groups.set(row.resource_id, { document, members, version });
    }
  }
  return copy;
}

async function database(t: TestApp): Promise<Copy> {
  const parse = (data: unknown) => t.storage.hooks.parseJson(data as string);
  const copy: Copy = { users: new Map(), groups: new Map() };
  for (const u of await t.storage.db.selectFrom('users').selectAll().where('team_id', '=', t.team.id).execute()) {
    copy.users.set(u.id, { document: parse(u.data), deleted: u.deleted_at !== null, version: `W/"${u.version}"` });
  }
  const members = await t.storage.db.selectFrom('group_members').select(['group_id', 'user_id']).where('team_id', '=', t.team.id).execute();
  for (const g of await t.storage.db.selectFrom('groups').selectAll().where('team_id', '=', t.team.id).execute()) {
    copy.groups.set(g.id, { document: parse(g.data), members: new Set(members.filter((m) => m.group_id === g.id).map((m) => m.user_id)), version: `W/"${g.version}"` });
  }
  return copy;
}

for (const engine of engines) {
  describe(`the feed rebuilds the database (${engine.name})`, () => {
    for (const mode of ['hidden', 'visible'] as const) {
      it(`replaying the events onto an empty copy gives the same users, groups and memberships (deactivated users ${mode})`, async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
            const t = await createTestApp({ engine, deactivatedUsers: mode });
            try {
              await apply(t, ops);
              const [rebuilt, actual] = [await replay(t), await database(t)];
              assert.deepEqual(rebuilt.users, actual.users);
              assert.deepEqual(rebuilt.groups, actual.groups);
            } finally {
              await t.close();
            }
          }),
          { numRuns: engine.name === 'sqlite' ? 30 : 8 },
        );
      });
    }
  });
}
