/**
 * Issue 27 item 12: a body nested thousands of levels deep answered 500 (users.ts's
 * JSON.stringify, and every other recursive walk, overflowed the stack). Every JSON body of the
 * SCIM, admin and events APIs is measured on its text before it is parsed: deeper than
 * MAX_JSON_DEPTH levels is a 400 invalidSyntax in the protocol's shape (RFC 8936's for a poll),
 * and a body at the bound reaches the service, which judges it as usual.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/http/json-depth.ts';
import { createTestApp, json } from '../support/app.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** A JSON value `levels` objects deep, as text (built without recursion). */
const deep = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe('request bodies nested beyond the bound (issue 27 item 12)', () => {
  it('nestsDeeperThan counts objects and arrays, never brackets inside strings', () => {
    assert.equal(nestsDeeperThan(deep(MAX_JSON_DEPTH)), false);
    assert.equal(nestsDeeperThan(deep(MAX_JSON_DEPTH + 1)), true);
    assert.equal(nestsDeeperThan(`{"s":"${'['.repeat(500)}\\"${'{'.repeat(500)}"}`), false);
    assert.equal(nestsDeeperThan('['.repeat(65)), true, 'unbalanced text is measured too');
  });

  it('PUT, PATCH and POST with 5,000 levels answer 400 invalidSyntax, not 500; the server goes on; 64 levels reach the service', async () => {
    const t = await createTestApp();
    try {
      const send = (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: string, type = 'application/scim+json') =>
        t.app.inject({ method, url, headers: { authorization: `Bearer ${t.token}`, 'content-type': type }, payload });
      const created = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'ann@acme.example' });
      assert.equal(created.statusCode, 201);
      const id = String(json(created).id);
      const bodies: [string, 'POST' | 'PUT' | 'PATCH', string, (inner: string) => string][] = [
        ['PUT', 'PUT', `/v2/scim/Users/${id}`, (inner) => `{"schemas":["${USER}"],"userName":"ann@acme.example","password":"long-enough-pass","nickName":${inner}}`],
        ['PATCH', 'PATCH', `/v2/scim/Users/${id}`, (inner) => `{"schemas":["${PATCH}"],"Operations":[{"op":"replace","path":"password","value":${inner}}]}`],
        ['POST', 'POST', '/v2/scim/Users', (inner) => `{"schemas":["${USER}"],"userName":"bob@acme.example","password":${inner}}`],
        ['search', 'POST', '/v2/scim/.search', (inner) => `{"schemas":["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],"filter":${inner}}`],
      ];
      for (const [name, method, url, wrap] of bodies) {
        const refused = await send(method, url, wrap(deep(5000)));
        assert.equal(refused.statusCode, 400, `${name}: ${refused.body.slice(0, 300)}`);
        assert.equal(json(refused).scimType, 'invalidSyntax', name);
        assert.match(String(json(refused).detail), /deeper than 64 levels/);
        // At the bound (the wrapper's own levels included) the body is parsed and the service answers.
        const wrapperLevels = MAX_JSON_DEPTH - levelsOf(wrap('0'));
        const judged = await send(method, url, wrap(deep(wrapperLevels)));
        assert.notEqual(judged.statusCode, 500, `${name}: ${judged.body.slice(0, 300)}`);
        assert.doesNotMatch(judged.body, /deeper than/, name);
      }
      // The admin API and the events API bound their bodies too, each in its own shape.
      const schema = await send('POST', '/v2/admin/Schemas', `{"resourceType":"User","schema":${deep(5000)}}`, 'application/json');
      assert.equal(schema.statusCode, 400, schema.body.slice(0, 300));
      assert.equal(json(schema).scimType, 'invalidSyntax');
      const subscription = await send('POST', '/v2/events/subscriptions', `{"method":"poll","x":${deep(5000)}}`, 'application/json');
      assert.equal(subscription.statusCode, 400, subscription.body.slice(0, 300));
      assert.equal(json(subscription).scimType, 'invalidSyntax');
      const polled = await send('POST', '/v2/events/poll', `{"maxEvents":1,"x":${deep(5000)}}`, 'application/json');
      assert.equal(polled.statusCode, 400, polled.body.slice(0, 300));
      assert.equal(json(polled).err, 'invalid_request');
      // Nothing broke: an ordinary write still succeeds.
      assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'nickName', value: 'Ann' }] })).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});

/** The deepest nesting of a JSON text (for the tests' own wrappers). */
function levelsOf(text: string): number {
  let depth = 0;
  let most = 0;
  for (const c of text) {
    if (c === '{' || c === '[') most = Math.max(most, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return most;
}
