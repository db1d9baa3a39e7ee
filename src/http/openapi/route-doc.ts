/**
 * How a public route declares itself: one RouteDoc per route, kept in the routes-*.ts files
 * beside this one and handed to Fastify by `documented()`. The parameter schemas go into Fastify's
 * `schema.params` / `schema.querystring`, so Fastify's ajv validates requests against exactly what
 * the OpenAPI document (generator.ts) says. A route that sets `validateBody` (the events, admin and
 * OAuth bodies) has its requestBody schemas validated by Fastify too (body-validation.ts); the
 * domain modules still check what JSON Schema cannot say. SCIM resource, PatchOp and SearchRequest
 * bodies are validated by the SCIM domain (case-insensitive attribute names, PATCH paths), so their
 * schemas are documentation only. Response descriptions live under `config.openapi`, never in
 * Fastify's `schema.response` (that would serialize replies with fast-json-stringify and drop
 * properties the schema does not name, such as SCIM extension attributes).
 */
import type { FastifySchemaValidationError, SchemaErrorDataVar } from 'fastify/types/schema.js';
import { bodyErrorMessage, bodySchema } from './body-validation.ts';

export type JsonSchema = Record<string, unknown>;

/** OpenAPI security requirements: any one of them suffices; {} means no credential. */
export type Security = readonly Readonly<Record<string, readonly string[]>>[];

/** Which error body a surface answers with (SCIM RFC 7644 3.12, OAuth RFC 6749 5.2, RFC 8936 poll). */
export type ErrorShape = 'scim' | 'oauth' | 'poll';

export interface ResponseDoc {
  readonly description: string;
  /** Media type -> schema; absent for bodiless answers (204, 304). */
  readonly content?: Readonly<Record<string, JsonSchema>>;
  readonly headers?: Readonly<Record<string, { readonly description: string; readonly schema: JsonSchema }>>;
}

export interface RouteDoc {
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly operationId: string;
  /** OpenAPI security requirements; [] for a public route. */
  readonly security: Security;
  /** Path parameters as one object schema (validated by Fastify). */
  readonly params?: JsonSchema;
  /** Query parameters as one object schema (validated by Fastify). */
  readonly querystring?: JsonSchema;
  /** Header parameters, documentation only (If-Match, If-None-Match). */
  readonly headers?: readonly { readonly name: string; readonly description: string; readonly schema: JsonSchema }[];
  /** Request body: documentation only unless validateBody (the domain module validates it too). */
  readonly requestBody?: { readonly required: boolean; readonly description?: string; readonly content: Readonly<Record<string, JsonSchema>> };
  /** Fastify validates the body against requestBody's schema of its media type (body-validation.ts). */
  readonly validateBody?: boolean;
  readonly responses: Readonly<Record<string, ResponseDoc>>;
  /** The error shape of validation failures (and the surface's error responses). */
  readonly errors: ErrorShape;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's OpenAPI declaration (route-doc.ts); public routes carry one. */
    openapi?: RouteDoc;
  }
}

/**
 * The error a failed Fastify validation becomes; the plugin's error handler renders it.
 * `syntax`: the body is not an object at all (SCIM answers invalidSyntax).
 */
export type ValidationErrorFactory = (message: string, parameter: string, syntax?: boolean) => Error;

/**
 * Route options for a declared route: the parameter schemas Fastify validates with, the
 * declaration itself under config.openapi, and a formatter that turns ajv's errors into the
 * surface's own error (`invalid`), so a validation failure answers in the protocol's shape.
 */
export function documented(doc: RouteDoc, invalid: ValidationErrorFactory) {
  const body = bodySchema(doc);
  return {
    schema: {
      ...(doc.params ? { params: doc.params } : {}),
      ...(doc.querystring ? { querystring: doc.querystring } : {}),
      ...(body ? { body } : {}),
    },
    config: { openapi: doc },
    schemaErrorFormatter: (errors: FastifySchemaValidationError[], dataVar: SchemaErrorDataVar): Error => {
      if (dataVar === 'body') {
        const failure = bodyErrorMessage(errors, doc);
        return invalid(failure.message, failure.field, failure.syntax);
      }
      const first = errors[0];
      const parameter = (first?.instancePath ?? '').replace(/^\//, '').split('/')[0] || String(first?.params?.missingProperty ?? '');
      const where = dataVar === 'params' ? 'path parameter' : dataVar === 'querystring' ? 'query parameter' : dataVar;
      return invalid(`The ${where} ${parameter} ${first?.message ?? 'is not valid'}`, parameter);
    },
  };
}
