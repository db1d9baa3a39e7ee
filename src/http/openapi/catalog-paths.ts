/**
 * A team's OpenAPI document names its catalog endpoints: `/v2/scim/Roles`, `/v2/scim/Entitlements`
 * and each entitlement type's endpoint (`/v2/scim/Licenses`), with `/{id}` and under the `/scim`
 * alias, beside the parametric `/{endpoint}` routes that serve them (scim-routes.ts), so that a
 * client generated from the team's document has one read operation per endpoint. Each is the
 * parametric GET operation with `endpoint` fixed; writes are not repeated (they answer 405). The
 * anonymous document and a team without a catalog get nothing here.
 */
import { hasCatalog } from '../../scim/schema/catalog.ts';
import type { TeamTypes } from '../../scim/schema/extensions.ts';
import type { JsonSchema } from './route-doc.ts';

type Paths = Record<string, Record<string, JsonSchema>>;

const PARAMETRIC = /^(\/v2\/scim|\/scim)\/\{endpoint\}(\/\{id\})?$/;

/** The concrete catalog paths of `types`, derived from the parametric ones already in `paths`. */
export function catalogPaths(paths: Paths, types: TeamTypes): Paths {
  const catalog = types.catalog;
  if (!hasCatalog(catalog)) return {};
  const names = ['Roles', 'Entitlements', ...catalog.types.map((t) => t.endpoint.slice(1))];
  const out: Paths = {};
  for (const [template, ops] of Object.entries(paths)) {
    const match = PARAMETRIC.exec(template);
    const get = ops.get;
    if (!match || !get) continue;
    for (const name of names) {
      const parameters = (get.parameters as JsonSchema[] | undefined)?.filter((p) => p.name !== 'endpoint');
      out[`${match[1]}/${name}${match[2] ?? ''}`] = {
        get: { ...get, operationId: `${String(get.operationId)}_${name}`, summary: `${String(get.summary)} (/${name})`, ...(parameters ? { parameters } : {}) },
      };
    }
  }
  return out;
}
