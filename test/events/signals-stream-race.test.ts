/**
 * A write deriving Shared Signals and a stream's creation of the same team, concurrent on
 * PostgreSQL (issue 33): the stream receives what is committed after it exists. The creation is
 * held open after it has locked the team's row and inserted the stream; a deactivation then
 * waits for it (the share lock on the team's row, repos/subscriptions.ts teamHasStreamsForWrite)
 * and, once the creation commits, sees the stream and appends its signal. Without that lock the
 * deactivation read "no stream", committed with no signal, and was numbered after the stream's
 * cursor. SQLite runs one write at a time, so it has no such interleaving to test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { SIGNAL, signalOf } from '../../src/events/feed.ts';
import { ACCOUNT_DISABLED, SIGNAL_EVENT_URIS } from '../../src/events/signals.ts';
import type { StreamConfig } from '../../src/events/stream-config.ts';
import { newId } from '../../src/ids.ts';
import { eventsAfter, lastSeq } from '../../src/storage/repos/events.ts';
import { countSubscriptionsLocked, insertSubscription } from '../../src/storage/repos/subscriptions.ts';
import type { SubscriptionRow } from '../../src/storage/repos/subscriptions.ts';
import { createTestApp, json } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { until } from '../support/wait.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const T = '2026-01-01T00:00:00.000Z';

for (const engine of engines.filter((e) => e.name === 'postgres')) {
  describe(`Shared Signals: a write racing a stream's creation (${engine.name})`, () => {
    it('a deactivation concurrent with the creation of the team\'s first stream commits its signal after the stream\'s cursor', async () => {
      const t = await createTestApp({ engine });
      try {
        const user = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'ada@acme.example' })).id);
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const teamLocked = new Promise<void>((resolve) => (locked = resolve));
        let cursor = -1;
        // The stream's creation as streams.ts does it: the team's row locked, the stream inserted
        // with the feed's last seq as its cursor; then held open.
        const creation = t.storage.db.transaction().execute(async (trx) => {
          await countSubscriptionsLocked(trx, t.team.id, 'streams');
          cursor = await lastSeq(trx, t.team.id);
          const config: StreamConfig = { aud: 'https://receiver.example/ssf', eventsRequested: SIGNAL_EVENT_URIS, eventsDelivered: SIGNAL_EVENT_URIS, status: 'enabled' };
          const row: SubscriptionRow = {
            id: newId(), team_id: t.team.id, method: 'poll', url: null, events: null, full: 0, state: 'active', paused_reason: null, cursor,
            failures: 0, failing_since: null, next_attempt_at: T, lease_owner: null, lease_until: null, secret_hash: null, created_at: T, updated_at: T,
            creator_token: null, creator_user: null, format: 'ssf', webhook_secret: null, webhook_previous_secret: null, webhook_previous_until: null,
            ssf: JSON.stringify(config),
          };
          await insertSubscription(trx, row);
          locked();
          await held;
        });
        await teamLocked;
        let answered = false;
        const write = t.request('PATCH', `/v2/scim/Users/${user}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }).then((r) => {
          answered = true;
          return r;
        });
        // The write waits on the team's row (seen in pg_stat_activity), or, without the lock, is done.
        await until(async () => {
          if (answered) return true;
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%for share%'`.execute(t.storage.db);
          return (rows[0]?.n ?? 0) > 0;
        }, 'the deactivation waits for the creation');
        release();
        await creation;
        assert.equal((await write).statusCode, 200);
        const after = await eventsAfter(t.storage.db, t.team.id, cursor, 100);
        assert.ok(after.some((r) => r.type !== SIGNAL && r.resource_id === user), 'the deactivation is numbered after the stream\'s cursor');
        const signals = after.filter((r) => r.type === SIGNAL).map((r) => signalOf(r).event);
        assert.ok(signals.includes(ACCOUNT_DISABLED), `the stream's feed holds the deactivation's signal (got ${JSON.stringify(signals)})`);
      } finally {
        await t.close();
      }
    });
  });
}
