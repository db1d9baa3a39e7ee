/**
 * The key store's rows: generated keys, their material encrypted (the
 * encryption is keys/store.ts's business; this module only moves rows).
 */
import type { Executor, KeysTable } from '../types.ts';

export type KeyRow = KeysTable;

/** The keys of `purpose` that are current (no not_after) or still inside their window, newest first. */
export async function liveKeys(ex: Executor, purpose: string, now: string): Promise<KeyRow[]> {
  return ex
    .selectFrom('keys')
    .selectAll()
    .where('purpose', '=', purpose)
    .where((eb) => eb.or([eb('not_after', 'is', null), eb('not_after', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function insertKey(ex: Executor, row: KeyRow): Promise<void> {
  await ex.insertInto('keys').values(row).execute();
}

/** Gives the current keys of `purpose` an end (`notAfter`); returns their ids. */
export async function retireKeys(ex: Executor, purpose: string, notAfter: string): Promise<string[]> {
  const rows = await ex.updateTable('keys').set({ not_after: notAfter }).where('purpose', '=', purpose).where('not_after', 'is', null).returning('id').execute();
  return rows.map((r) => r.id);
}

/** Forgets keys whose window ended before `before`. */
export async function deleteRetiredKeys(ex: Executor, before: string): Promise<void> {
  await ex.deleteFrom('keys').where('not_after', '<', before).execute();
}
