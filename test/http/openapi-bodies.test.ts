/**
 * Issue 34 item 1, request bodies: the events, admin and OAuth bodies are validated by Fastify
 * against the schemas /v2/openapi.json prints. A body breaking its schema answers in the
 * surface's own 400 (SCIM invalidValue, RFC 8936 invalid_request, RFC 6749 5.2 invalid_request
 * with Cache-Control: no-store) naming the field and the rule, and writes nothing; a valid body
 * passes; the schema each route validates with is the document's own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { COMPONENTS_ID } from '../../src/http/openapi/body-validation.ts';
import { STATIC_COMPONENTS } from '../../src/http/openapi/components.ts';
import { openapiPath } from '../../src/http/openapi/generator.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { basic, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const HR = 'urn:example:params:scim:schemas:extension:bodies:2.0:User';
const DECLARATION = { resourceType: 'User', schema: { id: HR, name: 'Bodies', attributes: [{ name: 'desk', type: 'string' }] } };
const FORM = 'application/x-www-form-urlencoded';

for (const engine of engines) {
  describe(`request bodies validated with the document's schemas (${engine.name})`, () => {
    let t: TestApp;
    let client: TestClient;
    before(async () => {
      t = await createTestApp({ engine });
      await t.app.ready();
      client = await registerClient(t);
    });
    after(() => t.close());

    const postJson = (url: string, body: unknown) => t.request('POST', url, body, { 'content-type': 'application/json' });
    const subscriptions = async () => (json(await t.request('GET', '/v2/events/subscriptions')).subscriptions as Record<string, unknown>[]).length;
    const scim400 = (res: { statusCode: number; body: string }, scimType: string, detail: RegExp) => {
      assert.equal(res.statusCode, 400, res.body);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      assert.deepEqual(body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
      assert.equal(body.scimType, scimType, res.body);
      assert.match(String(body.detail), detail);
    };

    it('the schema each body-validated route hands Fastify is the document\'s requestBody schema', async () => {
      const doc = json(await t.app.inject({ method: 'GET', url: '/v2/openapi.json' })) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>>; components: { schemas: Record<string, unknown> } };
      const validated = (t.app.openapiRoutes ?? []).filter((r) => r.doc?.validateBody);
      assert.deepEqual(
        validated.map((r) => `${r.method} ${r.url}`).sort(),
        ['POST /oauth/introspect', 'POST /oauth/revoke', 'POST /oauth/token', 'POST /v2/admin/Catalog/mappings', 'POST /v2/admin/Schemas', 'POST /v2/events/poll', 'POST /v2/events/subscriptions', 'POST /v2/events/subscriptions/:id/replay', 'POST /v2/events/subscriptions/:id/rotate-secret', 'POST /v2/ssf/poll/:streamId'],
      );
      for (const route of validated) {
        const printed = doc.paths[openapiPath(route.url)]?.[route.method.toLowerCase()]?.requestBody?.content;
        assert.ok(printed, `${route.url} has a requestBody`);
        const fastify = (route.body as { content: Record<string, { schema: { $ref: string } }> }).content;
        assert.deepEqual(Object.keys(fastify).sort(), Object.keys(printed).sort(), `${route.url}: every media type is validated`);
        for (const [type, { schema }] of Object.entries(printed)) {
          // The document's #/components/schemas/X is Fastify's <COMPONENTS_ID>#/components/schemas/X ...
          assert.equal(fastify[type]!.schema.$ref, `${COMPONENTS_ID}${schema.$ref}`, `${route.url} ${type}`);
          // ... and that id holds the very component objects the document prints.
          const name = schema.$ref.replace('#/components/schemas/', '');
          assert.deepEqual(doc.components.schemas[name], JSON.parse(JSON.stringify(STATIC_COMPONENTS[name])), name);
        }
      }
    });

    it('events: a body breaking its schema is a SCIM 400 naming the field and the rule, and creates nothing', async () => {
      const before = await subscriptions();
      scim400(await postJson('/v2/events/subscriptions', { url: 'https://receiver.example/h', events: 'not-a-list' }), 'invalidValue', /^events must be an array of strings \(SubscriptionCreate in \/v2\/openapi\.json\)$/);
      scim400(await postJson('/v2/events/subscriptions', { method: 'carrier-pigeon' }), 'invalidValue', /^method must be one of "push", "poll", null/);
      scim400(await postJson('/v2/events/subscriptions', { url: 'https://receiver.example/h', full: 'yes' }), 'invalidValue', /^full must be true or false/);
      scim400(await postJson('/v2/events/subscriptions', [1, 2]), 'invalidSyntax', /^The request body must be a JSON object$/);
      assert.equal(await subscriptions(), before, 'nothing was created');
      // Valid: created (and null counts as absent for method, as before).
      const created = await postJson('/v2/events/subscriptions', { url: 'https://receiver.example/h', method: null, format: 'webhook' });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(await subscriptions(), before + 1);

      const id = String(json(created).id);
      const row = () => t.storage.db.selectFrom('event_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const sealed = (await row()).webhook_secret;
      scim400(await postJson(`/v2/events/subscriptions/${id}/rotate-secret`, { overlapSeconds: 1.5 }), 'invalidValue', /^overlapSeconds must be an integer from 0 to 604800/);
      scim400(await postJson(`/v2/events/subscriptions/${id}/rotate-secret`, { overlapSeconds: '60' }), 'invalidValue', /^overlapSeconds must be an integer from 0 to 604800/);
      assert.equal((await row()).webhook_secret, sealed, 'the secret was not rotated');
      const rotated = await postJson(`/v2/events/subscriptions/${id}/rotate-secret`, { overlapSeconds: 60 });
      assert.equal(rotated.statusCode, 200, rotated.body);
      assert.notEqual((await row()).webhook_secret, sealed);

      const cursor = (await row()).cursor;
      scim400(await postJson(`/v2/events/subscriptions/${id}/replay`, {}), 'invalidValue', /^from is required \(ReplayRequest in \/v2\/openapi\.json\)$/);
      scim400(await postJson(`/v2/events/subscriptions/${id}/replay`, { from: '1' }), 'invalidValue', /^from must be an integer of at least 1/);
      scim400(await postJson(`/v2/events/subscriptions/${id}/replay`, { from: 0 }), 'invalidValue', /^from must be an integer of at least 1/);
      assert.equal((await row()).cursor, cursor, 'nothing was replayed');
      await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'bodies-user' });
      const replayed = await postJson(`/v2/events/subscriptions/${id}/replay`, { from: 1 });
      assert.equal(replayed.statusCode, 200, replayed.body);
    });

    it('events: who may change subscriptions is checked before the body (401 and 403 come first)', async () => {
      const none = await t.app.inject({ method: 'POST', url: '/v2/events/subscriptions', headers: { 'content-type': 'application/json' }, payload: { events: 7 } });
      assert.equal(none.statusCode, 401, none.body);
      const reader = await t.tokenFor(t.team.id, ['read']);
      const read = await t.app.inject({ method: 'POST', url: '/v2/events/subscriptions', headers: { 'content-type': 'application/json', authorization: `Bearer ${reader}` }, payload: { events: 7 } });
      assert.equal(read.statusCode, 403, read.body);
      const poll = await t.app.inject({ method: 'POST', url: '/v2/events/poll', headers: { 'content-type': 'application/json' }, payload: { maxEvents: 'ten' } });
      assert.equal(poll.statusCode, 401, poll.body);
      assert.equal(json(poll).err, 'authentication_failed');
    });

    it('poll: a body breaking PollRequest is RFC 8936 invalid_request; a valid one is answered', async () => {
      const sub = json(await postJson('/v2/events/subscriptions', { method: 'poll' }));
      const poll = (body: unknown) => t.app.inject({ method: 'POST', url: '/v2/events/poll', headers: { 'content-type': 'application/json', authorization: `Bearer ${String(sub.pollToken)}` }, payload: JSON.stringify(body) });
      const bad = await poll({ returnImmediately: 'soon' });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(json(bad).err, 'invalid_request');
      assert.match(String(json(bad).description), /^returnImmediately must be true or false or null/);
      const fine = await poll({ returnImmediately: true, maxEvents: null });
      assert.equal(fine.statusCode, 200, fine.body);
      assert.ok('sets' in json(fine));
    });

    it('admin: a declaration breaking ExtensionDeclaration (or the Schema it refers to) is a SCIM 400 and declares nothing', async () => {
      const count = async () => Number(json(await t.request('GET', '/v2/admin/Schemas')).totalResults);
      const before = await count();
      scim400(await t.request('POST', '/v2/admin/Schemas', { resourceType: 'Thing', schema: DECLARATION.schema }), 'invalidValue', /^resourceType must be one of "User", "Group", null/);
      scim400(await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User' }), 'invalidValue', /^schema is required \(ExtensionDeclaration/);
      // A rule of the referenced Schema component (ExtensionDeclaration.schema -> Schema): its id.
      scim400(await t.request('POST', '/v2/admin/Schemas', { schema: { attributes: DECLARATION.schema.attributes } }), 'invalidValue', /^schema\.id is required \(Schema in \/v2\/openapi\.json\)$/);
      scim400(await t.request('POST', '/v2/admin/Schemas', { ...DECLARATION, required: 'no' }), 'invalidValue', /^required must be true or false/);
      scim400(await t.request('POST', '/v2/admin/Schemas', [DECLARATION]), 'invalidSyntax', /^The request body must be a JSON object$/);
      assert.equal(await count(), before, 'nothing was declared');
      const created = await t.request('POST', '/v2/admin/Schemas', DECLARATION);
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(await count(), before + 1);
    });

    it('OAuth: a form breaking TokenRequest or TokenReference is RFC 6749 5.2 invalid_request, no-store, and issues or revokes nothing', async () => {
      const tokens = async () => (await t.storage.db.selectFrom('oauth_tokens').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n;
      const form = (url: string, payload: string) => t.app.inject({ method: 'POST', url, headers: { 'content-type': FORM, authorization: basic(client) }, payload });
      const invalid = (res: { statusCode: number; body: string; headers: Record<string, unknown> }, description: RegExp) => {
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json(res as never).error, 'invalid_request');
        assert.match(String(json(res as never).error_description), description);
        assert.equal(res.headers['cache-control'], 'no-store');
      };
      const before = await tokens();
      invalid(await form('/oauth/token', 'scope=read'), /^The grant_type parameter is required$/);
      invalid(await form('/oauth/token', 'grant_type=client_credentials&grant_type=password'), /^The grant_type parameter is repeated$/);
      // Unknown parameters are ignored (RFC 6749 3.1), but none may be repeated either.
      invalid(await form('/oauth/token', 'grant_type=client_credentials&colour=red&colour=blue'), /^The colour parameter is repeated$/);
      assert.equal(await tokens(), before, 'nothing was issued');
      invalid(await form('/oauth/revoke', 'token_type_hint=access_token'), /^The token parameter is required$/);
      invalid(await form('/oauth/introspect', 'token=a&token=b'), /^The token parameter is repeated$/);
      // Valid forms pass the schema and reach the endpoints (an unknown parameter is ignored).
      const introspected = await form('/oauth/introspect', `token=${t.token}&colour=red`);
      assert.equal(introspected.statusCode, 200, introspected.body);
      assert.equal(typeof json(introspected).active, 'boolean');
      const granted = await form('/oauth/token', 'grant_type=client_credentials&colour=red');
      // This client has no team, so the grant itself refuses it: the form got past the schema.
      assert.equal(json(granted).error, 'unauthorized_client', granted.body);
    });
  });
}
