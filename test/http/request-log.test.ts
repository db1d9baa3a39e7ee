/**
 * Issue 12, item 3: the SCIM request log. Each authenticated SCIM request leaves a row (method,
 * path, status, scimType, latency, time, connection) with its body redacted and bounded; rows
 * are written in batches after the response, and kept 7 days or 10,000 per team.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { issueToken } from '../../src/admin.ts';
import { PRUNE_BATCH, pruneTeamRequestLog, requestLogEntries, RETENTION_ROWS } from '../../src/console/request-log.ts';
import { credentialName, redactBody as redactWith, redactFilter, redactUrlFilter, secretNames } from '../../src/http/log-redaction.ts';
import { MAX_BODY_CHARS } from '../../src/http/request-journal.ts';
import { insertRequestLog, pruneRequestLog, requestLogEdge } from '../../src/storage/repos/request-log.ts';
import { createTestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, registerAdmin } from '../support/oauth.ts';

/** Counts INSERTs into request_log. */
class Inserts implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'InsertQueryNode' && JSON.stringify(args.node).includes('"request_log"')) this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

for (const engine of engines) {
  describe(`request log (${engine.name})`, () => {
    it('records status, scimType, latency and connection, with passwords and secrets redacted, in batches', async () => {
      const inserts = new Inserts();
      const t = await createTestApp({ engine, wrapStorage: (s) => ({ ...s, db: s.db.withPlugin(inserts) }) });
      try {
        const admin = await registerAdmin(t);
        const issued = await issueToken(adminDeps(t), 'acme', admin.userName, { scope: ['read', 'write'], ttlSeconds: 3600, name: 'Okta <prod>' });
        const as = (method: string, url: string, body?: unknown) =>
          t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${issued.token}`, 'content-type': 'application/scim+json' }, ...(body ? { payload: JSON.stringify(body) } : {}) });
        const user = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ann@acme.example', password: 'hunter2-hunter2-hunter2' };
        assert.equal((await as('POST', '/v2/scim/Users', user)).statusCode, 201);
        assert.equal((await as('POST', '/v2/scim/Users', user)).statusCode, 409);
        const id = String((await as('GET', '/v2/scim/Users?filter=userName%20eq%20%22ann@acme.example%22')).json().Resources[0].id);
        await as('PATCH', `/v2/scim/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'password', value: 'another-long-password' }] });
        assert.equal((await as('GET', '/v2/scim/Users?filter=userName%20zz%20%22x%22')).statusCode, 400);
        for (let i = 0; i < 20; i++) await t.request('GET', '/v2/scim/Groups');
        assert.equal((await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: 'Bearer rc_at_nope' } })).statusCode, 401);
        await t.app.close(); // flushes
        assert.ok(inserts.count >= 1 && inserts.count <= 3, `${inserts.count} INSERTs for 25 requests: batched`);

        const all = await requestLogEntries(t.storage, t.team.id, { limit: 200 });
        assert.equal(all.entries.length, 25, 'the unauthenticated request is not in any team\'s log');
        const failed = await requestLogEntries(t.storage, t.team.id, { status: '4xx' });
        assert.deepEqual(failed.entries.map((e) => [e.method, e.status, e.scimType]), [['GET', 400, 'invalidFilter'], ['POST', 409, 'uniqueness']]);
        const conflict = failed.entries[1]!;
        assert.equal(conflict.connection, `token:${issued.id}`);
        assert.equal(conflict.connectionLabel, 'token "Okta <prod>"');
        assert.ok(conflict.latencyMs >= 0);
        assert.match(conflict.body ?? '', /ann@acme\.example/);
        const bodies = all.entries.map((e) => e.body ?? '').join('\n');
        for (const secret of ['hunter2', 'another-long-password']) assert.ok(!bodies.includes(secret), `${secret} is not in the log`);
        assert.match(bodies, /"password":"\[redacted\]"/);

        const byToken = await requestLogEntries(t.storage, t.team.id, { connection: `token:${issued.id}`, limit: 200 });
        assert.equal(byToken.entries.length, 5);
        const paged = await requestLogEntries(t.storage, t.team.id, { limit: 10 });
        const second = await requestLogEntries(t.storage, t.team.id, { limit: 10, before: paged.next! });
        assert.equal(new Set([...paged.entries, ...second.entries].map((e) => e.id)).size, 20);
        await assert.rejects(requestLogEntries(t.storage, t.team.id, { status: 'bad' }), /status is 2xx/);
      } finally {
        await t.close();
      }
    });

    it('issue 27 item 6: a password or a returned-never extension attribute leaves no trace in the log, however the PATCH spells its members, and a refused filter naming password neither', async () => {
      const t = await createTestApp({ engine });
      try {
        const registered = await t.request('POST', '/v2/admin/Schemas', {
          resourceType: 'User',
          schema: { id: 'urn:acme:params:scim:schemas:Vault:1.0:User', name: 'Vault', attributes: [{ name: 'pin', type: 'string', returned: 'never' }, { name: 'badge', type: 'complex', subAttributes: [{ name: 'code', type: 'string', returned: 'never' }, { name: 'label', type: 'string' }] }] },
        });
        assert.equal(registered.statusCode, 201, registered.body);
        const created = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ann@acme.example', password: 'secret-s00-long-enough' });
        assert.equal(created.statusCode, 201, created.body);
        const id = String(created.json().id);
        const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
        const VAULT = 'urn:acme:params:scim:schemas:Vault:1.0:User';
        const patches: [string, unknown][] = [
          ['secret-s01-long-enough', { schemas: [PATCH], Operations: [{ op: 'replace', Path: 'password', value: 'secret-s01-long-enough' }] }],
          ['secret-s02-long-enough', { schemas: [PATCH], Operations: [{ op: 'replace', PATH: 'password', VALUE: 'secret-s02-long-enough' }] }],
          ['secret-s03-long-enough', { schemas: [PATCH], operations: [{ OP: 'replace', Path: 'PassWord', Value: 'secret-s03-long-enough' }] }],
          ['secret-s04-long-enough', { schemas: [PATCH], Operations: [{ op: 'replace', value: { PassWord: 'secret-s04-long-enough' } }] }],
          ['secret-s05-long-enough', { schemas: [PATCH], Operations: [{ op: 'replace', path: 'urn:ietf:params:scim:schemas:core:2.0:User:password', value: 'secret-s05-long-enough' }] }],
          ['secret-s06-long-enough', { schemas: [PATCH], Operations: [{ op: 'replace', value: { 'urn:ietf:params:scim:schemas:core:2.0:User:PASSWORD': 'secret-s06-long-enough' } }] }],
          ['4242-s07', { schemas: [PATCH], Operations: [{ op: 'add', path: `${VAULT}:pin`, value: '4242-s07' }] }],
          ['4242-s08', { schemas: [PATCH], Operations: [{ op: 'add', value: { [VAULT]: { PIN: '4242-s08' } } }] }],
          ['4242-s09', { schemas: [PATCH], Operations: [{ op: 'add', Path: VAULT, value: { Pin: '4242-s09', badge: { code: '4242-s10', label: 'front door' } } }] }],
          ['4242-s11', { schemas: [PATCH], Operations: [{ op: 'replace', path: `${VAULT}:badge.code`, value: '4242-s11' }] }],
        ];
        for (const [secret, body] of patches) {
          const res = await t.request('PATCH', `/v2/scim/Users/${id}`, body);
          assert.ok(res.statusCode === 200 || res.statusCode === 204, `${secret}: ${res.statusCode} ${res.body}`);
        }
        // The password really changed: the variants are writes, not refused requests.
        const put = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ann@acme.example', PASSWORD: 'secret-s12-long-enough', [VAULT]: { pin: '4242-s13' } });
        assert.equal(put.statusCode, 200, put.body);
        // Refused or not, a filter naming password keeps its literal out of the log.
        const filter = (f: string) => `/v2/scim/Users?filter=${encodeURIComponent(f)}`;
        assert.equal((await t.request('GET', filter('password eq "secret-s14"'))).statusCode, 400);
        assert.equal((await t.request('GET', filter('userName eq "x" or PASSWORD sw secret-s15'))).statusCode, 400);
        assert.equal((await t.request('GET', filter(`${VAULT}:pin eq "4242-s16"`))).statusCode, 400);
        assert.equal((await t.request('POST', '/v2/scim/Users/.search', { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'password eq "secret-s17"' })).statusCode, 400);
        // Refused or answered, the root search's body is logged with its literal redacted (its member spelled `Filter`).
        await t.request('POST', '/v2/scim/.search', { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], Filter: 'emails[value eq "a" and password eq "secret-s18"]' });
        await t.app.close(); // flushes

        const rows = (await requestLogEntries(t.storage, t.team.id, { limit: 200 })).entries;
        assert.equal(rows.length, 1 + patches.length + 1 + 5, 'every request is logged');
        const stored = rows.map((e) => `${e.path}\n${e.body ?? ''}`).join('\n');
        for (const secret of ['secret-s0', 'secret-s1', '4242-s']) assert.ok(!stored.includes(secret), `no "${secret}" text in the log`);
        for (let n = 0; n <= 18; n++) assert.ok(!stored.includes(`s${String(n).padStart(2, '0')}`), `secret ${n} is not in the log`);
        // What is not secret stays readable.
        assert.match(stored, /ann@acme\.example/);
        assert.match(stored, /front door/);
        assert.match(stored, /filter=password%20eq%20%22%5Bredacted%5D%22/);
        assert.match(stored, /"emails\[value eq \\"a\\" and password eq \\"\[redacted\]\\"\]"/);
      } finally {
        await t.close();
      }
    });

    it('keeps 7 days or the newest rows per team, whichever is smaller; other teams untouched', async () => {
      const t = await createTestApp({ engine });
      try {
        const other = await t.addTeam('other');
        const row = (teamId: string, at: string, n: number) => ({
          id: `R${String(n).padStart(19, '0')}`, team_id: teamId, at, method: 'GET', path: '/v2/scim/Users', status: 200, scim_type: null, latency_ms: 1, client_id: null, token_hash: null, request_id: null, body: null,
        });
        const rows = [];
        for (let i = 0; i < 30; i++) rows.push(row(t.team.id, new Date(Date.parse('2026-01-10T00:00:00Z') + i * 1000).toISOString(), i));
        rows.push(row(t.team.id, '2026-01-01T00:00:00.000Z', 100));
        rows.push(row(other.team.id, '2026-01-01T00:00:00.000Z', 200));
        await insertRequestLog(t.storage.db, rows);
        assert.equal(await pruneRequestLog(t.storage.db, t.team.id, '2026-01-03T00:00:00.000Z', await requestLogEdge(t.storage.db, t.team.id, 10), 100), 21);
        const left = await requestLogEntries(t.storage, t.team.id, { limit: 200 });
        assert.deepEqual(left.entries.map((e) => e.id), rows.slice(20, 30).reverse().map((r) => r.id));
        assert.equal((await requestLogEntries(t.storage, other.team.id, { limit: 200 })).entries.length, 1);
      } finally {
        await t.close();
      }
    });

    it('prunes in bounded statements, oldest first, and lets other requests run between them (a team at 5,000 requests a second must not freeze the others once a minute)', async () => {
      const t = await createTestApp({ engine });
      try {
        const other = await t.addTeam('other');
        const row = (teamId: string, n: number) => ({
          id: `R${String(n).padStart(19, '0')}`, team_id: teamId, at: new Date(Date.parse('2026-01-10T00:00:00Z') + n).toISOString(), method: 'GET', path: '/v2/scim/Users', status: 200, scim_type: null, latency_ms: 1, client_id: null, token_hash: null, request_id: null, body: null,
        });
        const rows = Array.from({ length: 30 }, (_, i) => row(t.team.id, i));
        await insertRequestLog(t.storage.db, [...rows, row(other.team.id, 1_000_000)]);
        const ids = async (teamId: string) => (await requestLogEntries(t.storage, teamId, { limit: 200 })).entries.map((e) => e.id).reverse();
        // One statement removes at most `batch` rows, the oldest of those past the limits (the
        // edge: the newest row past the 10 newest, found once per pass).
        const edge = await requestLogEdge(t.storage.db, t.team.id, 10);
        assert.equal(edge?.id, rows[19]!.id);
        const prune = () => pruneRequestLog(t.storage.db, t.team.id, '2026-01-03T00:00:00.000Z', edge, 7);
        assert.equal(await prune(), 7);
        assert.deepEqual(await ids(t.team.id), rows.slice(7).map((r) => r.id));
        assert.equal(await prune(), 7);
        assert.equal(await prune(), 6);
        assert.equal(await prune(), 0);
        assert.deepEqual(await ids(t.team.id), rows.slice(20).map((r) => r.id));
        assert.deepEqual(await ids(other.team.id), [row(other.team.id, 1_000_000).id]);

        // The journal's prune: 3,000 rows past the limit go in statements of PRUNE_BATCH rows,
        // and the event loop turns between them (SQLite's statements are synchronous: one
        // statement deleting 300,000 rows held every team's requests for ~0.3 s).
        const many = Array.from({ length: RETENTION_ROWS + 3000 }, (_, i) => row(t.team.id, 100 + i));
        for (let i = 0; i < many.length; i += 500) await insertRequestLog(t.storage.db, many.slice(i, i + 500));
        let turns = 0;
        let turning = true;
        const turn = () => {
          turns++;
          if (turning) setImmediate(turn);
        };
        setImmediate(turn);
        const deleted = await pruneTeamRequestLog(t.storage, t.team.id, '2026-01-03T00:00:00.000Z');
        turning = false;
        assert.equal(deleted, 3000 + 10);
        assert.ok(turns >= Math.ceil(deleted / PRUNE_BATCH) - 1, `the event loop turned ${turns} times during ${Math.ceil(deleted / PRUNE_BATCH)} statements`);
        const left = await t.storage.db.selectFrom('request_log').select(['id']).where('team_id', '=', t.team.id).orderBy('at').orderBy('id').execute();
        assert.equal(left.length, RETENTION_ROWS);
        assert.equal(left[0]!.id, many[3000]!.id);
        assert.deepEqual(await ids(other.team.id), [row(other.team.id, 1_000_000).id]);
      } finally {
        await t.close();
      }
    });
  });
}

const redactBody = (body: unknown) => redactWith(body, credentialName, MAX_BODY_CHARS);

describe('redactBody', () => {
  it('bounds the size and redacts nested secrets and PATCH values of sensitive paths', () => {
    const big = redactBody({ members: Array.from({ length: 5000 }, (_, i) => ({ value: `user-${i}` })) })!;
    assert.ok(big.length <= MAX_BODY_CHARS + 20, String(big.length));
    const patch = redactBody({ Operations: [{ op: 'add', path: 'password', value: 'x1' }, { op: 'replace', value: { password: 'x2', 'urn:e:clientSecret': 'x3' } }] })!;
    assert.doesNotMatch(patch, /x1|x2|x3/);
    assert.equal(redactBody(undefined), null);
  });

  it('a filter naming a secret keeps no literal of that clause, whatever its form or position; other clauses stay', () => {
    const f = (text: string) => redactFilter(text, credentialName);
    assert.equal(f('password eq "a b" and userName eq "ann"'), 'password eq "[redacted]" and userName eq "ann"');
    assert.equal(f('"hunter2" eq PassWord'), '"[redacted]" eq [redacted]');
    assert.equal(f('password eq and'), 'password eq [redacted]', 'a value spelled like a joiner is still the value');
    assert.equal(f('password hunter2'), 'password [redacted]', 'no operator: every word but the name');
    assert.equal(f('password eq "unterminated'), 'password eq "[redacted]"');
    assert.equal(f('emails[type eq "work" and password eq x].value'), 'emails[type eq "work" and password eq [redacted]].value');
    // Names fold as the schema lookup folds them: the Kelvin sign is a "k" there, so here too.
    const pkey = secretNames(new Set(['pkey']));
    assert.doesNotMatch(redactWith({ Operations: [{ op: 'add', value: { 'urn:acme:X:p\u212Aey': 'k1' } }, { op: 'add', PATH: 'P\u212AEY', value: 'k2' }], 'to\u212Aen': 'k3' }, pkey, MAX_BODY_CHARS)!, /k1|k2|k3/);
    assert.equal(redactFilter('p\u212Aey eq "k4"', pkey), 'p\u212Aey eq "[redacted]"');
    assert.match(redactUrlFilter('/v2/scim/Users?count=2&filter=password+eq+%22hunter2%22', credentialName), /^\/v2\/scim\/Users\?count=2&filter=password%20eq%20%22%5Bredacted%5D%22$/);
  });
});
