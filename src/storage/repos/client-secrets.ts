/**
 * A client's secrets (DESIGN.md section 11), kept only as SHA-256 hashes. Every change that
 * makes a secret work or stop working is announced as a change of its client (revocations.ts),
 * so the client caches of every instance read the client again; revoking a secret also revokes
 * the tokens issued through it and pauses the event subscriptions they created, in the same
 * transaction.
 */
import { announceRevocation } from '../revocations.ts';
import { defineStatement, hot } from '../statements.ts';
import type { Executor, OAuthClientSecretsTable } from '../types.ts';
import { pauseSubscriptionsOfRevoked } from './subscription-creators.ts';

export type ClientSecretRow = OAuthClientSecretsTable;

/** Every token request of an uncached client reads its unrevoked secrets: compiled once. */
const UNREVOKED_SECRETS = defineStatement<{ clientId: string }, ClientSecretRow>('unrevokedClientSecrets', ['clientId'], (db, p) =>
  db.selectFrom('oauth_client_secrets').selectAll().where('client_id', '=', p.clientId).where('revoked_at', 'is', null).orderBy('created_at').orderBy('id'),
);

/** The client's secrets not revoked, expired ones included (the caller compares expiry with its clock), oldest first. */
export async function unrevokedSecrets(ex: Executor, clientId: string): Promise<ClientSecretRow[]> {
  return hot(ex).all(ex, UNREVOKED_SECRETS, { clientId });
}

export async function insertClientSecret(ex: Executor, row: ClientSecretRow): Promise<void> {
  await ex.insertInto('oauth_client_secrets').values(row).execute();
  await announceRevocation(ex, { kind: 'client', id: row.client_id });
}

/** How many of the client's secrets are live at `now` (neither revoked nor expired). */
export async function countLiveSecrets(ex: Executor, clientId: string, now: string): Promise<number> {
  const row = await ex
    .selectFrom('oauth_client_secrets')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function secretById(ex: Executor, clientId: string, id: string): Promise<ClientSecretRow | undefined> {
  return ex.selectFrom('oauth_client_secrets').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
}

/**
 * Revokes one secret, if it is not yet, with every live token issued through it. Answers the
 * number of tokens revoked, or undefined when the secret was already revoked (or is unknown).
 */
export async function revokeSecret(ex: Executor, clientId: string, id: string, at: string): Promise<number | undefined> {
  const result = await ex
    .updateTable('oauth_client_secrets')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return undefined;
  const tokens = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('secret_id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  await announceRevocation(ex, { kind: 'client', id: clientId });
  await pauseSubscriptionsOfRevoked(ex, { kind: 'secret', id, clientId }, at);
  return Number(tokens.numUpdatedRows);
}

/** Revokes every unrevoked secret of the client but `keep` (the tokens are the caller's concern). */
export async function revokeOtherSecrets(ex: Executor, clientId: string, keep: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_client_secrets')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('id', '!=', keep)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  await announceRevocation(ex, { kind: 'client', id: clientId });
  return Number(result.numUpdatedRows);
}

/** Records a secret's use at `at`, unless a use at or after `since` is already recorded. */
export async function touchSecret(ex: Executor, id: string, at: string, since: string): Promise<void> {
  await ex
    .updateTable('oauth_client_secrets')
    .set({ last_used_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
    .execute();
}

/** Live tokens (access and refresh) issued through one secret of a client: what revoking it ends. */
export async function liveTokensOfSecret(ex: Executor, clientId: string, secretId: string, now: string): Promise<number> {
  const row = await ex
    .selectFrom('oauth_tokens')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('client_id', '=', clientId)
    .where('secret_id', '=', secretId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
