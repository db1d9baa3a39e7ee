/** Liveness and readiness, without a token: /healthz (the process answers), /readyz (the database answers). */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Storage } from '../storage/connect.ts';

export function registerHealth(app: FastifyInstance, storage: Storage): void {
  app.get('/healthz', async (_request, reply) => reply.code(200).send({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    try {
      await sql`select 1`.execute(storage.db);
      return reply.code(200).send({ status: 'ready', database: storage.hooks.name });
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable');
      return reply.code(503).send({ status: 'unavailable', database: storage.hooks.name });
    }
  });
}
