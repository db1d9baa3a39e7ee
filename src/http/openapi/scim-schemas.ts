/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses) of SCIM resources, generated from the attribute
 * definitions the SCIM validator itself reads (src/scim/schema): the core User and Group, the
 * enterprise extension, and a team's declared extensions (its TeamTypes). Names are canonical;
 * SCIM attribute names are case-insensitive (RFC 7643 section 2.1), which the descriptions say,
 * so objects admit other properties (and extension schemas nest under their URN).
 */
import { commonAttributes } from '../../scim/schema/common.ts';
import type { TeamTypes } from '../../scim/schema/extensions.ts';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from '../../scim/schema/types.ts';
import type { JsonSchema } from './route-doc.ts';

const CASE_NOTE = 'Attribute names are case-insensitive (RFC 7643 section 2.1); the server answers with the canonical names shown here.';

function scalar(def: AttributeDef): JsonSchema {
  switch (def.type) {
    case 'boolean':
      return { type: 'boolean' };
    case 'integer':
      return { type: 'integer' };
    case 'decimal':
      return { type: 'number' };
    case 'dateTime':
      return { type: 'string', format: 'date-time' };
    case 'binary':
      return { type: 'string', contentEncoding: 'base64' };
    case 'complex':
      return objectOf(def.subAttributes ?? []);
    default:
      return {
        type: 'string',
        ...(def.canonicalValues && def.canonicalValues.length > 0 ? { examples: [...def.canonicalValues] } : {}),
      };
  }
}

function attributeSchema(def: AttributeDef): JsonSchema {
  const notes = [
    def.description,
    `Mutability: ${def.mutability}; returned: ${def.returned}${def.uniqueness !== 'none' ? `; uniqueness: ${def.uniqueness}` : ''}${def.required ? '; required on create and replace' : ''}.`,
  ].join(' ');
  const value = scalar(def);
  const base = def.multiValued ? { type: 'array', items: value } : value;
  return {
    ...base,
    description: notes,
    ...(def.mutability === 'readOnly' ? { readOnly: true } : {}),
    ...(def.mutability === 'writeOnly' || def.returned === 'never' ? { writeOnly: true } : {}),
  };
}

function objectOf(attributes: readonly AttributeDef[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  // A property named `$ref` (a member's reference, RFC 7643 8.7.1) is written as an exact
  // pattern: OpenAPI tools read every "$ref" key as a reference, whatever its position.
  const patternProperties: Record<string, JsonSchema> = {};
  for (const a of [...attributes].sort((x, y) => x.name.localeCompare(y.name))) {
    if (a.name.startsWith('$')) patternProperties[`^\\${a.name}$`] = attributeSchema(a);
    else properties[a.name] = attributeSchema(a);
  }
  return { type: 'object', properties, ...(Object.keys(patternProperties).length > 0 ? { patternProperties } : {}), additionalProperties: true };
}

/** A component name for a schema URN: EnterpriseUser for the enterprise extension, else a safe form of the URN. */
export function componentName(schema: SchemaDef): string {
  if (schema.id === 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User') return 'EnterpriseUser';
  if (schema.id === 'urn:ietf:params:scim:schemas:core:2.0:User') return 'User';
  if (schema.id === 'urn:ietf:params:scim:schemas:core:2.0:Group') return 'Group';
  return `Extension_${schema.id.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** The JSON Schema of one extension's attributes (what sits under its URN in a resource). */
export function extensionSchema(schema: SchemaDef): JsonSchema {
  return { ...objectOf(schema.attributes), title: schema.name || schema.id, description: `${schema.description} (${schema.id}). ${CASE_NOTE}` };
}

/** The JSON Schema of a resource: the core schema's attributes plus each extension under its URN. */
export function resourceSchema(rt: ResourceTypeDef): JsonSchema {
  // The common attributes (id, externalId, meta; RFC 7643 section 3.1), then the core schema's.
  const core = objectOf([...commonAttributes, ...rt.schema.attributes]);
  const properties = { ...(core.properties as Record<string, JsonSchema>) };
  properties.schemas = { type: 'array', items: { type: 'string' }, description: 'The URNs of the schemas the resource carries.' };
  // A Group without an externalId answers it as null (the contract's form, scim/representation.ts).
  if (rt.name === 'Group' && properties.externalId) {
    properties.externalId = { ...properties.externalId, type: ['string', 'null'], description: `${String(properties.externalId.description)} null when the Group has none.` };
  }
  // Returned whatever attributes / excludedAttributes ask (returned: always), so required in answers.
  const required = ['id', 'schemas'];
  for (const ext of [...rt.extensions].sort((a, b) => a.schema.id.localeCompare(b.schema.id))) {
    properties[ext.schema.id] = { $ref: `#/components/schemas/${componentName(ext.schema)}` };
  }
  return {
    type: 'object',
    title: rt.name,
    description: `${rt.description} ${CASE_NOTE} Which attributes an answer holds follows attributes / excludedAttributes.`,
    properties: Object.fromEntries(Object.entries(properties).sort(([a], [b]) => a.localeCompare(b))),
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: true,
  };
}

/** components.schemas entries for a team's resource types: User, Group and every extension. */
export function resourceComponents(types: TeamTypes): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = { User: resourceSchema(types.User), Group: resourceSchema(types.Group) };
  for (const rt of [types.User, types.Group]) {
    for (const ext of rt.extensions) out[componentName(ext.schema)] = extensionSchema(ext.schema);
  }
  return out;
}
