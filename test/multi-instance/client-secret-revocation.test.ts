/**
 * Issue 29 item 1 across instances (PostgreSQL): two secrets of one client live at once on two
 * servers; one is revoked by `rollcall client secret revoke` (another process). The tokens
 * issued through it are refused by both servers, and the secret itself by both token endpoints,
 * before their caches (bearer and client, BEARER_CACHE_SECONDS) would have let go of them:
 * the revocation's notice (LISTEN/NOTIFY) dropped them. The other secret and its tokens keep
 * working everywhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall, scim, seedTeamToken, startServer } from '../support/processes.ts';
import type { ServerProcess } from '../support/processes.ts';
import { until } from '../support/wait.ts';

/** The servers keep verified tokens and clients this long: a refusal before then came from a notice. */
const CACHE = { BEARER_CACHE_SECONDS: '300' };
const CACHE_NOTE = `the refusal (the caches keep entries ${CACHE.BEARER_CACHE_SECONDS} s)`;

async function clientCredentials(base: string, id: string, secret: string): Promise<{ status: number; token: string | undefined }> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, token: body.access_token };
}

const status = async (base: string, token: string) => (await scim(base, token, 'GET', '/Users?count=1')).status;

describe('client secrets: a revoked secret across instances on PostgreSQL', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let schema: { url: string; drop(): Promise<void> };
  let servers: ServerProcess[];

  before(async () => {
    schema = await createPgSchema(postgresUrl!);
    await seedTeamToken(schema.url);
    servers = await Promise.all([startServer(schema.url, CACHE), startServer(schema.url, CACHE)]);
  });
  after(async () => {
    await Promise.all((servers ?? []).map((s) => s.stop()));
    await schema?.drop();
  });

  it('tokens issued through the revoked secret, and the secret, are refused by both instances; the other secret keeps working', async () => {
    const [a, b] = servers.map((s) => s.url) as [string, string];
    const created = rollcall(['client', 'create', '--name', 'Entra', '--team', 'acme', '--json', '--database', schema.url]);
    assert.equal(created.code, 0, created.stderr);
    const { clientId, clientSecret: oldSecret, secretId: oldId } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string; secretId: string };
    const added = rollcall(['client', 'secret', 'add', '--client', clientId, '--name', 'next', '--json', '--database', schema.url]);
    assert.equal(added.code, 0, added.stderr);
    const newSecret = (JSON.parse(added.stdout) as { clientSecret: string }).clientSecret;

    const oldToken = (await clientCredentials(a, clientId, oldSecret)).token!;
    const newToken = (await clientCredentials(a, clientId, newSecret)).token!;
    for (const base of [a, b]) {
      assert.equal(await status(base, oldToken), 200);
      assert.equal(await status(base, newToken), 200);
      assert.equal((await clientCredentials(base, clientId, oldSecret)).status, 200, 'both instances know the client and its old secret');
    }

    const revoked = rollcall(['client', 'secret', 'revoke', '--client', clientId, '--id', oldId, '--json', '--database', schema.url]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.ok((JSON.parse(revoked.stdout) as { tokensRevoked: number }).tokensRevoked >= 3);
    for (const base of [a, b]) {
      await until(async () => (await status(base, oldToken)) === 401, CACHE_NOTE);
      await until(async () => (await clientCredentials(base, clientId, oldSecret)).status === 401, CACHE_NOTE);
      assert.equal(await status(base, newToken), 200);
      assert.equal((await clientCredentials(base, clientId, newSecret)).status, 200);
    }
  });
});
