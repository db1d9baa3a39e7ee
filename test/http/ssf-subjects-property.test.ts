/**
 * SSF 1.0 section 8.1.3 over HTTP against an in-memory oracle: random subject identifiers (email
 * in any case, iss_sub of this or another issuer, opaque, scim by location and/or externalId,
 * aliases of these, complex subjects with a user, other formats, and malformed ones) are removed
 * from a stream; exactly the team's users the oracle says each names are marked removed, a
 * malformed subject is a 400 that marks nobody, and nothing is ever a 500. Runs on every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { subjectsOf } from '../../src/storage/repos/ssf-streams.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

interface Known {
  readonly id: string;
  readonly emails: readonly string[];
  readonly externalId: string | undefined;
}

type Subject = Record<string, unknown>;

/** The oracle: the users a subject names, or 'malformed' for what is no subject identifier. */
function named(subject: unknown, users: readonly Known[], nested = false): Set<string> | 'malformed' {
  if (typeof subject !== 'object' || subject === null || Array.isArray(subject)) return 'malformed';
  const s = subject as Subject;
  const text = (name: string) => (typeof s[name] === 'string' && s[name] !== '' ? (s[name] as string) : undefined);
  const ids = (match: (u: Known) => boolean) => new Set(users.filter(match).map((u) => u.id));
  switch (s.format) {
    case 'email': {
      const email = text('email');
      return email === undefined ? 'malformed' : ids((u) => u.emails.some((e) => e.toLowerCase() === email.toLowerCase()));
    }
    case 'iss_sub': {
      const iss = text('iss');
      const sub = text('sub');
      if (iss === undefined || sub === undefined) return 'malformed';
      return iss === BASE_URL ? ids((u) => u.id === sub) : new Set();
    }
    case 'opaque': {
      const id = text('id');
      return id === undefined ? 'malformed' : ids((u) => u.id === id);
    }
    case 'scim': {
      if ((s.uri !== undefined && text('uri') === undefined) || (s.externalId !== undefined && text('externalId') === undefined)) return 'malformed';
      const uri = text('uri');
      const externalId = text('externalId');
      if (uri === undefined && externalId === undefined) return 'malformed';
      const raw = uri === undefined ? undefined : /(?:^|\/)Users\/([^/?#]+)$/.exec(uri)?.[1];
      let byUri: string | undefined;
      try {
        byUri = raw === undefined ? undefined : decodeURIComponent(raw);
      } catch {
        return new Set();
      }
      if (uri !== undefined && byUri === undefined) return new Set();
      return ids((u) => (byUri === undefined || u.id === byUri) && (externalId === undefined || u.externalId === externalId));
    }
    case 'aliases': {
      if (nested || !Array.isArray(s.identifiers) || s.identifiers.length === 0 || s.identifiers.length > 20) return 'malformed';
      const all = new Set<string>();
      for (const i of s.identifiers) {
        const one = named(i, users, true);
        if (one === 'malformed') return 'malformed';
        for (const id of one) all.add(id);
      }
      return all;
    }
    case 'complex':
      if (nested) return 'malformed';
      return s.user === undefined ? new Set() : named(s.user, users, true);
    default:
      return typeof s.format === 'string' ? new Set() : 'malformed';
  }
}

for (const engine of engines) {
  describe(`SSF subjects against an oracle (${engine.name})`, () => {
    let t: TestApp;
    let token: string;
    const users: Known[] = [];
    before(async () => {
      t = await createTestApp({ engine });
      token = await t.tokenFor(t.team.id, ['ssf']);
      const made: [string, string[], string | undefined][] = [
        ['ann', ['Ann@Acme.example'], 'ext-1'],
        ['bob', ['bob@acme.example', 'shared@acme.example'], 'ext-2'],
        ['cy', ['shared@acme.example'], undefined],
        ['dee', [], 'ext-4'],
      ];
      for (const [userName, emails, externalId] of made) {
        const r = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName, emails: emails.map((value) => ({ value })), ...(externalId ? { externalId } : {}) });
        assert.equal(r.statusCode, 201, r.body);
        users.push({ id: String(json(r).id), emails, externalId });
      }
    });
    after(() => t.close());

    const call = (method: string, url: string, body?: unknown) =>
      t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });

    it('a removed subject marks exactly the users it names; a malformed one is a 400 that marks nobody; never a 500', async () => {
      const anyEmail = fc.oneof(fc.tuple(fc.constantFrom(...users.flatMap((u) => u.emails)), fc.boolean()).map(([e, upper]) => (upper ? e.toUpperCase() : e)), fc.constantFrom('nobody@acme.example', 'ann@acme.example'), fc.string());
      const anyId = fc.oneof(fc.constantFrom(...users.map((u) => u.id)), fc.string({ maxLength: 30 }));
      const simple: fc.Arbitrary<unknown> = fc.oneof(
        fc.record({ format: fc.constant('email'), email: anyEmail }),
        fc.record({ format: fc.constant('iss_sub'), iss: fc.constantFrom(BASE_URL, 'https://elsewhere.example'), sub: anyId }),
        fc.record({ format: fc.constant('opaque'), id: anyId }),
        fc.record(
          { format: fc.constant('scim'), uri: fc.oneof(anyId.map((id) => `/Users/${id}`), anyId.map((id) => `${BASE_URL}/v2/scim/Users/${encodeURIComponent(id)}`), fc.string()), externalId: fc.oneof(fc.constantFrom('ext-1', 'ext-2', 'ext-4', 'ext-9'), fc.integer()) },
          { requiredKeys: ['format'] },
        ),
        fc.record({ format: fc.constantFrom('phone_number', 'account', 'did'), value: fc.string() }),
        fc.record({ email: fc.string() }),
        fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 })),
      );
      const subject = fc.oneof(
        { weight: 4, arbitrary: simple },
        { weight: 2, arbitrary: fc.record({ format: fc.constant('aliases'), identifiers: fc.array(simple, { maxLength: 3 }) }) },
        { weight: 1, arbitrary: fc.record({ format: fc.constant('complex'), user: simple, tenant: fc.constant({ format: 'opaque', id: 't' }) }, { requiredKeys: ['format', 'tenant'] }) },
      );
      await fc.assert(
        fc.asyncProperty(subject, async (s) => {
          const created = await call('POST', '/v2/ssf/stream', {});
          assert.equal(created.statusCode, 201, created.body);
          const id = String(json(created).stream_id);
          try {
            const expected = named(s, users);
            const r = await call('POST', '/v2/ssf/subjects/remove', { stream_id: id, subject: s });
            assert.notEqual(r.statusCode, 500, r.body);
            const marked = (await subjectsOf(t.storage.db, id)).map((m) => [m.user_id, m.included]);
            if (expected === 'malformed') {
              assert.equal(r.statusCode, 400, `${JSON.stringify(s)}: ${r.body}`);
              assert.deepEqual(marked, []);
            } else {
              assert.equal(r.statusCode, 204, `${JSON.stringify(s)}: ${r.body}`);
              assert.deepEqual(marked, [...expected].sort().map((u) => [u, 0]), JSON.stringify(s));
            }
          } finally {
            assert.equal((await call('DELETE', `/v2/ssf/stream?stream_id=${id}`)).statusCode, 204);
          }
        }),
        { numRuns: 80, seed: 33 },
      );
    });
  });
}
