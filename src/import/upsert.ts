/**
 * The upsert decision of `rollcall import`, one batch of rows at a time: which rows name a
 * resource the team already has (a user by userName, a group by displayName, both matched in any
 * case as the server matches them), read through the SCIM list services with `eq` filters joined
 * by `or` (no SQL here); and, for each row, the write that makes the team agree with it:
 *
 * - new: a POST of the row's resource;
 * - existing: a PATCH `replace` without a path whose value is the row's attributes (RFC 7644
 *   3.5.2.3): the attributes the file gives replace the stored ones, a complex one (`name`) sub-
 *   attribute by sub-attribute, an extension object merging; what the file does not give (a
 *   password, attributes another source set, values the team hides) is left as it is. A PUT would
 *   have to rebuild the whole resource from a read that never shows write-only attributes;
 * - unchanged: the PATCH, applied here with the server's own PATCH engine to the stored resource
 *   as read, changes nothing (and a group's given members are its members): no write at all.
 *
 * Because every write follows a fresh look-up, importing a file again, or again after an
 * interruption, updates what is there and creates only what is missing: no duplicates. A group's
 * members named by userName are resolved to user ids here; an unknown one refuses the row.
 */
import type { ScimContext } from '../scim/context.ts';
import { hidesDeactivated, typesOf } from '../scim/context.ts';
import { scimErrorOf } from '../scim/errors.ts';
import { listGroups } from '../scim/groups.ts';
import { applyPatch } from '../scim/patch.ts';
import { parseListQuery } from '../scim/query.ts';
import type { Resource } from '../scim/representation.ts';
import { lower } from '../scim/schema/registry.ts';
import { PATCH_OP } from '../scim/schema/urns.ts';
import { listUsers } from '../scim/users.ts';
import { KEY_COLUMN } from './columns.ts';
import { refusal } from './rows.ts';
import type { ImportKind, ImportRow, Refusal } from './rows.ts';

type Json = Record<string, unknown>;

/** What one row of a batch comes to. */
export type Decision =
  | { readonly kind: 'create'; readonly row: ImportRow; readonly data: Json }
  | { readonly kind: 'update'; readonly row: ImportRow; readonly id: string; readonly data: Json }
  | { readonly kind: 'unchanged'; readonly row: ImportRow }
  | { readonly kind: 'refused'; readonly row: ImportRow; readonly refusal: Refusal };

/** Comparisons per look-up filter, and its length: well inside the filter parser's limits. */
const LOOKUP_TERMS = 100;
const LOOKUP_CHARS = 3500;

/** Groups of `keys` whose `attr eq` filters fit one look-up. */
function* filtersOf(attr: string, keys: readonly string[]): Generator<string> {
  let terms: string[] = [];
  let length = 0;
  for (const key of keys) {
    const term = `${attr} eq ${JSON.stringify(key)}`;
    if (terms.length > 0 && (terms.length >= LOOKUP_TERMS || length + term.length + 4 > LOOKUP_CHARS)) {
      yield terms.join(' or ');
      terms = [];
      length = 0;
    }
    terms.push(term);
    length += term.length + 4;
  }
  if (terms.length > 0) yield terms.join(' or ');
}

/** The team's resources of `kind` whose key is among `keys`, by lower-cased key, as a list shows them. */
export async function existingByKey(ctx: ScimContext, kind: ImportKind, keys: readonly string[]): Promise<Map<string, Resource>> {
  const rt = kind === 'users' ? typesOf(ctx).User : typesOf(ctx).Group;
  const attr = KEY_COLUMN[kind];
  const found = new Map<string, Resource>();
  const unique = [...new Map(keys.map((k) => [lower(k), k])).values()];
  for (const filter of filtersOf(attr, unique)) {
    const query = parseListQuery(rt, { filter, count: String(LOOKUP_TERMS) });
    const page = kind === 'users' ? await listUsers(ctx, query) : await listGroups(ctx, query);
    for (const resource of page.resources) {
      const key = resource[attr];
      if (typeof key === 'string') found.set(lower(key), resource);
    }
  }
  return found;
}

/** Deep equality of JSON values, whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Json)[k], (b as Json)[k]));
}

/** Whether a group's members as listed (complete only when a plain array) are exactly `ids`. */
function sameMembers(listed: unknown, ids: readonly string[]): boolean {
  if (!Array.isArray(listed)) return listed === undefined && ids.length === 0;
  const have = new Set(listed.map((m) => (m as { value?: unknown }).value));
  return have.size === new Set(ids).size && ids.every((id) => have.has(id));
}

const withoutSchemas = (resource: Json): Json => Object.fromEntries(Object.entries(resource).filter(([k]) => lower(k) !== 'schemas'));

/** The decision for every row of `rows` (rows already refused stay refused), in their order. */
export async function decide(ctx: ScimContext, kind: ImportKind, rows: readonly ImportRow[]): Promise<Decision[]> {
  const valid = rows.filter((r) => r.refusal === undefined);
  const existing = await existingByKey(ctx, kind, valid.map((r) => r.key!));
  const memberNames = valid.flatMap((r) => (r.members ?? []).flatMap((m) => ('userName' in m ? [m.userName] : [])));
  const users = memberNames.length > 0 ? await existingByKey(ctx, 'users', memberNames) : new Map<string, Resource>();
  const rt = kind === 'users' ? typesOf(ctx).User : typesOf(ctx).Group;

  return rows.map((row): Decision => {
    if (row.refusal) return { kind: 'refused', row, refusal: row.refusal };
    let memberIds: string[] | undefined;
    if (row.members) {
      memberIds = [];
      for (const m of row.members) {
        const id = 'id' in m ? m.id : users.get(lower(m.userName))?.id;
        if (typeof id !== 'string') return { kind: 'refused', row, refusal: refusal('invalidValue', `member "${'userName' in m ? m.userName : ''}" is not a user of the team`) };
        memberIds.push(id);
      }
    }
    const members = memberIds ? { members: memberIds.map((value) => ({ value })) } : {};
    const stored = existing.get(lower(row.key!));
    if (!stored) {
      // A team that hides deactivated users shows none: a deactivated user the row describes
      // already reads as the row says (absent), and creating one would make a hidden copy on
      // every run.
      if (kind === 'users' && hidesDeactivated(ctx) && row.resource!.active === false) return { kind: 'unchanged', row };
      return { kind: 'create', row, data: { ...row.resource!, ...members } };
    }
    const data = { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { ...withoutSchemas(row.resource!), ...members } }] };
    try {
      // A group's members are compared apart (a long list comes as a stream, which is no document).
      const document = Object.fromEntries(Object.entries(stored).filter(([k]) => k !== 'members'));
      const patched = applyPatch(rt, document, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: withoutSchemas(row.resource!) }] });
      if (sameJson(patched.document, document) && (!memberIds || sameMembers(stored.members, memberIds))) return { kind: 'unchanged', row };
    } catch (error) {
      const known = scimErrorOf(error);
      if (!known) throw error;
      return { kind: 'refused', row, refusal: { status: known.status, ...(known.scimType ? { scimType: known.scimType } : {}), detail: known.message } };
    }
    return { kind: 'update', row, id: String(stored.id), data };
  });
}
