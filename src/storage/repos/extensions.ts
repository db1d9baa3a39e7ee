/**
 * Rows of team schema extensions (migration 009) and of the values their `uniqueness: server`
 * attributes hold. A change of a team's extensions bumps `teams.schema_version` in the same
 * transaction, which the bearer check reads with the team (tokens.ts), so every app rebuilds the
 * team's resource types on its next request. Unique values are claimed inside a resource's write
 * transaction: the primary key refuses a second holder, also when two creates race.
 */
import { announceRevocation } from '../revocations.ts';
import type { Executor, SchemaExtensionsTable } from '../types.ts';

export type ExtensionRow = SchemaExtensionsTable;

/** The team's extensions, in registration order; removed ones only when asked. */
export async function extensionsOf(ex: Executor, teamId: string, withRemoved = false): Promise<ExtensionRow[]> {
  let q = ex.selectFrom('schema_extensions').selectAll().where('team_id', '=', teamId);
  if (!withRemoved) q = q.where('removed_at', 'is', null);
  return q.orderBy('created_at').orderBy('schema_key').execute();
}

/** Every team's extensions that are not removed (the expression indexes serve them all). */
export async function activeExtensions(ex: Executor): Promise<ExtensionRow[]> {
  return ex.selectFrom('schema_extensions').selectAll().where('removed_at', 'is', null).orderBy('team_id').orderBy('schema_key').execute();
}

export async function extensionByKey(ex: Executor, teamId: string, key: string): Promise<ExtensionRow | undefined> {
  return ex.selectFrom('schema_extensions').selectAll().where('team_id', '=', teamId).where('schema_key', '=', key).executeTakeFirst();
}

/** Inserts or replaces the team's extension `row.schema_key` and bumps the team's schema version. */
export async function saveExtension(ex: Executor, row: ExtensionRow): Promise<void> {
  const { team_id, schema_key, created_at, ...changes } = row;
  const updated = await ex.updateTable('schema_extensions').set(changes).where('team_id', '=', team_id).where('schema_key', '=', schema_key).executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) await ex.insertInto('schema_extensions').values(row).execute();
  await bumpSchemaVersion(ex, team_id);
}

/** Marks the extension removed (its data stays, hidden); false when there was none. */
export async function removeExtension(ex: Executor, teamId: string, key: string, at: string): Promise<boolean> {
  const result = await ex
    .updateTable('schema_extensions')
    .set({ removed_at: at, updated_at: at })
    .where('team_id', '=', teamId)
    .where('schema_key', '=', key)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await bumpSchemaVersion(ex, teamId);
  return true;
}

/**
 * Bumps the team's schema version (its extensions or its catalog changed): every instance's types
 * cache (scim/team-schemas.ts) rebuilds the team's types on its next request.
 */
export async function bumpSchemaVersion(ex: Executor, teamId: string): Promise<void> {
  await ex
    .updateTable('teams')
    .set((eb) => ({ schema_version: eb('schema_version', '+', 1) }))
    .where('id', '=', teamId)
    .execute();
  // The bearer cache holds the team row (its schema version) with each token.
  await announceRevocation(ex, { kind: 'team', id: teamId });
}

/** One claimed value: `attribute` is `<schema URN>:<name>` lower-cased, `valueKey` the compared form. */
export interface UniqueClaim {
  readonly attribute: string;
  readonly valueKey: string;
}

/**
 * Makes `claims` the resource's claimed values: releases the others and inserts the new ones. A
 * value another resource holds makes the insert fail with a unique violation.
 */
export async function claimUniqueValues(ex: Executor, teamId: string, resourceType: 'User' | 'Group', resourceId: string, claims: readonly UniqueClaim[]): Promise<void> {
  await ex.deleteFrom('extension_unique_values').where('resource_id', '=', resourceId).where('team_id', '=', teamId).execute();
  if (claims.length === 0) return;
  await ex
    .insertInto('extension_unique_values')
    .values(claims.map((c) => ({ team_id: teamId, resource_type: resourceType, attribute: c.attribute, value_key: c.valueKey, resource_id: resourceId })))
    .execute();
}

/** The resource holding `claim`, if any. */
export async function uniqueHolder(ex: Executor, teamId: string, resourceType: 'User' | 'Group', claim: UniqueClaim): Promise<string | undefined> {
  const row = await ex
    .selectFrom('extension_unique_values')
    .select('resource_id')
    .where('team_id', '=', teamId)
    .where('resource_type', '=', resourceType)
    .where('attribute', '=', claim.attribute)
    .where('value_key', '=', claim.valueKey)
    .executeTakeFirst();
  return row?.resource_id;
}

/** Releases every value a resource held (it was deleted). */
export async function releaseUniqueValues(ex: Executor, teamId: string, resourceId: string): Promise<void> {
  await ex.deleteFrom('extension_unique_values').where('resource_id', '=', resourceId).where('team_id', '=', teamId).execute();
}
