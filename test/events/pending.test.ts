/**
 * A subscription's pending events (the console's Events page and overview): for random feeds
 * (event types in seq order, the oldest pruned), random cursors and random events filters, the
 * count equals the events after the cursor that are kept and wanted, counted one by one (Shared
 * Signal rows left by a deleted stream never count for a SCIM subscription); a
 * filtered subscription further behind than PENDING_SCAN gets an upper bound, never less than
 * the truth. On both engines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { systemClock } from '../../src/clock.ts';
import { CHANGE_TYPES, SIGNAL } from '../../src/events/feed.ts';
import type { ChangeType } from '../../src/events/feed.ts';
import { PENDING_SCAN, pendingCounts } from '../../src/events/subscriptions.ts';
import { appendEvent, lastSeq } from '../../src/storage/repos/events.ts';
import type { Executor } from '../../src/storage/types.ts';
import { createTestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

async function feed(ex: Executor, teamId: string, types: readonly (ChangeType | typeof SIGNAL)[]): Promise<void> {
  for (const type of types) {
    await appendEvent(ex, { team_id: teamId, at: '2026-01-01T00:00:00.000Z', type, resource_type: 'User', resource_id: 'U'.repeat(20), version: 1, changed: '[]', actor: '{}', txn: null, external_id: null, data: null, members: null });
  }
  // Numbered (PostgreSQL numbers them for their first reader), so the prune below can cut by seq.
  assert.equal(await lastSeq(ex, teamId), types.length);
}

const deps = (t: { storage: { db: Executor } }) => ({ storage: { db: t.storage.db as never }, clock: systemClock });

for (const engine of engines) {
  describe(`pending events (${engine.name})`, () => {
    it('equal the kept, wanted events after the cursor, for random feeds, prunes, cursors and filters', async () => {
      const t = await createTestApp({ engine });
      try {
        let n = 0;
        await fc.assert(
          fc.asyncProperty(
            // Shared Signal rows too: a team whose last stream was deleted keeps them until pruned.
            fc.array(fc.constantFrom(...CHANGE_TYPES, SIGNAL), { maxLength: 40 }),
            fc.nat({ max: 45 }),
            fc.array(fc.record({ cursor: fc.nat({ max: 45 }), events: fc.option(fc.subarray([...CHANGE_TYPES], { minLength: 1 }), { nil: null }) }), { minLength: 1, maxLength: 4 }),
            async (types, pruned, subscriptions) => {
              const { team } = await t.addTeam(`p${n++}`);
              await feed(t.storage.db, team.id, types);
              const cut = Math.min(pruned, types.length);
              if (cut > 0) await t.storage.db.deleteFrom('events').where('team_id', '=', team.id).where('seq', '<=', cut).execute();
              const counts = await pendingCounts(deps(t), team.id, subscriptions);
              subscriptions.forEach((s, i) => {
                const truth = types.filter((type, k) => k + 1 > cut && k + 1 > s.cursor && type !== SIGNAL && (s.events === null || s.events.includes(type))).length;
                assert.deepEqual(counts[i], { count: truth, exact: true }, JSON.stringify({ types, cut, s }));
              });
            },
          ),
          { numRuns: engine.name === 'sqlite' ? 60 : 25 },
        );
      } finally {
        await t.close();
      }
    });

    it('a filtered subscription further behind than PENDING_SCAN gets an upper bound; an unfiltered one stays exact', async () => {
      const t = await createTestApp({ engine });
      try {
        const types = Array.from({ length: PENDING_SCAN + 50 }, (_, k): ChangeType => (k % 10 === 0 ? 'create' : 'patch'));
        await t.storage.db.transaction().execute((trx) => feed(trx, t.team.id, types));
        const [all, creates, near] = await pendingCounts(deps(t), t.team.id, [
          { cursor: 10, events: null },
          { cursor: 10, events: ['create'] },
          { cursor: 100, events: ['create'] },
        ]);
        assert.deepEqual(all, { count: types.length - 10, exact: true });
        assert.deepEqual(creates, { count: types.length - 10, exact: false });
        assert.ok(creates!.count >= types.slice(10).filter((x) => x === 'create').length);
        assert.deepEqual(near, { count: types.slice(100).filter((x) => x === 'create').length, exact: true });
      } finally {
        await t.close();
      }
    });
  });
}
