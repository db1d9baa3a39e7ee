/**
 * Event delivery with two server processes on one PostgreSQL (issue 10 items 6 and 7): both run
 * the delivery worker; a subscription's lease lets one deliver at a time (the receiver never
 * has two requests in flight); the instance holding the lease is killed with SIGKILL in the
 * middle of delivering, and the survivor takes the subscription over once the lease expires:
 * every event arrives, verified against the JWKS, in order, none lost, and at most the one in
 * flight at the kill arrives twice (at-least-once, same jti).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { JSONWebKeySet } from 'jose';
import { systemClock } from '../../src/clock.ts';
import { issueAccessToken } from '../../src/oauth/tokens.ts';
import { connect } from '../../src/storage/connect.ts';
import { teamByName } from '../../src/storage/repos/teams.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { scim, seedTeamToken, startServer } from '../support/processes.ts';
import type { ServerProcess } from '../support/processes.ts';
import { startReceiver, verifyAll } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

const ISSUER = 'https://rollcall.test';
const RUNS = Number(process.env.EVENTS_KILL_RUNS ?? '1');

/** An administrator's token of the seeded team (the operator's: no client, no user); a provisioning token may not manage subscriptions. */
async function administratorToken(database: string): Promise<string> {
  const storage = connect(database);
  try {
    const team = (await teamByName(storage.db, 'acme'))!;
    return (await issueAccessToken(storage.db, systemClock, { teamId: team.id, userId: null, clientId: null, scope: ['read', 'write'], ttlSeconds: 3600 })).token;
  } finally {
    await storage.close();
  }
}

async function leaseOwner(database: string, id: string): Promise<string | null> {
  const storage = connect(database);
  try {
    const row = await storage.db.selectFrom('event_subscriptions').select(['lease_owner', 'lease_until']).where('id', '=', id).executeTakeFirst();
    return row?.lease_until && row.lease_until > new Date().toISOString() ? row.lease_owner : null;
  } finally {
    await storage.close();
  }
}

describe('event delivery: two instances on one PostgreSQL, the delivering one killed', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });

  for (let run = 1; run <= RUNS; run++) {
    it(`run ${run}: every event delivered, in order, none lost; one instance at a time; the killed one's claim taken over`, async () => {
      const schema = await createPgSchema(postgresUrl!);
      cleanup.push(() => schema.drop());
      const token = await seedTeamToken(schema.url);
      // Each answer takes 15 ms, so a delivery is in flight most of the time.
      const receiver: Receiver = await startReceiver(() => ({ status: 202, delayMs: 15 }));
      cleanup.push(() => receiver.close());
      // A short lease, so the survivor takes over soon after the kill; not so short that a loaded
      // host's slow answer (the send's timeout is half the lease) is sent again, or a live holder loses it.
      const env = { EVENT_LEASE_SECONDS: '8', PUBLIC_BASE_URL: ISSUER };
      const servers: ServerProcess[] = await Promise.all([startServer(schema.url, env), startServer(schema.url, env)]);
      cleanup.push(() => Promise.all(servers.map((s) => s.stop('SIGKILL'))));

      const created = await fetch(`${servers[0]!.url}/v2/events/subscriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await administratorToken(schema.url)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url }),
      });
      assert.equal(created.status, 201);
      const { id: subscriptionId, cursor: start } = (await created.json()) as { id: string; cursor: number };
      // The subscription starts at the end of the feed (seeding the team wrote its admin: seq 1).

      const writes = await Promise.all(Array.from({ length: 60 }, (_, i) => scim(servers[i % 2]!.url, token, 'POST', '/Users', { userName: `a${i}@acme.example` })));
      assert.deepEqual(writes.map((r) => r.status), Array(60).fill(201));
      await receiver.waitFor(10);

      // Kill the instance that holds the lease, while it delivers.
      let owner: string | null = null;
      for (let i = 0; i < 100 && owner === null; i++) owner = await leaseOwner(schema.url, subscriptionId);
      assert.ok(owner, 'some instance holds the lease while delivering');
      const victim = servers.find((s) => owner!.includes(`:${s.child.pid}:`));
      assert.ok(victim, `the lease owner ${owner} is one of the two servers`);
      const survivor = servers.find((s) => s !== victim)!;
      const before = receiver.received.length;
      await victim.stop('SIGKILL');
      assert.ok(before < 60, `the kill came mid-delivery (${before} of 60 delivered)`);

      // More writes through the survivor; it takes over once the lease expires.
      for (let i = 0; i < 20; i++) assert.equal((await scim(survivor.url, token, 'POST', '/Users', { userName: `b${i}@acme.example` })).status, 201);
      const deadline = Date.now() + 30_000;
      const distinct = () => new Set(receiver.received.map((r) => JSON.parse(Buffer.from(r.body.split('.')[1]!, 'base64url').toString()).seq as number)).size;
      while (distinct() < 80 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));

      const jwks = (await (await fetch(`${survivor.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
      const seqs = (await verifyAll(receiver.received, jwks, { issuer: ISSUER, audience: receiver.url })).map((p) => Number(p.seq));
      const firstArrivals = seqs.filter((s, i) => seqs.indexOf(s) === i);
      assert.deepEqual(firstArrivals, Array.from({ length: 80 }, (_, i) => start + i + 1), 'every event, in order');
      const duplicates = seqs.length - firstArrivals.length;
      assert.ok(duplicates <= 1, `at most the event in flight at the kill is sent again (${duplicates})`);
      for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! >= seqs[i - 1]!, `order kept: ${seqs[i - 1]} then ${seqs[i]}`);
      assert.equal(receiver.maxInFlight, 1, 'never two deliveries of the subscription at once');
      process.stdout.write(`# kill run ${run}: killed pid ${victim.child.pid} after ${before} deliveries; ${seqs.length} requests for 80 events (${duplicates} resent)\n`);
    });
  }
});
