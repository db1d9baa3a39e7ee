/**
 * Resource ids (src/ids.ts): 20 characters of [A-Z0-9], the contract's shape, every character
 * equally likely at every position (random bytes drawn a pool at a time, with rejection).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId, timeOrderedId } from '../../src/ids.ts';

describe('newId', () => {
  it('20 characters of [A-Z0-9], distinct, and no character or position favoured', () => {
    const n = 36_000;
    const ids = Array.from({ length: n }, () => newId());
    for (const id of ids) assert.match(id, /^[A-Z0-9]{20}$/);
    assert.equal(new Set(ids).size, n);
    // Per position, each of the 36 characters about n / 36 = 1,000 times: a chi-square with 35
    // degrees of freedom stays under 80 unless the draw is biased (p < 0.0001 by chance).
    for (let pos = 0; pos < 20; pos++) {
      const counts = new Map<string, number>();
      for (const id of ids) counts.set(id[pos]!, (counts.get(id[pos]!) ?? 0) + 1);
      assert.equal(counts.size, 36);
      const chi = [...counts.values()].reduce((s, c) => s + (c - n / 36) ** 2 / (n / 36), 0);
      assert.ok(chi < 80, `position ${pos}: chi-square ${chi.toFixed(1)}`);
    }
  });

  it('time-ordered ids: the same shape, sorted as their times are, distinct within one millisecond', () => {
    const times = [0, 1, 35, 36, Date.parse('2026-01-01T00:00:00.000Z'), Date.parse('2026-01-01T00:00:00.001Z'), Date.parse('2999-12-31T23:59:59.999Z')];
    const ids = times.map((t) => timeOrderedId(t));
    for (const id of ids) assert.match(id, /^[A-Z0-9]{20}$/);
    assert.deepEqual([...ids].sort(), ids);
    const same = Array.from({ length: 1000 }, () => timeOrderedId(times[4]!));
    assert.equal(new Set(same).size, 1000);
    assert.ok(same.every((id) => id < ids[5]!));
  });
});
