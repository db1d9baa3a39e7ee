/**
 * `rollcall client key ...` and `rollcall client federation ...` as an operator runs them, on
 * every engine (DESIGN.md section 11, RFC 7523 2.2): a JWK Set file is registered only with
 * public signing keys of the accepted types, a key set's URL and an issuer are https (http only on
 * loopback), federated credentials are for team-bound clients only and default their audience to
 * the client id, each team's budget `client.credentials` caps them, and every change is audited.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall } from '../support/processes.ts';

const ENTRA_TENANT = 'ce5f061f-abe6-4e40-9615-301f87bcb7f0';
const ENTRA_ISSUER = `https://login.microsoftonline.com/${ENTRA_TENANT}/v2.0`;

const databases: { name: string; open(dir: string): Promise<{ url: string; drop(): Promise<void> }> }[] = [
  { name: 'sqlite', open: async (dir) => ({ url: `sqlite:${join(dir, 'trust.db')}`, drop: async () => {} }) },
  ...(postgresUrl ? [{ name: 'postgres', open: async () => createPgSchema(postgresUrl!) }] : []),
];

for (const engine of databases) {
  describe(`rollcall client key and client federation (${engine.name})`, () => {
    let dir: string;
    let database: string;
    let drop: () => Promise<void>;
    let teamClient: string;
    let loneClient: string;
    const run = (args: string[]) => rollcall([...args, '--database', database]);
    const ok = (args: string[]) => {
      const out = run([...args, '--json']);
      assert.equal(out.code, 0, out.stderr);
      return JSON.parse(out.stdout) as Record<string, unknown> & Record<string, unknown>[];
    };
    const refused = (args: string[], message: RegExp) => {
      const out = run(args);
      assert.equal(out.code, 1, out.stdout);
      assert.match(out.stderr, message);
    };
    const file = (name: string, content: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
      return path;
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rollcall-client-trust-'));
      const opened = await engine.open(dir);
      database = opened.url;
      drop = opened.drop;
      assert.equal(run(['team', 'create', '--name', 'acme']).code, 0);
      teamClient = String(ok(['client', 'create', '--name', 'Entra provisioning', '--team', 'acme']).clientId);
      loneClient = String(ok(['client', 'create', '--name', 'Portal', '--redirect-uri', 'https://portal.example/cb']).clientId);
    });
    after(async () => {
      await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('client key add --jwks registers public RS256/ES256 keys; list shows their kids; remove takes one away', async () => {
      const rsa = await exportJWK((await generateKeyPair('RS256', { extractable: true })).publicKey);
      const ec = await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey);
      const path = file('jwks.json', { keys: [{ ...rsa, kid: 'rsa-1', use: 'sig', alg: 'RS256' }, { ...ec, kid: 'ec-1' }] });
      const added = ok(['client', 'key', 'add', '--client', teamClient, '--jwks', path]);
      assert.match(String(added.id), /^[A-Z0-9]{20}$/);
      assert.deepEqual(added.kids, ['rsa-1', 'ec-1']);
      const human = run(['client', 'key', 'add', '--client', loneClient, '--jwks', path]);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, new RegExp(`registered for client ${loneClient}\\n[A-Z0-9]{20}  keys rsa-1,ec-1  added `));
      const uri = ok(['client', 'key', 'add', '--client', teamClient, '--jwks-uri', 'https://keys.example/jwks.json']);
      assert.equal(uri.jwksUri, 'https://keys.example/jwks.json');
      const listed = ok(['client', 'key', 'list', '--client', teamClient]);
      assert.deepEqual(listed.map((k) => k.id), [added.id, uri.id]);
      const removed = ok(['client', 'key', 'remove', '--client', teamClient, '--id', String(uri.id)]);
      assert.equal(removed.removed, true);
      assert.deepEqual(ok(['client', 'key', 'list', '--client', teamClient]).map((k) => k.id), [added.id]);
      refused(['client', 'key', 'remove', '--client', teamClient, '--id', String(uri.id)], /has no key set/);
      const audit = ok(['audit', 'list', '--team', 'acme']).map((e) => e.action);
      assert.ok(audit.includes('client_key_added') && audit.includes('client_key_removed'), audit.join(','));
    });

    it('client key add refuses private keys, encryption keys, symmetric keys, weak RSA, more than 10 keys, a plain-http URL, and both sources', async () => {
      const pair = await generateKeyPair('RS256', { extractable: true });
      const privateJwk = await exportJWK(pair.privateKey);
      const publicJwk = await exportJWK(pair.publicKey);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('private.json', { keys: [privateJwk] })], /private key material/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('enc.json', { keys: [{ ...publicJwk, use: 'enc' }] })], /not a signing key/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('oct.json', { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] })], /private key material|key type/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('hs.json', { keys: [{ ...publicJwk, alg: 'HS256' }] })], /RS256 or PS256/);
      const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('weak.json', { keys: [weak] })], /at least 2048 bits/);
      const many = Array.from({ length: 11 }, (_, i) => ({ ...publicJwk, kid: `k${i}` }));
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('many.json', { keys: many })], /at most 10 keys/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('twins.json', { keys: [publicJwk, publicJwk] })], /its own "kid"/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks', file('bad.json', 'not json')], /not JSON/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks-uri', 'http://keys.example/jwks.json'], /must use https/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks-uri', 'https://keys.example/jwks.json', '--jwks', file('one.json', { keys: [publicJwk] })], /exactly one of/);
      refused(['client', 'key', 'add', '--client', 'NOSUCHCLIENT00000000', '--jwks', file('one.json', { keys: [publicJwk] })], /no client with id/);
    });

    it('client federation add trusts an issuer and subject for a team-bound client; the audience defaults to the client id', () => {
      const added = ok(['client', 'federation', 'add', '--client', teamClient, '--issuer', ENTRA_ISSUER, '--subject', 'd2f8ee76-c549-45b8-a143-f5b640669704']);
      assert.equal(added.issuer, ENTRA_ISSUER);
      assert.equal(added.audience, teamClient);
      assert.equal(added.jwksUri, null);
      const withAudience = ok(['client', 'federation', 'add', '--client', teamClient, '--issuer', ENTRA_ISSUER, '--subject', 'another-object-id', '--audience', 'api://b5ba7a93-4452-4522-aeb4-a2b5da870c16', '--jwks-uri', `https://login.microsoftonline.com/${ENTRA_TENANT}/discovery/v2.0/keys`]);
      assert.equal(withAudience.audience, 'api://b5ba7a93-4452-4522-aeb4-a2b5da870c16');
      const human = run(['client', 'federation', 'list', '--client', teamClient]);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, new RegExp(`${added.id}  issuer ${ENTRA_ISSUER.replaceAll('.', '\\.')}  subject d2f8ee76-c549-45b8-a143-f5b640669704  audience ${teamClient}  keys from the issuer's OpenID configuration`));
      refused(['client', 'federation', 'add', '--client', teamClient, '--issuer', ENTRA_ISSUER, '--subject', 'd2f8ee76-c549-45b8-a143-f5b640669704'], /already trusts that issuer/);
      refused(['client', 'federation', 'add', '--client', loneClient, '--issuer', ENTRA_ISSUER, '--subject', 'x'], /bound to no team/);
      refused(['client', 'federation', 'add', '--client', teamClient, '--issuer', 'http://login.example/tenant', '--subject', 'x'], /--issuer: .*must use https/);
      refused(['client', 'federation', 'add', '--client', teamClient, '--issuer', ENTRA_ISSUER, '--subject', ' padded '], /--subject is 1-200 characters/);
      ok(['client', 'federation', 'remove', '--client', teamClient, '--id', String(withAudience.id)]);
      assert.deepEqual(ok(['client', 'federation', 'list', '--client', teamClient]).map((f) => f.id), [added.id]);
      const audit = ok(['audit', 'list', '--team', 'acme']).map((e) => e.action);
      assert.ok(audit.includes('client_federation_added') && audit.includes('client_federation_removed'), audit.join(','));
    });

    it("the team's budget client.credentials caps its clients' federated credentials and key sets together", () => {
      const held = ok(['client', 'key', 'list', '--client', teamClient]).length + ok(['client', 'federation', 'list', '--client', teamClient]).length;
      assert.equal(run(['team', 'update', '--name', 'acme', '--limit', `client.credentials=${held + 1}`]).code, 0);
      ok(['client', 'federation', 'add', '--client', teamClient, '--issuer', ENTRA_ISSUER, '--subject', 'within-budget']);
      refused(['client', 'federation', 'add', '--client', teamClient, '--issuer', ENTRA_ISSUER, '--subject', 'over-budget'], /budget "client.credentials" is \d+/);
      refused(['client', 'key', 'add', '--client', teamClient, '--jwks-uri', 'https://keys.example/other.json'], /budget "client.credentials"/);
    });
  });
}
