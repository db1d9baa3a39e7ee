/**
 * Waiting in tests for something that happens in the background (a delivery, a notice, a lock
 * taken): `ready` is polled until it holds. The guard only ends a wait that would otherwise hang;
 * it is never an assertion on how long anything took.
 */

/** Polls `ready` every `everyMs` until it holds; fails naming `what` after `guardMs`. */
export async function until(ready: () => boolean | Promise<boolean>, what = 'the condition', guardMs = 20_000, everyMs = 10): Promise<void> {
  const giveUp = Date.now() + guardMs;
  while (!(await ready())) {
    if (Date.now() > giveUp) throw new Error(`still waiting for ${what} after the ${guardMs / 1000} s guard`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
