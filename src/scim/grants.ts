/**
 * Users' roles and entitlements as grants (DESIGN.md section 12). This module holds the forced
 * removal of a catalog entry from the users who hold it (src/access/catalog.ts calls it in the
 * catalog change's transaction): each holder's stored document loses the elements naming the
 * entry, its version moves on, its grants rows go, and the change is audited and on the feed as a
 * SCIM `patch` of `roles` or `entitlements`, as if the identity provider had removed the element.
 * It owns these rules; it writes no SQL (repos) and parses no HTTP.
 */
import { iso } from '../clock.ts';
import { recordRowWrite } from '../events/feed.ts';
import { deleteUserGrantsOf, holderIds } from '../storage/repos/catalog-holders.ts';
import { updateUser, userById } from '../storage/repos/users.ts';
import type { Executor } from '../storage/types.ts';
import type { ScimContext } from './context.ts';
import { ScimError } from './errors.ts';

const ATTRIBUTE = { role: 'roles', entitlement: 'entitlements' } as const;

const names = (element: unknown, value: string): boolean =>
  element !== null && typeof element === 'object' && !Array.isArray(element) && (element as Record<string, unknown>).value === value;

/**
 * Removes the catalog entry `value` of `kind` from every user of the team holding it, in `trx`;
 * returns how many users held it.
 */
export async function removeGrantFromUsers(ctx: ScimContext, trx: Executor, kind: 'role' | 'entitlement', value: string): Promise<number> {
  const attribute = ATTRIBUTE[kind];
  const ids = await holderIds(trx, ctx.team.id, kind, value);
  for (const id of ids) {
    const row = await userById(trx, ctx.team.id, id);
    if (row) {
      const data = ctx.storage.hooks.parseJson(row.data);
      const list = Array.isArray(data[attribute]) ? (data[attribute] as unknown[]) : [];
      const kept = list.filter((element) => !names(element, value));
      if (kept.length !== list.length) {
        const next: Record<string, unknown> = { ...data };
        if (kept.length > 0) next[attribute] = kept;
        else delete next[attribute];
        const nextRow = { ...row, data: ctx.storage.hooks.toJson(next), version: row.version + 1, updated_at: iso(ctx.clock) };
        if (!(await updateUser(trx, nextRow, row.version))) throw new ScimError(409, `User ${id} was changed by another request while ${kind} "${value}" was being removed from it; try again`);
        await recordRowWrite(ctx, trx, { action: 'patch', detail: { changed: [attribute], removedFromCatalog: { kind, value } } }, 'patch', 'User', nextRow, [attribute]);
      }
    }
    await deleteUserGrantsOf(trx, ctx.team.id, id, kind, value);
  }
  return ids.length;
}
