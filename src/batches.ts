/**
 * Work done in short statements with the event loop turning between them: SQLite answers
 * synchronously, so a run of statements never yields by itself, and one long statement holds
 * the one connection, and with it every team's requests. The change feed's retention and the
 * request log's pruning delete this way. No SQL: the caller's step runs one statement.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Runs `step` (one statement that handles at most `batch` rows and answers how many it handled)
 * until it answers fewer than `batch`, or `maxSteps` times, the event loop turning between
 * steps. Answers the rows handled.
 */
export async function inBatches(step: () => Promise<number>, batch: number, maxSteps = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxSteps; i++) {
    if (i > 0) await nextTurn();
    const handled = await step();
    total += handled;
    if (handled < batch) break;
  }
  return total;
}

/**
 * Runs `step` on consecutive slices of `items` of at most `size` each, the event loop turning
 * between slices: a write of many rows (a group's members) inside one transaction. The
 * transaction stays whole (a failure in any slice rolls back every one); on SQLite other
 * requests' statements still wait for the one connection, but timers, sockets and requests
 * that need no database go on between slices.
 */
export async function inChunks<T>(items: readonly T[], size: number, step: (chunk: readonly T[]) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    if (i > 0) await nextTurn();
    await step(items.slice(i, i + size));
  }
}
