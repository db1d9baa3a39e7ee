/**
 * Readiness asks storage, not SQL: GET /readyz is 200 while `storage.ping()` resolves and 503
 * (`unavailable`, naming the engine) once it rejects, on every engine; a PostgreSQL server that
 * does not answer makes `ping()` reject.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/storage/connect.ts';
import { createTestApp, json } from '../support/app.ts';
import { engines } from '../support/engines.ts';

for (const engine of engines) {
  describe(`readiness on ${engine.name}`, () => {
    it('/readyz answers what storage.ping answers: 200 while it resolves, 503 once it rejects, the database itself untouched', async () => {
      let reachable = true;
      const t = await createTestApp({
        engine,
        wrapStorage: (storage) => ({
          ...storage,
          ping: () => (reachable ? storage.ping() : Promise.reject(new Error('the database does not answer'))),
        }),
      });
      try {
        const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 200);
        assert.deepEqual([json(ready).status, json(ready).database], ['ready', engine.name]);
        reachable = false;
        const down = await t.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(down.statusCode, 503);
        assert.deepEqual(json(down), { status: 'unavailable', database: engine.name });
        assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      } finally {
        await t.close();
      }
    });
  });
}

describe('storage.ping', () => {
  it('rejects when the PostgreSQL server does not answer (nothing listens on the port)', async () => {
    const storage = connect('postgres://postgres@127.0.0.1:1/none', { poolSize: 1, listen: { retryMs: 60_000, heartbeatMs: 60_000 } });
    try {
      await assert.rejects(storage.ping());
    } finally {
      await storage.close();
    }
  });
});
