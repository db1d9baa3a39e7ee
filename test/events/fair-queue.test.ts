/**
 * The push worker's schedule (issue 27 item 2), as a data structure: teams served round robin,
 * a team never past its slots, a subscription back at the end of its team's queue after a turn.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairQueue } from '../../src/events/fair-queue.ts';

describe('FairQueue', () => {
  it('serves the teams in turn, whatever one team has queued', () => {
    const q = new FairQueue<string>();
    q.setSlots('a', 4);
    for (const s of ['a1', 'a2', 'a3', 'a4', 'a5']) q.push('a', s);
    q.setSlots('b', 4);
    q.push('b', 'b1');
    q.push('b', 'b2');
    const order: string[] = [];
    for (let turn = q.take(); turn; turn = q.take()) {
      order.push(turn.item);
      q.done(turn.teamId);
    }
    assert.deepEqual(order, ['a1', 'b1', 'a2', 'b2', 'a3', 'a4', 'a5']);
  });

  it("never gives a team more than its slots; the other team's turns go on meanwhile", () => {
    const q = new FairQueue<string>();
    q.setSlots('a', 2);
    for (const s of ['a1', 'a2', 'a3']) q.push('a', s);
    q.setSlots('b', 2);
    q.push('b', 'b1');
    const taken = [q.take(), q.take(), q.take(), q.take()].map((t) => t?.item);
    assert.deepEqual(taken, ['a1', 'b1', 'a2', undefined], 'a3 waits for one of its team\'s slots');
    assert.equal(q.inFlight, 3);
    q.done('b');
    assert.equal(q.take(), undefined, "b's slot is free, but a is still at its two");
    q.done('a');
    assert.equal(q.take()?.item, 'a3');
  });

  it('a subscription pushed back after its turn waits behind its team\'s others; drain answers what waited', () => {
    const q = new FairQueue<string>();
    q.setSlots('a', 1);
    q.push('a', 'a1');
    q.push('a', 'a2');
    const first = q.take()!;
    q.push('a', first.item);
    q.done('a');
    assert.equal(q.take()?.item, 'a2');
    q.done('a');
    assert.deepEqual(q.drain(), ['a1']);
    assert.equal(q.take(), undefined);
  });
});
