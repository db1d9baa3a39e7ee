/**
 * src/oauth/passwords.ts PasswordHasher (issue 27 item 7): the order in which it starts units
 * and what it admits, with a derivation the test releases one at a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressBusy, HashingBusy, PasswordHasher } from '../../src/oauth/passwords.ts';
import type { PasswordKdf } from '../../src/oauth/passwords.ts';

/** Records each derivation as it starts and holds it until released. */
function heldKdf(): PasswordKdf & { started: string[]; release(): void } {
  const held: (() => void)[] = [];
  const started: string[] = [];
  const turn = async (label: string) => {
    started.push(label);
    await new Promise<void>((resolve) => held.push(resolve));
  };
  return {
    started,
    release: () => held.shift()?.(),
    hash: async (password) => (await turn(password), `held$${password}`),
    verify: async (password) => (await turn(password), false),
  };
}

/** Lets every settled promise's continuation run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('PasswordHasher', () => {
  it('a unit starts at once on a free slot even when no unit may wait; the next is refused', async () => {
    const kdf = heldKdf();
    const hasher = new PasswordHasher({ concurrency: 1, maxQueued: 0, maxQueuedPerTeam: 0, anonymousQueued: 0 }, kdf);
    const first = hasher.hash({ team: 'a' }, 'first');
    await settle();
    assert.deepEqual(kdf.started, ['first']);
    await assert.rejects(hasher.hash({ team: 'b' }, 'second'), HashingBusy);
    await assert.rejects(hasher.verify({ address: '192.0.2.1' }, 'third', ['x']), HashingBusy);
    kdf.release();
    assert.equal(await first, 'held$first');
    assert.deepEqual(hasher.load, { running: 0, queued: 0, anonymousRunning: 0, anonymousQueued: 0 });
  });

  it('freed slots alternate between teams and sign-ins while both wait; teams take turns by the oldest last start', async () => {
    const kdf = heldKdf();
    const hasher = new PasswordHasher({ concurrency: 1 }, kdf);
    const units = [
      hasher.hash({ team: 'a' }, 'a1'),
      hasher.hash({ team: 'a' }, 'a2'),
      hasher.hash({ team: 'a' }, 'a3'),
      hasher.verify({ address: '192.0.2.1' }, 'x', ['h']),
      hasher.verify({ address: '192.0.2.2' }, 'y', ['h']),
      hasher.hash({ team: 'b' }, 'b1'),
    ];
    await settle();
    assert.deepEqual(hasher.load, { running: 1, queued: 3, anonymousRunning: 0, anonymousQueued: 2 });
    for (let i = 1; i < units.length; i++) {
      kdf.release();
      await settle();
    }
    kdf.release();
    await Promise.all(units);
    // a1 ran first; then sign-in, team, sign-in, team; b (never served) before a's second turn.
    assert.deepEqual(kdf.started, ['a1', 'x', 'b1', 'y', 'a2', 'a3']);
  });

  it('one sign-in per address, running or waiting; the address is free again once it is answered', async () => {
    const kdf = heldKdf();
    const hasher = new PasswordHasher({ concurrency: 2, anonymousConcurrency: 1 }, kdf);
    const running = hasher.verify({ address: '192.0.2.1' }, 'one', ['h']);
    const waiting = hasher.verify({ address: '192.0.2.2' }, 'two', ['h']);
    await settle();
    await assert.rejects(hasher.verify({ address: '192.0.2.1' }, 'again', ['h']), AddressBusy);
    await assert.rejects(hasher.verify({ address: '192.0.2.2' }, 'again', ['h']), AddressBusy);
    // The slot sign-ins may not use is there for a team.
    const write = hasher.hash({ team: 'a' }, 'write');
    await settle();
    assert.deepEqual(kdf.started, ['one', 'write']);
    kdf.release();
    assert.deepEqual(await running, [false]);
    const again = hasher.verify({ address: '192.0.2.1' }, 'again', ['h']);
    kdf.release();
    kdf.release();
    await settle();
    kdf.release();
    await Promise.all([waiting, write, again]);
    assert.deepEqual(kdf.started, ['one', 'write', 'two', 'again']);
  });
});
