/**
 * Request bodies Fastify validates with the document's own schemas (issue 34 item 1): a route
 * whose RouteDoc sets `validateBody` gets its requestBody content schemas as Fastify's
 * `schema.body.content[mediaType].schema`. The document refers to components as
 * `#/components/schemas/Name`; here the same component objects are added to Fastify's ajv under
 * COMPONENTS_ID (`addComponentSchemas`), and a body's `$ref` is pointed there, so references
 * nested in a component (ExtensionDeclaration.schema -> Schema) resolve too. The app's ajv
 * neither coerces types nor inserts defaults (app.ts): a body is checked as sent, exactly as the
 * domain modules read it. `bodyErrorMessage` words ajv's first error for the surface's 400.
 */
import type { FastifyInstance } from 'fastify';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { STATIC_COMPONENTS } from './components.ts';
import type { ErrorShape, JsonSchema, RouteDoc } from './route-doc.ts';

/** The $id the document's component schemas are known by in Fastify's ajv. */
export const COMPONENTS_ID = 'urn:rollcall:openapi:components';

/** Adds the component schemas to this Fastify context (once: a parent's addition is inherited). */
export function addComponentSchemas(app: FastifyInstance): void {
  if (app.getSchema(COMPONENTS_ID) === undefined) app.addSchema({ $id: COMPONENTS_ID, components: { schemas: STATIC_COMPONENTS } });
}

/** A document schema as Fastify compiles it: a component `$ref` points into COMPONENTS_ID. */
const forAjv = (schema: JsonSchema): JsonSchema =>
  typeof schema.$ref === 'string' && schema.$ref.startsWith('#/') ? { ...schema, $ref: `${COMPONENTS_ID}${schema.$ref}` } : schema;

/** `schema.body` for a route that validates its body, else undefined. */
export function bodySchema(doc: RouteDoc): JsonSchema | undefined {
  if (!doc.validateBody || !doc.requestBody) return undefined;
  return { content: Object.fromEntries(Object.entries(doc.requestBody.content).map(([type, schema]) => [type, { schema: forAjv(schema) }])) };
}

/** `/schema/attributes/0` -> `schema.attributes[0]`. */
const fieldOf = (instancePath: string): string =>
  instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((out, p) => (/^\d+$/.test(p) ? `${out}[${p}]` : out === '' ? p : `${out}.${p}`), '');

const componentName = (schema: JsonSchema): string | undefined =>
  typeof schema.$ref === 'string' ? /^#\/components\/schemas\/([A-Za-z0-9]+)$/.exec(schema.$ref)?.[1] : undefined;

/**
 * The subschema at a body's instance path, walked from the route's requestBody schema through
 * properties, items and component references, with the component it belongs to (for the reader
 * to look up in /v2/openapi.json). ajv's schemaPath is not used: it is relative to whichever
 * referenced schema ajv compiled separately.
 */
function schemaAt(root: JsonSchema, instancePath: string): { schema?: JsonSchema; component?: string } {
  let schema: JsonSchema | undefined = root;
  let component: string | undefined;
  const follow = () => {
    const name = schema ? componentName(schema) : undefined;
    if (name) [schema, component] = [STATIC_COMPONENTS[name], name];
  };
  follow();
  for (const part of instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (!schema) break;
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    const additional: unknown = schema.additionalProperties;
    schema = /^\d+$/.test(part) && schema.items ? (schema.items as JsonSchema) : (properties?.[part] ?? (typeof additional === 'object' && additional !== null ? (additional as JsonSchema) : undefined));
    follow();
  }
  return { schema, component };
}

const TYPE_WORDS: Record<string, string> = { integer: 'an integer', number: 'a number', string: 'a string', boolean: 'true or false', object: 'a JSON object', array: 'an array', null: 'null' };

/** A schema's rule in words: "one of "set", "webhook"", "an integer from 0 to 604800", "an array of strings". */
function ruleOf(schema: JsonSchema | undefined): string | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t): t is string => typeof t === 'string');
  if (types.length === 0) return undefined;
  const [min, max] = [schema.minimum, schema.maximum];
  const range = typeof min === 'number' && typeof max === 'number' ? ` from ${min} to ${max}` : typeof min === 'number' ? ` of at least ${min}` : typeof max === 'number' ? ` of at most ${max}` : '';
  const items = (schema.items as JsonSchema | undefined)?.type;
  const words = types.map((t) => (t === 'array' && typeof items === 'string' ? `an array of ${items}s` : (TYPE_WORDS[t] ?? t)));
  return `must be ${words.join(' or ')}${range}`;
}

export interface BodyFailure {
  readonly message: string;
  /** The body's field that failed ('' for the body itself). */
  readonly field: string;
  /** The body is not an object at all (SCIM: invalidSyntax). */
  readonly syntax: boolean;
}

/** ajv's first error worded for the surface: the field, the rule, and where the schema is. */
export function bodyErrorMessage(errors: readonly FastifySchemaValidationError[], doc: RouteDoc): BodyFailure {
  const shape: ErrorShape = doc.errors;
  const first = errors[0];
  const params = (first?.params ?? {}) as Record<string, unknown>;
  const missing = first?.keyword === 'required' ? String(params.missingProperty ?? '') : undefined;
  const field = [fieldOf(first?.instancePath ?? ''), missing].filter(Boolean).join('.');
  const root = Object.values(doc.requestBody?.content ?? {})[0] ?? {};
  const at = schemaAt(root, first?.instancePath ?? '');
  const component = at.component;
  const see = component ? ` (${component} in /v2/openapi.json)` : '';
  if (shape === 'oauth') {
    // A form body holds strings; a parameter sent twice arrives as an array (RFC 6749 3.1 forbids it).
    if (missing) return { message: `The ${field} parameter is required`, field, syntax: false };
    if (first?.keyword === 'type' && field !== '') return { message: `The ${field.slice(0, 40)} parameter is repeated`, field, syntax: false };
    return { message: `The ${field === '' ? 'request body' : `${field.slice(0, 40)} parameter`} ${first?.message ?? 'is not valid'}${see}`, field, syntax: false };
  }
  if (field === '' && first?.keyword === 'type') return { message: 'The request body must be a JSON object', field, syntax: true };
  if (missing) return { message: `${field} is required${see}`, field, syntax: false };
  // Type, enum and range failures are worded from the schema; any other rule in ajv's words.
  const worded = ['type', 'enum', 'minimum', 'maximum'].includes(first?.keyword ?? '') ? ruleOf(at.schema) : undefined;
  const rule = worded ?? first?.message ?? 'is not valid';
  return { message: `${field || 'The request body'} ${rule}${see}`, field, syntax: false };
}
