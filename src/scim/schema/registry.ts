/**
 * Resolves attribute names and paths against the schema definitions: case-insensitively
 * (RFC 7643 section 2.1), with or without a schema URN prefix (RFC 7644 section 3.10). Every
 * consumer (validation, projection, filters, PATCH, sorting) asks here; none compares attribute
 * names itself. Failures are ScimErrors with the scimType the caller names.
 */
import { badRequest } from '../errors.ts';
import type { ScimType } from '../errors.ts';
import type { AttrPath } from '../filter/ast.ts';
import { commonAttributes } from './common.ts';
import { groupSchema } from './group.ts';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from './types.ts';
import { enterpriseUserSchema, userSchema } from './user.ts';

export const userResourceType: ResourceTypeDef = {
  name: 'User',
  endpoint: '/Users',
  description: 'User Account',
  schema: userSchema,
  extensions: [{ schema: enterpriseUserSchema, required: false }],
};

export const groupResourceType: ResourceTypeDef = {
  name: 'Group',
  endpoint: '/Groups',
  description: 'Group',
  schema: groupSchema,
  extensions: [],
};

export const resourceTypes: readonly ResourceTypeDef[] = [userResourceType, groupResourceType];

export const allSchemas: readonly SchemaDef[] = [userSchema, enterpriseUserSchema, groupSchema];

/** A path resolved to its definitions. `extension` is set for attributes of an extension schema. */
export interface ResolvedAttr {
  /** The schema that owns the attribute (the core schema for common attributes). */
  readonly schema: SchemaDef;
  /** Set when the attribute lives under an extension URN key in the document. */
  readonly extension?: SchemaDef;
  readonly attr: AttributeDef;
  readonly sub?: AttributeDef;
}

export const lower = (s: string): string => s.toLowerCase();

export function findSubAttribute(parent: AttributeDef, name: string): AttributeDef | undefined {
  return parent.subAttributes ? findAttribute(parent.subAttributes, name) : undefined;
}

/** The attribute named `name` in any letter case; the name as defined (the usual case) is tried first. */
export function findAttribute(attrs: readonly AttributeDef[], name: string): AttributeDef | undefined {
  const exact = attrs.find((a) => a.name === name);
  if (exact) return exact;
  const key = lower(name);
  return attrs.find((a) => lower(a.name) === key);
}

/** The schema (core or extension of this resource type) whose id equals `urn`, ignoring case. */
export function schemaByUrn(rt: ResourceTypeDef, urn: string): SchemaDef | undefined {
  const key = lower(urn);
  if (lower(rt.schema.id) === key) return rt.schema;
  return rt.extensions.find((e) => lower(e.schema.id) === key)?.schema;
}

/** Whether `urn` names an extension schema of `rt` (the key its attributes nest under). */
export function extensionByUrn(rt: ResourceTypeDef, urn: string): SchemaDef | undefined {
  const key = lower(urn);
  return rt.extensions.find((e) => lower(e.schema.id) === key)?.schema;
}

/**
 * Resolves an attribute path. `scimType` is what a failure reports: `invalidFilter` for
 * filters, `invalidPath` for PATCH, `invalidValue` for sortBy and attributes=.
 * A path naming a whole extension (`urn:...:enterprise:2.0:User`) is not an attribute; callers
 * that accept it check `extensionForPath` first.
 */
export function resolvePath(rt: ResourceTypeDef, path: AttrPath, scimType: ScimType): ResolvedAttr {
  const fail = (why: string) => badRequest(scimType, `${why}: "${formatPath(path)}"`);
  let schema: SchemaDef = rt.schema;
  let extension: SchemaDef | undefined;
  let candidates: readonly AttributeDef[] = [...commonAttributes, ...rt.schema.attributes];
  if (path.uri !== undefined) {
    const found = schemaByUrn(rt, path.uri);
    if (!found) throw fail('Unknown schema in attribute path (declare it with rollcall schema add)');
    schema = found;
    if (found !== rt.schema) {
      extension = found;
      candidates = found.attributes;
    }
  }
  let attr = findAttribute(candidates, path.attr);
  if (!attr && path.uri === undefined) {
    // An unprefixed name that only an extension defines (Entra sends `manager` without the
    // enterprise URN, IDP-DIALECTS.md E6) resolves to that extension's attribute.
    for (const ext of rt.extensions) {
      const found = findAttribute(ext.schema.attributes, path.attr);
      if (found) {
        attr = found;
        schema = ext.schema;
        extension = ext.schema;
        break;
      }
    }
  }
  if (!attr) throw fail(`Unknown attribute for ${rt.name} (declare it with rollcall schema add)`);
  if (path.sub === undefined) return extension ? { schema, extension, attr } : { schema, attr };
  const sub = findSubAttribute(attr, path.sub);
  if (!sub) throw fail(`Unknown sub-attribute for ${rt.name}`);
  return extension ? { schema, extension, attr, sub } : { schema, attr, sub };
}

/** The extension schema when the whole path is an extension URN (`uri` + ':' + `attr`). */
export function extensionForPath(rt: ResourceTypeDef, path: AttrPath): SchemaDef | undefined {
  if (path.uri === undefined || path.sub !== undefined) return undefined;
  return extensionByUrn(rt, `${path.uri}:${path.attr}`);
}

export function formatPath(path: AttrPath): string {
  return `${path.uri !== undefined ? `${path.uri}:` : ''}${path.attr}${path.sub !== undefined ? `.${path.sub}` : ''}`;
}

/** The resource type served at `/Users` or `/Groups`. */
export function resourceTypeByName(name: 'User' | 'Group'): ResourceTypeDef {
  return name === 'User' ? userResourceType : groupResourceType;
}
