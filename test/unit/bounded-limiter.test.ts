/**
 * src/oauth/bounded-limiter.ts (issue 27 item 8): below its bound it counts exactly as
 * rate-limiter-flexible's RateLimiterMemory does, which it replaces in limits.ts; at its bound it
 * evicts keys seen once before keys touched again. The comparison is a seeded, replayable run
 * of random operations on both, with the clock mocked so windows and blocks expire in it too.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { BoundedMemoryLimiter } from '../../src/oauth/bounded-limiter.ts';

/** A small deterministic generator (mulberry32), so a failing seed replays. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What an answer says, in the terms limits.ts reads: rejected or not, points used and left, a window or none. */
async function outcome(answer: Promise<RateLimiterRes | boolean | null>): Promise<string> {
  try {
    const res = await answer;
    if (!(res instanceof RateLimiterRes)) return JSON.stringify(res);
    return `ok ${res.consumedPoints}/${res.remainingPoints} ${res.msBeforeNext < 0 ? 'forever' : 'windowed'}`;
  } catch (rejection) {
    assert.ok(rejection instanceof RateLimiterRes, `rejected with ${String(rejection)}`);
    return `over ${rejection.consumedPoints}/${rejection.remainingPoints}`;
  }
}

describe('BoundedMemoryLimiter', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date', 'setTimeout'], now: Date.parse('2026-01-01T00:00:00Z') }));
  afterEach(() => mock.timers.reset());

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`counts as RateLimiterMemory does below its bound (seed ${seed})`, async () => {
      const next = random(seed);
      const options = { points: 4, duration: 10, keyPrefix: 'test', blockDuration: seed % 2 === 0 ? 7 : 0 };
      const reference = new RateLimiterMemory(options);
      const bounded = new BoundedMemoryLimiter({ ...options, maxKeys: 100 });
      const keys = ['a', 'b', 'c'];
      for (let step = 0; step < 400; step++) {
        const key = keys[Math.floor(next() * keys.length)]!;
        const points = 1 + Math.floor(next() * 2);
        const op = Math.floor(next() * 8);
        const run = (l: RateLimiterMemory | BoundedMemoryLimiter) =>
          [
            () => l.consume(key, points),
            () => l.consume(key, points),
            () => l.penalty(key, points),
            () => l.reward(key, 1),
            () => l.get(key),
            () => l.block(key, 1 + Math.floor(points * 3)),
            () => l.delete(key),
            () => l.set(key, points, points === 1 ? 0 : 5),
          ][op]!();
        const [expected, actual] = [await outcome(run(reference)), await outcome(run(bounded))];
        assert.equal(actual, expected, `seed ${seed}, step ${step}: op ${op} on ${key}`);
        mock.timers.tick(Math.floor(next() * 2500));
      }
    });
  }

  it('at its bound evicts the least recently used key seen once, and a key touched again only when no such key is left', async () => {
    const limiter = new BoundedMemoryLimiter({ points: 5, duration: 60, keyPrefix: 'test', maxKeys: 3 });
    await limiter.consume('attacked');
    await limiter.consume('attacked');
    for (const key of ['one-off 1', 'one-off 2', 'one-off 3', 'one-off 4']) await limiter.consume(key);
    assert.equal(limiter.size, 3);
    assert.equal((await limiter.get('attacked'))?.consumedPoints, 2, 'the repeated key kept its count');
    assert.equal(await limiter.get('one-off 1'), null);
    assert.equal(await limiter.get('one-off 2'), null);
    assert.equal((await limiter.get('one-off 4'))?.consumedPoints, 1);
    // Keys touched twice compete among themselves, least recently used first.
    await limiter.consume('one-off 3');
    await limiter.consume('one-off 4');
    await limiter.consume('attacked');
    await limiter.consume('newcomer');
    assert.equal(limiter.size, 3);
    assert.equal(await limiter.get('one-off 3'), null);
    assert.equal((await limiter.get('attacked'))?.consumedPoints, 3);
  });

  it('at its bound drops an expired repeated key before any live key', async () => {
    const limiter = new BoundedMemoryLimiter({ points: 5, duration: 60, keyPrefix: 'test', maxKeys: 2 });
    await limiter.consume('expires');
    await limiter.consume('expires');
    mock.timers.tick(61_000);
    await limiter.consume('live');
    await limiter.consume('newcomer');
    assert.equal(limiter.size, 2);
    assert.equal((await limiter.get('live'))?.consumedPoints, 1);
    assert.equal((await limiter.get('newcomer'))?.consumedPoints, 1);
  });
});
