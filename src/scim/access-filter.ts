/**
 * The `access` parameter of user lists (issue 31): `GET /Users?access=role:admin` or
 * `?access=entitlement:License:e5` lists the users that hold the entry by effective access
 * (directly or through a mapped group; active users only), ANDed with `filter`, under either
 * paging method. Parsed here, resolved against the team's catalog by held-entry.ts (`heldEntry`),
 * and lowered to storage's `holds` predicate. A cursor is bound to the parameter as to the filter.
 */
import { heldEntry } from './held-entry.ts';
import type { GrantRef } from './held-entry.ts';
import type { Predicate } from '../storage/predicate.ts';
import type { ScimContext } from './context.ts';
import { typesOf } from './context.ts';
import { badRequest } from './errors.ts';
import type { ListQuery } from './query.ts';

const SYNTAX = 'access must be role:VALUE or entitlement:TYPE:VALUE (e.g. access=role:admin, access=entitlement:License:e5)';

/** `role:VALUE` or `entitlement:TYPE:VALUE` (the value may hold colons; a type cannot). */
export function parseAccess(raw: unknown): GrantRef | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') throw badRequest('invalidValue', SYNTAX);
  const role = /^role:(.+)$/s.exec(raw);
  if (role) return { kind: 'role', value: role[1]! };
  const entitlement = /^entitlement:([^:]+):(.+)$/s.exec(raw);
  if (entitlement) return { kind: 'entitlement', type: entitlement[1]!, value: entitlement[2]! };
  throw badRequest('invalidValue', SYNTAX);
}

/** Nobody holds it: a catalog entitlement asked for under another type. */
const NOBODY: Predicate = Object.freeze({ kind: 'not', predicate: Object.freeze({ kind: 'always' }) });

/** Storage's test of holding `grant`. */
export function holdsPredicate(ctx: ScimContext, grant: GrantRef): Predicate {
  const entry = heldEntry(typesOf(ctx).catalog, grant);
  if (!entry) return NOBODY;
  return {
    kind: 'holds',
    grant: entry.kind,
    value: entry.value,
    ...(entry.directType !== undefined ? { directType: entry.directType } : {}),
    ...(entry.mappedTypeKey !== undefined ? { mappedTypeKey: entry.mappedTypeKey } : {}),
  };
}

/** `query` with the `access` parameter `raw`: its predicate, and its cursors bound to it too. */
export function withAccess(ctx: ScimContext, query: ListQuery, raw: unknown): ListQuery {
  const grant = parseAccess(raw);
  if (!grant) return query;
  return { ...query, holds: holdsPredicate(ctx, grant), cursorBinding: JSON.stringify([JSON.parse(query.cursorBinding), grant]) };
}
