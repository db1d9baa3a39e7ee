/**
 * RFC 7523 3 item 7 across instances: an accepted assertion's id is remembered in the database
 * until the assertion expires, so a replay to a second instance on the same PostgreSQL is refused
 * as surely as one to the first. Two `rollcall serve` processes share one schema; the client's
 * trust is registered with the CLI, as an operator would. A federated assertion (the Entra
 * stand-in, keys found through its OpenID configuration) gets a token from one instance that the
 * other serves SCIM with.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { JWT_BEARER } from '../../src/oauth/assertion-auth.ts';
import { jwksOf, keyPair } from '../support/assertions.ts';
import type { TestKeyPair } from '../support/assertions.ts';
import { EntraStandIn } from '../support/entra-standin.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall, scim, seedTeamToken, startServer, TEST_PUBLIC_BASE_URL } from '../support/processes.ts';
import type { ServerProcess } from '../support/processes.ts';

async function tokenRequest(base: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('client assertions on two instances of one PostgreSQL', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let schema: { url: string; drop(): Promise<void> };
  let servers: ServerProcess[];
  let dir: string;
  let entra: EntraStandIn;
  let clientId: string;
  let key: TestKeyPair;

  before(async () => {
    schema = await createPgSchema(postgresUrl!);
    dir = mkdtempSync(join(tmpdir(), 'rollcall-assertions-'));
    await seedTeamToken(schema.url);
    entra = await EntraStandIn.start(() => new Date());
    const created = rollcall(['client', 'create', '--name', 'Entra provisioning', '--team', 'acme', '--json', '--database', schema.url]);
    assert.equal(created.code, 0, created.stderr);
    clientId = String(JSON.parse(created.stdout).clientId);
    key = await keyPair('ES256');
    const jwks = join(dir, 'jwks.json');
    writeFileSync(jwks, jwksOf(key));
    const added = rollcall(['client', 'key', 'add', '--client', clientId, '--jwks', jwks, '--database', schema.url]);
    assert.equal(added.code, 0, added.stderr);
    const federated = rollcall(['client', 'federation', 'add', '--client', clientId, '--issuer', entra.issuer, '--subject', entra.objectId, '--database', schema.url]);
    assert.equal(federated.code, 0, federated.stderr);
    servers = await Promise.all([startServer(schema.url), startServer(schema.url)]);
  });
  after(async () => {
    await Promise.all((servers ?? []).map((s) => s.stop()));
    await entra?.close();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('RFC 7523 3 item 7: a private_key_jwt assertion accepted by one instance is refused by the other', async () => {
    const [a, b] = servers.map((s) => s.url) as [string, string];
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(`${TEST_PUBLIC_BASE_URL}/oauth/token`)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(key.privateKey);
    const form = { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER, client_assertion: assertion };
    const first = await tokenRequest(a, form);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const replayed = await tokenRequest(b, form);
    assert.equal(replayed.status, 401);
    assert.equal(replayed.body.error, 'invalid_client');
    assert.equal((await scim(b, String(first.body.access_token), 'GET', '/Users?count=1')).status, 200);
  });

  it('Entra workload identity federation: a token from one instance serves SCIM on the other; the replayed assertion is refused there', async () => {
    const [a, b] = servers.map((s) => s.url) as [string, string];
    const assertion = await entra.assertion({ audience: clientId });
    const form = { grant_type: 'client_credentials', client_id: clientId, client_assertion_type: JWT_BEARER, client_assertion: assertion };
    const first = await tokenRequest(a, form);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal((await scim(b, String(first.body.access_token), 'GET', '/Users?count=1')).status, 200);
    const replayed = await tokenRequest(b, form);
    assert.equal(replayed.status, 401);
    assert.equal(replayed.body.error, 'invalid_client');
  });
});
