/** Server-wide settings shared by every instance (such as the cookie-signing secret). */
import type { Executor } from '../types.ts';

export async function setting(ex: Executor, name: string): Promise<string | undefined> {
  const row = await ex.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

/** Stores `value` unless the setting exists; returns the stored value (first writer wins). */
export async function ensureSetting(ex: Executor, name: string, value: string): Promise<string> {
  await ex.insertInto('settings').values({ name, value }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const stored = await setting(ex, name);
  if (stored === undefined) throw new Error(`setting ${name} could not be stored`);
  return stored;
}
