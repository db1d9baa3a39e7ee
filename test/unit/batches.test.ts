/**
 * src/batches.ts: work in short steps with the event loop turning between them (the feed's
 * retention and the request log's pruning run their DELETEs through it).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inBatches } from '../../src/batches.ts';

describe('inBatches', () => {
  it('runs steps until one handles fewer than a batch, turning the event loop between them, and answers the total', async () => {
    const answers = [3, 3, 3, 1, 3];
    let steps = 0;
    let turns = 0;
    const between: number[] = [];
    let turning = true;
    const turn = () => {
      turns++;
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    const total = await inBatches(async () => {
      between.push(turns);
      return answers[steps++]!;
    }, 3);
    turning = false;
    assert.equal(total, 10);
    assert.equal(steps, 4, 'the short step is the last');
    // Every step after the first ran after at least one more turn of the event loop.
    for (let i = 1; i < between.length; i++) assert.ok(between[i]! > between[i - 1]!, `step ${i + 1} ran in the same turn as step ${i}`);
  });

  it('stops after maxSteps full steps, leaving the rest for the next run; a first short step ends at once', async () => {
    let steps = 0;
    assert.equal(await inBatches(async () => (steps++, 5), 5, 3), 15);
    assert.equal(steps, 3);
    assert.equal(await inBatches(async () => 0, 5), 0);
  });
});
