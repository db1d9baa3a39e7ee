/**
 * Reads of an SSF stream's subjects (migration 025 `ssf_subjects`) for delivery: which users its
 * receiver removed. A stream carries every user of its team by default; a row with `included` 0
 * removes one, a row with `included` 1 (added back) is the default again. Asked per batch of
 * feed rows with the users of that batch only, so the read is bounded by the batch (primary key
 * lookups), whatever the number of subjects the receiver removed.
 */
import type { Executor } from '../types.ts';

/** Which of `userIds` the stream's receiver removed (at most as many as asked about). */
export async function removedAmong(ex: Executor, subscriptionId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await ex.selectFrom('ssf_subjects').select('user_id').where('subscription_id', '=', subscriptionId).where('user_id', 'in', [...userIds]).where('included', '=', 0).execute();
  return rows.map((r) => r.user_id);
}
