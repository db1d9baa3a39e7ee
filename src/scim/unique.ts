/**
 * `uniqueness: server` on team extension attributes (RFC 7643 2.2): a single-valued
 * string attribute so declared holds each value (compared case-folded unless caseExact) on at
 * most one resource of its type in the team. Each write claims its resource's values inside its
 * transaction (repos/extensions.ts); a value another resource holds is a 409 `uniqueness`, and
 * when two creates race, the claims' primary key refuses the second, which becomes the same 409.
 * Only teams whose types declare such an attribute pay for it.
 */
import type { Storage } from '../storage/connect.ts';
import { claimUniqueValues, releaseUniqueValues, uniqueHolder } from '../storage/repos/extensions.ts';
import type { UniqueClaim } from '../storage/repos/extensions.ts';
import type { Executor } from '../storage/types.ts';
import { conflict } from './errors.ts';
import type { ResourceTypeDef } from './schema/types.ts';

type Json = Record<string, unknown>;

interface Claim extends UniqueClaim {
  readonly label: string;
  readonly value: string;
}

const uniqueAttributes = (rt: ResourceTypeDef) =>
  rt.extensions.flatMap((ext) => ext.schema.attributes.filter((a) => a.uniqueness === 'server' && a.type === 'string' && !a.multiValued).map((a) => ({ ext: ext.schema.id, attr: a })));

/** Whether writes of `rt` claim values at all. */
export const claimsValues = (rt: ResourceTypeDef): boolean => uniqueAttributes(rt).length > 0;

function claimsOf(rt: ResourceTypeDef, document: Json | undefined): Claim[] {
  if (!document) return [];
  const out: Claim[] = [];
  for (const { ext, attr } of uniqueAttributes(rt)) {
    const container = document[ext];
    const value = container !== null && typeof container === 'object' ? (container as Json)[attr.name] : undefined;
    if (typeof value !== 'string') continue;
    out.push({ attribute: `${ext}:${attr.name}`.toLowerCase(), valueKey: attr.caseExact ? value : value.toLowerCase(), label: `${ext}:${attr.name}`, value });
  }
  return out;
}

/**
 * Makes the values `document` holds the ones resource `id` claims (none when `document` is
 * undefined: the resource left every read). Throws 409 `uniqueness` naming the attribute and the
 * holder when another resource holds one.
 */
export async function claimExtensionValues(
  ctx: { readonly storage: Storage; readonly team: { readonly id: string } },
  trx: Executor,
  rt: ResourceTypeDef,
  id: string,
  document: Json | undefined,
): Promise<void> {
  if (!claimsValues(rt)) return;
  const claims = claimsOf(rt, document);
  for (const claim of claims) {
    const holder = await uniqueHolder(trx, ctx.team.id, rt.name, claim);
    if (holder !== undefined && holder !== id) throw conflict(`${claim.label} "${claim.value.slice(0, 100)}" is already taken by ${rt.name} ${holder}`);
  }
  try {
    await claimUniqueValues(trx, ctx.team.id, rt.name, id, claims);
  } catch (error) {
    // A concurrent write claimed one of the values after the check above (its transaction won).
    if (ctx.storage.hooks.isUniqueViolation(error)) throw conflict(`${claims.map((c) => c.label).join(', ')}: a value is already taken by another ${rt.name}`);
    throw error;
  }
}

/** The resource was deleted: its values are free again. */
export async function releaseExtensionValues(ctx: { readonly team: { readonly id: string } }, trx: Executor, rt: ResourceTypeDef, id: string): Promise<void> {
  if (claimsValues(rt)) await releaseUniqueValues(trx, ctx.team.id, id);
}
