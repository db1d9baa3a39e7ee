/**
 * runBulk gives the event loop a turn while it runs (src/scim/bulk/run.ts): once it has run
 * operations back to back for its pacing's interval, it yields before the next one, so other
 * requests are served during a large Bulk. Proven by order, not by duration: the run is given a
 * clock that moves by the whole interval at every reading, and a chain of setImmediate callbacks
 * records each turn of the loop next to each committed operation. On SQLite, whose driver never
 * waits for I/O, the same Bulk under a clock that never moves commits every operation without a
 * turn in between: the turns come from the pacing, not from the storage. (PostgreSQL's driver
 * gives the loop turns of its own, so there only the first property is checked.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { PasswordHasher } from '../../src/oauth/passwords.ts';
import { BULK_PACING, planBulk, runBulk } from '../../src/scim/bulk/index.ts';
import type { BulkPacing } from '../../src/scim/bulk/index.ts';
import type { ScimContext } from '../../src/scim/context.ts';
import { loadTeamTypes } from '../../src/scim/team-schemas.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const BULK = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
const OPERATIONS = 6;

type Entry = 'op' | 'turn' | 'resolved';

for (const engine of engines) {
  describe(`runBulk yields to the event loop (${engine.name})`, () => {
    let t: TestApp;
    let ctx: ScimContext;
    before(async () => {
      t = await createTestApp({ engine });
      ctx = { storage: t.storage, clock: t.clock, baseUrl: 'https://rollcall.test', team: t.team, actor: CLI_ACTOR, requestId: 'req-yield', cursorSecret: 'test', passwords: new PasswordHasher(), types: await loadTeamTypes(t.storage.db, t.team.id) };
    });
    after(() => t.close());

    /** Runs a Bulk of OPERATIONS user creates under `pacing`; the log holds each commit, each turn of the loop while it ran, and its answer. */
    async function logged(prefix: string, pacing: BulkPacing): Promise<Entry[]> {
      const log: Entry[] = [];
      let running = true;
      const turn = (): void => {
        if (!running) return;
        log.push('turn');
        setImmediate(turn);
      };
      const plan = planBulk({ schemas: [BULK], Operations: Array.from({ length: OPERATIONS }, (_, i) => ({ method: 'POST', path: '/Users', bulkId: `y${i}`, data: { userName: `${prefix}.${i}` } })) });
      const observed: ScimContext = { ...ctx, onCommit: async () => void log.push('op') };
      setImmediate(turn);
      const response = await runBulk(observed, plan, undefined, {}, pacing);
      log.push('resolved');
      running = false;
      assert.deepEqual(response.Operations.map((o) => o.status), new Array(OPERATIONS).fill('201'));
      return log;
    }

    it('with a clock that moves by the whole interval at every reading, the loop turns between every two operations', async () => {
      let now = 0;
      const log = await logged('moving', { now: () => (now += BULK_PACING.yieldAfterMs), yieldAfterMs: BULK_PACING.yieldAfterMs });
      const ops = log.flatMap((entry, at) => (entry === 'op' ? [at] : []));
      assert.equal(ops.length, OPERATIONS);
      for (let i = 1; i < ops.length; i++) assert.ok(log.slice(ops[i - 1], ops[i]).includes('turn'), `a turn of the loop between operations ${i - 1} and ${i}: ${log.join(' ')}`);
      assert.ok(log.indexOf('turn') < log.indexOf('resolved'), 'a callback queued before the Bulk ran before it answered');
    });

    if (engine.name === 'sqlite') {
      it('with a clock that never moves, SQLite commits every operation without a turn of the loop: the turns come from the pacing', async () => {
        const log = await logged('frozen', { now: () => 0, yieldAfterMs: BULK_PACING.yieldAfterMs });
        assert.deepEqual(log.slice(0, OPERATIONS + 1), [...new Array<Entry>(OPERATIONS).fill('op'), 'resolved'], log.join(' '));
      });
    }
  });
}
