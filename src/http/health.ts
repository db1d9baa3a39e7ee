/** Liveness and readiness, without a token: /healthz (the process answers), /readyz (the database answers). */
import type { FastifyInstance } from 'fastify';
import type { Storage } from '../storage/connect.ts';

/**
 * `rateLimits` says where the brute-force counters live: 'memory' (one instance), 'redis', or
 * 'degraded' while the configured Redis is unreachable (each instance then counts on its own;
 * still ready: sign-ins are limited, only less strictly across instances).
 */
export function registerHealth(app: FastifyInstance, storage: Storage, rateLimits: () => 'memory' | 'redis' | 'degraded' = () => 'memory'): void {
  app.get('/healthz', async (_request, reply) => reply.code(200).send({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    try {
      await storage.ping();
      return reply.code(200).send({ status: 'ready', database: storage.hooks.name, rateLimits: rateLimits() });
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable');
      return reply.code(503).send({ status: 'unavailable', database: storage.hooks.name });
    }
  });
}
