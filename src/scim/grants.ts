/**
 * The user_grants rows of users' direct roles and entitlements (migration 023, DESIGN.md section
 * 12): kept by every user write in its transaction (`keepGrants`, called by users.ts beside the
 * extension claims), and an entry taken away from every user holding it (`removeGrantFromUsers`,
 * the catalog's forced removal).
 *
 * A user holds rows exactly while its document can be read by id: not deleted. A deactivated
 * user of a team that hides deactivated users keeps its rows (as it keeps its extension claims),
 * so that reactivating it needs nothing more; the readers of effective access count active users
 * only. It owns the rule; the SQL is repos/grants.ts.
 */
import { changedAttributes } from '../audit/events.ts';
import { iso } from '../clock.ts';
import { recordRowWrite } from '../events/feed.ts';
import { catalogEntriesPresent } from '../storage/repos/catalog.ts';
import { changeGrants, dropGrant, holdersOfGrant } from '../storage/repos/grants.ts';
import type { GrantRow } from '../storage/repos/grants.ts';
import { updateUser } from '../storage/repos/users.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { Executor } from '../storage/types.ts';
import { ATTRIBUTE_OF, grantsOf, holdsAssignments, sameAssignments } from './assignments.ts';
import type { Grant, GrantKind } from './assignments.ts';
import type { ScimContext } from './context.ts';
import { badRequest } from './errors.ts';
import { hasCatalog } from './schema/catalog.ts';
import { RetryWrite } from './write.ts';

type Json = Record<string, unknown>;

/** Holders rewritten per batch of a removal: bounded memory whatever the entry's holders. */
export const REMOVAL_BATCH = 500;

const keyOf = (g: Grant): string => JSON.stringify([g.kind, g.value, g.type]);
const rowOf = (g: Grant): GrantRow => ({ kind: g.kind, value: g.value, type: g.type, is_primary: g.primary ? 1 : 0 });

/**
 * Makes user `id`'s rows those of `after` given they were those of `before` (each undefined when
 * the user holds nothing: not created yet, or deleted). No statement when neither document holds
 * a role or an entitlement, or when the write left both attributes as they were.
 */
export async function keepGrants(ctx: Pick<ScimContext, 'team'>, trx: Executor, id: string, before: Json | undefined, after: Json | undefined): Promise<void> {
  if (!holdsAssignments(before) && !holdsAssignments(after)) return;
  if (before !== undefined && after !== undefined && sameAssignments(before, after)) return;
  const old = new Map(grantsOf(before).map((g) => [keyOf(g), g]));
  const now = grantsOf(after);
  const nowKeys = new Set(now.map(keyOf));
  const upserted = now.filter((g) => old.get(keyOf(g))?.primary !== g.primary).map(rowOf);
  // A write that takes rows away deletes every row but `now` (one that no document explains too).
  const removes = [...old.keys()].some((k) => !nowKeys.has(k));
  await changeGrants(trx, ctx.team.id, id, now.map(rowOf), upserted, removes);
}

/**
 * A write's new assignments, against the catalog as committed: each role or entitlement value
 * `written` holds that `stored` (the user's document before the write, whatever its state; none
 * for a create) did not, must still be an entry of the team's catalog, read in the write's
 * transaction (repos/catalog.ts `catalogEntriesPresent`: share-locked on PostgreSQL, so a
 * concurrent removal of the entry either counted this write's holder or left nothing to find).
 * The write checked its values against the types it loaded (assignments.ts), which an instance
 * may hold for a while after the catalog changed. 400 `invalidValue` when one is gone. Nothing
 * is read when the team has no catalog or the write assigns nothing new; call it before the
 * write's own row is written (locks in the order a catalog change takes them: entries, then users).
 */
export async function confirmAssigned(ctx: Pick<ScimContext, 'team' | 'types'>, trx: Executor, stored: Json | undefined, written: Json | undefined): Promise<void> {
  if (!hasCatalog(ctx.types?.catalog) || !holdsAssignments(written)) return;
  const had = new Set(grantsOf(stored).map((g) => `${g.kind}\u0000${g.value}`));
  for (const kind of ['role', 'entitlement'] as const) {
    const fresh = [...new Set(grantsOf(written).filter((g) => g.kind === kind && !had.has(`${g.kind}\u0000${g.value}`)).map((g) => g.value))];
    if (fresh.length === 0) continue;
    const present = await catalogEntriesPresent(trx, ctx.team.id, kind, fresh);
    const gone = fresh.find((v) => !present.has(v));
    if (gone !== undefined) throw badRequest('invalidValue', `${JSON.stringify(gone)} is not ${kind === 'role' ? 'a role' : 'an entitlement'} in the team's catalog (it was removed from it)`);
  }
}

/** The document without the entry in the kind's attribute (an attribute left empty is removed). */
function without(document: Json, kind: GrantKind, value: string): Json {
  const attribute = ATTRIBUTE_OF[kind];
  const elements = Array.isArray(document[attribute]) ? (document[attribute] as unknown[]) : [];
  const kept = elements.filter((e) => !(e !== null && typeof e === 'object' && (e as Json).value === value));
  const next = { ...document };
  if (kept.length > 0) next[attribute] = kept;
  else delete next[attribute];
  return next;
}

/**
 * Removes the catalog entry `value` of `kind` from every user of the team holding it, in the
 * caller's transaction: each holder's document rewritten without it, its version bumped, its
 * grants rows kept, one audit row (`patch`) and one SCIM `patch` event naming the attribute; the
 * team's counters are untouched (no user changes state). Holders are walked in batches of
 * REMOVAL_BATCH (`batch`) through the grants index, each batch's users rows locked (PostgreSQL), so
 * a concurrent write of a holder is waited for, never lost. Returns how many users it changed.
 */
export async function removeGrantFromUsers(ctx: ScimContext, trx: Executor, kind: GrantKind, value: string, batch: number = REMOVAL_BATCH): Promise<number> {
  let changed = 0;
  for (;;) {
    const holders = await holdersOfGrant(trx, ctx.team.id, kind, value, batch);
    if (holders.ids.length === 0) return changed;
    for (const row of holders.users) if (await removeFromUser(ctx, trx, row, kind, value)) changed++;
    // Every row of the batch goes, also those no document explains (a row whose user is gone):
    // the next batch reads rows not seen yet, and the walk ends only when none is left.
    await dropGrant(trx, ctx.team.id, kind, value, holders.ids);
  }
}

async function removeFromUser(ctx: ScimContext, trx: Executor, row: UserRow, kind: GrantKind, value: string): Promise<boolean> {
  const before = ctx.storage.hooks.parseJson(row.data);
  const after = without(before, kind, value);
  const changed = changedAttributes(before, after);
  if (changed.length === 0) return false;
  const next: UserRow = { ...row, data: ctx.storage.hooks.toJson(after), version: row.version + 1, updated_at: iso(ctx.clock) };
  if (!(await updateUser(trx, next, row.version))) throw new RetryWrite();
  await keepGrants(ctx, trx, row.id, row.deleted_at === null ? before : undefined, row.deleted_at === null ? after : undefined);
  await recordRowWrite(ctx, trx, { action: 'patch', detail: { changed, removed: { [ATTRIBUTE_OF[kind]]: value } } }, 'patch', 'User', next, changed);
  return true;
}
