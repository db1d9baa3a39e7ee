/**
 * The JSON body parser of the plugins that take `application/json` (events, SSF streams, SSF
 * poll): Fastify's own parser (prototype poisoning refused), after the nesting bound on the text
 * (json-depth.ts), and text no database stores (NUL, lone surrogates; unstorableText) refused
 * after it. Each plugin says how a refusal reads in its protocol.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unstorableText } from '../text.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';

/** Why a body is refused: nested too deep, not JSON, or holding text no database stores. */
export type JsonRefusal = 'depth' | 'syntax' | 'text';

export const JSON_REFUSALS: Readonly<Record<JsonRefusal, string>> = {
  depth: `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`,
  syntax: 'The request body is not valid JSON',
  text: 'The body holds text that is not valid Unicode or contains NUL characters',
};

/**
 * Registers the parser on `app`. `refuse` turns a refusal (with its message) into the error the
 * plugin answers; for `syntax`, undefined keeps Fastify's own error (its 400).
 */
export function addJsonBodyParser(app: FastifyInstance, refuse: (why: JsonRefusal, message: string, request: FastifyRequest) => Error | undefined): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (nestsDeeperThan(body as string)) {
      done(refuse('depth', JSON_REFUSALS.depth, request) ?? new Error(JSON_REFUSALS.depth), undefined);
      return;
    }
    parseJson(request, body as string, (error, parsed) => {
      if (error) return done(refuse('syntax', JSON_REFUSALS.syntax, request) ?? error, undefined);
      if (unstorableText(parsed) !== undefined) return done(refuse('text', JSON_REFUSALS.text, request) ?? new Error(JSON_REFUSALS.text), undefined);
      done(null, parsed);
    });
  });
}
