/**
 * For the effective-access tests, whose subject is the reads: a user's direct grant written the
 * way a provider writes it (a SCIM PATCH adding the element, which keeps the user's user_grants
 * rows, src/scim/grants.ts) and a group's mapping made by the mapping domain
 * (src/access/mappings.ts `mapGroup`: its audit row and event included).
 *
 * `grantRow` / `mappingRow` write the rows straight into `user_grants` / `access_mappings`, for
 * tests whose point is a state those paths cannot make (e.g. random holdings of values outside the
 * catalog, which a catalog team's writes refuse); each caller says why in a comment.
 */
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { mapGroup } from '../../src/access/mappings.ts';
import type { Storage } from '../../src/storage/connect.ts';
import type { TeamRow } from '../../src/storage/repos/teams.ts';
import { BASE_URL } from './app.ts';
import type { TestApp } from './app.ts';

export type Kind = 'role' | 'entitlement';

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/**
 * The user holds `value` directly: a SCIM PATCH adds the element to its `roles` / `entitlements`
 * (`type` as sent, none when ''), through `request` (the user's team's token).
 */
export async function grantDirect(request: TestApp['request'], userId: string, kind: Kind, value: string, type = '', primary = false): Promise<void> {
  const element = { value, ...(type !== '' ? { type } : {}), ...(primary ? { primary: true } : {}) };
  const res = await request('PATCH', `/v2/scim/Users/${userId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'add', path: kind === 'role' ? 'roles' : 'entitlements', value: [element] }],
  });
  if (res.statusCode !== 200 && res.statusCode !== 204) throw new Error(`grantDirect: PATCH answered ${res.statusCode}: ${res.body}`);
}

/** The group's members hold `value` (`type` names the entitlement's type; none for a role): `mapGroup`, as the admin API does. */
export async function mapTo(t: Pick<TestApp, 'storage' | 'clock'>, team: TeamRow, groupId: string, kind: Kind, value: string, type?: string): Promise<void> {
  await mapGroup({ storage: t.storage, clock: t.clock, baseUrl: BASE_URL }, team, { group: groupId, kind, value, ...(type !== undefined ? { type } : {}) }, { actor: CLI_ACTOR });
}

/** A `user_grants` row written directly (see the header: only for states the user writes cannot make). */
export async function grantRow(storage: Storage, teamId: string, userId: string, kind: Kind, value: string, type = '', primary = false): Promise<void> {
  await storage.db
    .insertInto('user_grants')
    .values({ team_id: teamId, kind, value, type, user_id: userId, is_primary: primary ? 1 : 0 })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** An `access_mappings` row written directly (`typeKey` the type's name lower-cased, '' for a role); see the header. */
export async function mappingRow(storage: Storage, teamId: string, groupId: string, kind: Kind, value: string, typeKey = '', createdAt = '2026-01-01T00:00:00.000Z'): Promise<void> {
  await storage.db
    .insertInto('access_mappings')
    .values({ team_id: teamId, kind, type_key: typeKey, value, group_id: groupId, created_at: createdAt })
    .onConflict((oc) => oc.doNothing())
    .execute();
}
