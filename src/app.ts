/**
 * The composition root: buildApp wires storage, clock and configuration into a Fastify instance
 * that never listens by itself (tests drive it with inject(); main.ts listens). Nothing here is
 * module-level state, so a test can build as many apps as it likes.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { systemClock } from './clock.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import { registerHealth } from './http/health.ts';
import { scimPlugin } from './http/scim-plugin.ts';
import type { Storage } from './storage/connect.ts';

export interface AppDeps {
  readonly config: Pick<Config, 'publicBaseUrl' | 'logLevel'>;
  readonly storage: Storage;
  readonly clock?: Clock;
}

export const BODY_LIMIT = 1024 * 1024;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const app = Fastify({
    logger:
      deps.config.logLevel === 'silent'
        ? false
        : {
            level: deps.config.logLevel,
            redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
          },
    bodyLimit: BODY_LIMIT,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // Ids and URNs are case-sensitive; paths such as /Users must match as written.
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: true, maxParamLength: 200 },
  });

  registerHealth(app, deps.storage);
  const scimOptions = { storage: deps.storage, clock, baseUrl: deps.config.publicBaseUrl };
  await app.register(scimPlugin, { ...scimOptions, prefix: '/v2/scim' });
  await app.register(scimPlugin, { ...scimOptions, prefix: '/scim' });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: 'not_found', detail: `No route ${request.method} ${request.url.split('?')[0]}` }),
  );
  return app;
}
