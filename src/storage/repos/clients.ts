/**
 * OAuth clients: service-wide rows (their secrets are in client-secrets.ts). Deleting a client
 * or changing what its tokens get is announced (revocations.ts), for the caches that hold a
 * verified client or its tokens.
 */
import { announceRevocation } from '../revocations.ts';
import { deleteTrustOfClient } from './client-trust.ts';
import { defineStatement, hot } from '../statements.ts';
import type { Executor, OAuthClientsTable } from '../types.ts';

export type ClientRow = OAuthClientsTable;

export async function insertClient(ex: Executor, row: ClientRow): Promise<void> {
  await ex.insertInto('oauth_clients').values(row).execute();
}

/** Every token request authenticates its client by id: compiled once. */
const CLIENT_BY_ID = defineStatement<{ id: string }, ClientRow>('clientById', ['id'], (db, p) => db.selectFrom('oauth_clients').selectAll().where('id', '=', p.id));

export async function clientById(ex: Executor, id: string): Promise<ClientRow | undefined> {
  return hot(ex).first(ex, CLIENT_BY_ID, { id });
}

export async function listClients(ex: Executor): Promise<ClientRow[]> {
  return ex.selectFrom('oauth_clients').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function deleteClient(ex: Executor, id: string): Promise<boolean> {
  await ex.deleteFrom('oauth_codes').where('client_id', '=', id).execute();
  await deleteTrustOfClient(ex, id);
  await ex.deleteFrom('oauth_client_secrets').where('client_id', '=', id).execute();
  const result = await ex.deleteFrom('oauth_clients').where('id', '=', id).executeTakeFirst();
  await announceRevocation(ex, { kind: 'client', id });
  return Number(result.numDeletedRows) === 1;
}

/** Changes a client's name and token lifetime (null: the server's default). */
export async function updateClientSettings(ex: Executor, id: string, change: { name: string; token_lifetime: number | null }, at: string): Promise<boolean> {
  const result = await ex.updateTable('oauth_clients').set({ ...change, updated_at: at }).where('id', '=', id).executeTakeFirst();
  await announceRevocation(ex, { kind: 'client', id });
  return Number(result.numUpdatedRows) === 1;
}
