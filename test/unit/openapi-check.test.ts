/**
 * The response checker (test/support/openapi-check.ts): a response the document does not
 * describe is a mismatch, and a test file with a mismatch fails under node's test runner.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { forgetDocument, installSocketCheck, mismatches, ResponseChecker, stats } from '../support/openapi-check.ts';
import { eventsDocs } from '../../src/http/openapi/routes-other.ts';
import { createTestApp } from '../support/app.ts';
import { until } from '../support/wait.ts';

describe('the OpenAPI response checker', () => {
  it('accepts the server\'s answers and refuses undeclared statuses and wrong bodies', async () => {
    const t = await createTestApp();
    try {
      const checker = new ResponseChecker((await t.app.inject({ method: 'GET', url: '/v2/openapi.json' })).json());
      const scim = 'application/scim+json';
      assert.deepEqual(checker.check('GET', '/v2/scim/Users/x', 404, scim, JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404', detail: 'no' })), []);
      assert.match(checker.check('GET', '/v2/scim/Users/x', 418, scim, '{}')![0]!, /status 418 is not declared/);
      assert.match(checker.check('GET', '/v2/scim/Users/x', 200, scim, JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], id: 'x', userName: 5 }))![0]!, /userName/);
      assert.match(checker.check('GET', '/v2/scim/Users', 200, scim, JSON.stringify({ Resources: [] }))![0]!, /totalResults|schemas/);
      assert.match(checker.check('POST', '/oauth/token', 400, 'application/json', JSON.stringify({ error_description: 'no error field' }))![0]!, /error/);
      assert.equal(checker.check('GET', '/console', 200, 'text/html', '<html>'), undefined, 'paths outside the document are skipped');
    } finally {
      await t.close();
    }
  });

  it('fails a test file whose app answers something the document does not declare', () => {
    const run = spawnSync(process.execPath, ['--test', '--test-reporter=spec', 'test/support/fixtures/openapi-mismatch.fixture.ts'], { encoding: 'utf8', env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT')), OPENAPI_CHECK_REPORT: '1' } });
    assert.notEqual(run.status, 0, run.stdout);
    assert.match(run.stdout + run.stderr, /do not match the OpenAPI document/);
  });

  it('checks answers over real sockets too: a wrong body served to fetch is a mismatch', async () => {
    const t = await createTestApp();
    t.app.post('/v2/events/subscriptions/:id/socket-probe', { config: { openapi: { ...eventsDocs.rotateSecret, operationId: 'socketProbe' } } }, async (_request, reply) => reply.code(200).send({ wrong: true }));
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    installSocketCheck(t.app, t.app.server);
    // This app's document describes the probe route; the next answer loads it.
    forgetDocument();
    try {
      const { port } = t.app.server.address() as { port: number };
      const before = { checked: stats.checked, mismatches: mismatches.length };
      const res = await fetch(`http://127.0.0.1:${port}/v2/events/subscriptions/x/socket-probe`, { method: 'POST' });
      assert.equal(res.status, 200);
      await res.text();
      // Checked after the answer is sent, once the document is built again (slow on a loaded host).
      await until(() => stats.checked > before.checked, 'the socket answer to be checked');
      assert.equal(stats.checked, before.checked + 1, 'the socket answer was checked');
      const found = mismatches.splice(before.mismatches);
      assert.ok(found.some((m) => m.request.includes('socket-probe') && /required property/.test(m.problem)), JSON.stringify(found));
    } finally {
      forgetDocument();
      await t.close();
    }
  });
});
