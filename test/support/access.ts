/**
 * For the effective-access tests, whose subject is the reads, not how grants and mappings are
 * written: a user's direct grant and a group's mapping written straight into `user_grants` and
 * `access_mappings`, as the user writes (helper C, src/scim/grants.ts) and the mapping domain
 * (helper D1, src/access/mappings.ts) write them. The one place to switch to those paths once
 * they are merged. A grant row that the user write already made is left as it is.
 */
import type { Storage } from '../../src/storage/connect.ts';

export type Kind = 'role' | 'entitlement';

/** The user holds `value` directly (its SCIM `roles` / `entitlements` element, `type` as sent, '' when none). */
export async function grantDirect(storage: Storage, teamId: string, userId: string, kind: Kind, value: string, type = '', primary = false): Promise<void> {
  await storage.db
    .insertInto('user_grants')
    .values({ team_id: teamId, kind, value, type, user_id: userId, is_primary: primary ? 1 : 0 })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** The user no longer holds `value` directly. */
export async function revokeDirect(storage: Storage, teamId: string, userId: string, kind: Kind, value: string): Promise<void> {
  await storage.db.deleteFrom('user_grants').where('team_id', '=', teamId).where('user_id', '=', userId).where('kind', '=', kind).where('value', '=', value).execute();
}

/** The group's members hold `value` (`typeKey` the entitlement type's name lower-cased, '' for a role). */
export async function mapGroupRow(storage: Storage, teamId: string, groupId: string, kind: Kind, value: string, typeKey = '', createdAt = '2026-01-01T00:00:00.000Z'): Promise<void> {
  await storage.db
    .insertInto('access_mappings')
    .values({ team_id: teamId, kind, type_key: typeKey, value, group_id: groupId, created_at: createdAt })
    .onConflict((oc) => oc.doNothing())
    .execute();
}
