/**
 * `rollcall token issue --scope ssf` (issue 33) gives a Shared Signals receiver's token: a
 * running server lets it create and read SSF streams and refuses it SCIM provisioning (403);
 * `rollcall ssf streams` lists the team's streams with their status.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall, scim, seedTeamToken, startServer } from '../support/processes.ts';

describe('rollcall token issue --scope ssf, rollcall ssf streams', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-ssf-'));
    database = `sqlite:${join(dir, 'r.db')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('issues a token with the ssf scope that manages streams and cannot provision', async () => {
    await seedTeamToken(database);
    const issued = rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'owner@acme.example', '--name', 'Receiver', '--scope', 'ssf', '--json', '--database', database]);
    assert.equal(issued.code, 0, issued.stderr);
    const out = JSON.parse(issued.stdout) as { accessToken: string; scope: string[] | string };
    assert.deepEqual([out.scope].flat().join(' ').split(' '), ['ssf']);
    const server = await startServer(database);
    try {
      const headers = { authorization: `Bearer ${out.accessToken}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/v2/ssf/stream`, { method: 'POST', headers, body: JSON.stringify({ events_requested: ['https://schemas.openid.net/secevent/risc/event-type/account-disabled'] }) });
      assert.equal(created.status, 201, await created.clone().text());
      const stream = (await created.json()) as { stream_id: string; iss: string };
      const listed = (await (await fetch(`${server.url}/v2/ssf/stream`, { headers })).json()) as { stream_id: string }[];
      assert.deepEqual(listed.map((s) => s.stream_id), [stream.stream_id]);
      const config = (await (await fetch(`${server.url}/.well-known/ssf-configuration`)).json()) as { issuer: string };
      assert.equal(stream.iss, config.issuer, 'SSF 8.1.1.1: the stream\'s iss is the configuration\'s issuer');
      assert.equal((await scim(server.url, out.accessToken, 'GET', '/Users')).status, 403);
      const paused = await fetch(`${server.url}/v2/ssf/status`, { method: 'POST', headers, body: JSON.stringify({ stream_id: stream.stream_id, status: 'paused', reason: 'maintenance' }) });
      assert.equal(paused.status, 200);
      const listedCli = rollcall(['ssf', 'streams', '--team', 'acme', '--database', database]);
      assert.equal(listedCli.code, 0, listedCli.stderr);
      assert.match(listedCli.stdout, new RegExp(`^${stream.stream_id}  paused \\(maintenance\\)  poll \\S+/v2/ssf/poll/${stream.stream_id}  1 event types$`, 'm'));
      const asJson = JSON.parse(rollcall(['ssf', 'streams', '--team', 'acme', '--json', '--database', database]).stdout) as { stream_id: string; status: { status: string } }[];
      assert.deepEqual(asJson.map((s) => [s.stream_id, s.status.status]), [[stream.stream_id, 'paused']]);
    } finally {
      await server.stop();
    }
  });
});
