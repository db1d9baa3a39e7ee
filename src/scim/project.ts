/**
 * Shapes every resource a response carries (RFC 7644 section 3.4.2.5, RFC 7643 section 7):
 * attributes `returned: never` are dropped, `always` ones kept, and `attributes` /
 * `excludedAttributes` select or remove attributes, sub-attributes and whole extensions. It also
 * tells the services whether an expensive view (a Group's `members`, a User's `groups`) will be
 * shown at all, so that they never load what the response leaves out.
 */
import type { AttrPath } from './filter/ast.ts';
import { commonAttributes } from './schema/common.ts';
import { extensionForPath, findAttribute, lower, resolvePath, schemaByUrn } from './schema/registry.ts';
import type { AttributeDef, ResourceTypeDef } from './schema/types.ts';

export interface Projection {
  readonly attributes?: readonly AttrPath[];
  readonly excludedAttributes?: readonly AttrPath[];
}

type Json = Record<string, unknown>;

/** Selected names per container: '' for the core resource, else an extension URN. */
type Selection = Map<string, Map<string, 'all' | Set<string>>>;

/**
 * Resolves projection paths to canonical names; unknown names are 400 invalidValue. `schemas`
 * (RFC 7643 3, returned always) is a valid name that selects nothing: it is always shown, so
 * naming it in `attributes` or `excludedAttributes` has no effect (RFC 7644 3.4.2.5), as naming
 * `id` has.
 */
function selectionOf(rt: ResourceTypeDef, paths: readonly AttrPath[]): { selection: Selection; wholeExtensions: Set<string> } {
  const selection: Selection = new Map();
  const wholeExtensions = new Set<string>();
  for (const path of paths) {
    if (path.sub === undefined && lower(path.attr) === 'schemas' && (path.uri === undefined || schemaByUrn(rt, path.uri) === rt.schema)) continue;
    const extension = extensionForPath(rt, path);
    if (extension) {
      wholeExtensions.add(extension.id);
      continue;
    }
    const resolved = resolvePath(rt, path, 'invalidValue');
    if (resolved.attr.returned === 'always' && !resolved.sub) continue;
    const container = resolved.extension?.id ?? '';
    const attrs = selection.get(container) ?? new Map<string, 'all' | Set<string>>();
    selection.set(container, attrs);
    const current = attrs.get(resolved.attr.name);
    if (!resolved.sub) attrs.set(resolved.attr.name, 'all');
    else if (current !== 'all') attrs.set(resolved.attr.name, (current ?? new Set<string>()).add(resolved.sub.name));
  }
  return { selection, wholeExtensions };
}

/** Checks every path of a projection against the schema (called while parsing the request). */
export function checkProjection(rt: ResourceTypeDef, projection: Projection): void {
  selectionOf(rt, projection.attributes ?? []);
  selectionOf(rt, projection.excludedAttributes ?? []);
}

function definitionOf(rt: ResourceTypeDef, container: string, name: string): AttributeDef | undefined {
  if (container === '') return findAttribute(commonAttributes, name) ?? findAttribute(rt.schema.attributes, name);
  return rt.extensions.find((e) => e.schema.id === container)?.schema.attributes.find((a) => a.name === name);
}

const pickSubs = (value: unknown, subs: Set<string>): unknown => {
  const pick = (v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Json).filter(([k]) => subs.has(k)))
      : v;
  return Array.isArray(value) ? value.map(pick) : pick(value);
};

const dropSubs = (value: unknown, subs: Set<string>): unknown => {
  const drop = (v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Json).filter(([k]) => !subs.has(k)))
      : v;
  return Array.isArray(value) ? value.map(drop) : drop(value);
};

/** Applies the `returned` rules and one container's selection to `source`. */
function shapeContainer(
  rt: ResourceTypeDef,
  container: string,
  source: Json,
  include: Map<string, 'all' | Set<string>> | undefined,
  exclude: Map<string, 'all' | Set<string>> | undefined,
): Json {
  const out: Json = {};
  for (const [name, value] of Object.entries(source)) {
    const def = definitionOf(rt, container, name);
    if (def?.returned === 'never') continue;
    // An attribute a newer definition of its extension left out stays stored, hidden.
    if (def === undefined && container !== '') continue;
    if (def?.returned === 'always' || def === undefined) {
      out[name] = value;
      continue;
    }
    if (include) {
      const chosen = include.get(name);
      if (chosen === undefined) continue;
      out[name] = chosen === 'all' ? value : pickSubs(value, chosen);
      continue;
    }
    const excluded = exclude?.get(name);
    if (excluded === 'all') continue;
    out[name] = excluded ? dropSubs(value, excluded) : value;
  }
  return out;
}

/** The resource as the response shows it. `resource` is a full representation. */
export function projectResource(rt: ResourceTypeDef, resource: Json, projection: Projection): Json {
  const include = projection.attributes && projection.attributes.length > 0 ? selectionOf(rt, projection.attributes) : undefined;
  const exclude = projection.excludedAttributes ? selectionOf(rt, projection.excludedAttributes) : undefined;
  const extensionIds = new Set(rt.extensions.map((e) => e.schema.id));
  const core: Json = {};
  const out: Json = {};
  for (const [key, value] of Object.entries(resource)) {
    if (key === 'schemas') out.schemas = value;
    // A removed extension's values stay stored, hidden: an undeclared URN key is never shown.
    else if (/^urn:/i.test(key) && !extensionIds.has(key)) continue;
    else if (!extensionIds.has(key)) core[key] = value;
  }
  Object.assign(out, shapeContainer(rt, '', core, include?.selection.get('') ?? (include ? new Map() : undefined), exclude?.selection.get('')));
  for (const id of extensionIds) {
    const value = resource[id];
    if (value === null || typeof value !== 'object') continue;
    if (exclude?.wholeExtensions.has(id)) continue;
    let shaped: Json;
    if (include) {
      if (include.wholeExtensions.has(id)) shaped = shapeContainer(rt, id, value as Json, undefined, exclude?.selection.get(id));
      else if (include.selection.has(id)) shaped = shapeContainer(rt, id, value as Json, include.selection.get(id), undefined);
      else continue;
    } else {
      shaped = shapeContainer(rt, id, value as Json, undefined, exclude?.selection.get(id));
    }
    if (Object.keys(shaped).length > 0) out[id] = shaped;
  }
  return out;
}

/** Whether the response will show the core attribute `name` (so the service must load it). */
export function wantsAttribute(rt: ResourceTypeDef, projection: Projection, name: string): boolean {
  const def = definitionOf(rt, '', name);
  if (def?.returned === 'never') return false;
  if (projection.attributes && projection.attributes.length > 0) {
    return selectionOf(rt, projection.attributes).selection.get('')?.has(name) ?? false;
  }
  if (projection.excludedAttributes) {
    return selectionOf(rt, projection.excludedAttributes).selection.get('')?.get(name) !== 'all';
  }
  return true;
}
