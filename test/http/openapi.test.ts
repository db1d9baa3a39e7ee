/**
 * GET /v2/openapi.json: the document validates as OpenAPI 3.1 (anonymous and with a team's
 * token carrying an extension), describes every public route the app registered, shows a team's
 * extension once declared, and route parameters failing their schemas answer in the protocol's shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { PUBLIC, openapiPath } from '../../src/http/openapi/generator.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const EXT = 'urn:example:params:scim:schemas:extension:acme:2.0:User';
const extension = {
  resourceType: 'User',
  required: false,
  schema: {
    id: EXT,
    name: 'AcmeUser',
    description: 'Acme attributes',
    attributes: [{ name: 'badgeNumber', type: 'string', multiValued: false, description: 'Badge', required: false, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'none' }],
  },
};

async function valid(doc: unknown): Promise<void> {
  const result = await new Validator().validate(doc as Parameters<Validator['validate']>[0]);
  assert.deepEqual(result, { valid: true });
}

describe('GET /v2/openapi.json', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => t.close());

  it('answers a valid OpenAPI 3.1 document without a token, cached, with the core schemas and security schemes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['cache-control'], 'public, max-age=300');
    const doc = json(res) as { openapi: string; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { flows?: { clientCredentials?: { tokenUrl: string } } }> } };
    assert.equal(doc.openapi, '3.1.0');
    await valid(doc);
    for (const name of ['User', 'Group', 'EnterpriseUser', 'ScimError', 'OAuthError', 'ListResponse', 'PatchOp', 'SearchRequest', 'TokenResponse', 'IntrospectionResponse', 'EventPage', 'SubscriptionCreate', 'SecretRotated']) {
      assert.ok(doc.components.schemas[name], name);
    }
    assert.equal(doc.components.securitySchemes.oauth2?.flows?.clientCredentials?.tokenUrl, 'https://rollcall.test/oauth/token');
    assert.ok(!JSON.stringify(doc).includes(EXT));
    const again = await t.app.inject({ method: 'GET', url: '/v2/openapi.json', headers: { 'if-none-match': String(res.headers.etag) } });
    assert.equal(again.statusCode, 304);
    // Deterministic: the same bytes again.
    const third = await t.app.inject({ method: 'GET', url: '/v2/openapi.json' });
    assert.equal(third.payload, res.payload);
  });

  it('describes every public route the app registers', async () => {
    await t.app.ready();
    // Every route Fastify has, read from its route tree (full paths rebuilt from the indentation).
    const registered: string[] = [];
    const stack: string[] = [];
    for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^((?:│   |    )*)(?:├── |└── )(\S+)(?: \(([^)]*)\))?$/.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 4;
      stack.length = depth;
      const path = `${depth > 0 ? stack[depth - 1] : ''}${m[2]}`;
      stack.push(path);
      for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD')) registered.push(`${method} ${openapiPath(path)}`);
    }
    const doc = json(await t.app.inject({ method: 'GET', url: '/v2/openapi.json' })) as { paths: Record<string, Record<string, unknown>> };
    const described = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) for (const method of Object.keys(ops)) described.add(`${method.toUpperCase()} ${path}`);
    const publicRoutes = registered.filter((r) => PUBLIC.test(r.split(' ')[1]!));
    assert.ok(publicRoutes.length >= 45, `found ${publicRoutes.length} public routes`);
    for (const route of publicRoutes) assert.ok(described.has(route), `${route} is in the document`);
    assert.equal(described.size, new Set(publicRoutes).size, 'nothing else is described');
    assert.ok(![...described].some((s) => s.includes('/console') || s.includes('/oauth/authorize') || s.includes('/metrics')), 'no HTML pages, no metrics');
  });

  it('with a team token, includes the team\'s declared extension; an invalid token is a SCIM 401', async () => {
    const added = await t.request('POST', '/v2/admin/Schemas', extension);
    assert.equal(added.statusCode, 201, added.payload);
    const res = await t.request('GET', '/v2/openapi.json');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'private, max-age=60');
    const doc = json(res) as { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };
    await valid(doc);
    const user = doc.components.schemas.User!;
    assert.ok(user.properties?.[EXT], 'User names the extension');
    const ext = Object.values(doc.components.schemas).find((s) => JSON.stringify(s).includes('badgeNumber'));
    assert.ok(ext, 'the extension\'s attributes are described');
    const anon = await t.app.inject({ method: 'GET', url: '/v2/openapi.json' });
    assert.ok(!anon.payload.includes(EXT), 'the anonymous document stays without it');
    // Replies are serialized as before (no response schema strips what the document does not name).
    const created = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', EXT], userName: 'badge.holder', [EXT]: { badgeNumber: 'B-7' } });
    assert.equal(created.statusCode, 201, created.payload);
    const read = await t.request('GET', `/v2/scim/Users/${String(json(created).id)}`);
    assert.deepEqual(json(read)[EXT], { badgeNumber: 'B-7' });
    const bad = await t.app.inject({ method: 'GET', url: '/v2/openapi.json', headers: { authorization: 'Bearer nope' } });
    assert.equal(bad.statusCode, 401);
    assert.deepEqual(json(bad).schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  });

  it('a query parameter that fails its schema is a SCIM 400 under /v2/scim and /v2/events', async () => {
    const scim = await t.request('GET', '/v2/scim/Users?count=1&count=2');
    assert.equal(scim.statusCode, 400);
    assert.equal(json(scim).scimType, 'invalidValue');
    assert.deepEqual(json(scim).schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
    const cursor = await t.request('GET', '/scim/Users?cursor=a&cursor=b');
    assert.equal(cursor.statusCode, 400);
    assert.equal(json(cursor).scimType, 'invalidCursor');
    const events = await t.request('GET', '/v2/events?limit=1&limit=2');
    assert.equal(events.statusCode, 400);
    assert.equal(json(events).scimType, 'invalidValue');
    // Repeated attribute lists are still accepted, joined as today.
    const joined = await t.request('GET', '/v2/scim/Users?attributes=userName&attributes=active');
    assert.equal(joined.statusCode, 200);
  });
});
