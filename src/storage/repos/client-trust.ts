/**
 * What RFC 7523 client authentication trusts (migration 021): a client's registered key sets,
 * its federated credentials, and the ids of assertions already accepted. Plain reads and writes;
 * the rules (which keys may be registered, who may trust what, when an assertion is valid) live
 * in oauth/client-trust.ts and oauth/assertion-auth.ts.
 */
import { sha256 } from '../../ids.ts';
import type { ClientFederationsTable, ClientKeysTable, Executor } from '../types.ts';

export type ClientKeyRow = ClientKeysTable;
export type FederationRow = ClientFederationsTable;

/** How many expired assertion ids one purge deletes at most, so no purge holds locks for long. */
export const PURGE_BATCH = 200;

export async function insertClientKey(ex: Executor, row: ClientKeyRow): Promise<void> {
  await ex.insertInto('client_keys').values(row).execute();
}

/** A client's key registrations, oldest first. */
export async function clientKeysOf(ex: Executor, clientId: string): Promise<ClientKeyRow[]> {
  return ex.selectFrom('client_keys').selectAll().where('client_id', '=', clientId).orderBy('created_at').orderBy('id').execute();
}

export async function deleteClientKey(ex: Executor, clientId: string, id: string): Promise<boolean> {
  const result = await ex.deleteFrom('client_keys').where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function insertFederation(ex: Executor, row: FederationRow): Promise<void> {
  await ex.insertInto('client_federations').values(row).execute();
}

/** A client's federated credentials, oldest first. */
export async function federationsOf(ex: Executor, clientId: string): Promise<FederationRow[]> {
  return ex.selectFrom('client_federations').selectAll().where('client_id', '=', clientId).orderBy('created_at').orderBy('id').execute();
}

/** The client's federated credential for exactly this issuer and subject (unique per client). */
export async function federationFor(ex: Executor, clientId: string, issuer: string, subject: string): Promise<FederationRow | undefined> {
  return ex.selectFrom('client_federations').selectAll().where('client_id', '=', clientId).where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
}

export async function deleteFederation(ex: Executor, clientId: string, id: string): Promise<boolean> {
  const result = await ex.deleteFrom('client_federations').where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Federated credentials and key registrations of every client of a team: what its budget counts. */
export async function trustCountOfTeam(ex: Executor, teamId: string): Promise<number> {
  const keys = await ex.selectFrom('client_keys').select((eb) => eb.fn.countAll<string | number>().as('n')).where('team_id', '=', teamId).executeTakeFirstOrThrow();
  const feds = await ex.selectFrom('client_federations').select((eb) => eb.fn.countAll<string | number>().as('n')).where('team_id', '=', teamId).executeTakeFirstOrThrow();
  return Number(keys.n) + Number(feds.n);
}

/** Key registrations and federated credentials of one client (a client bound to no team has no team budget). */
export async function trustCountOfClient(ex: Executor, clientId: string): Promise<number> {
  return (await clientKeysOf(ex, clientId)).length + (await federationsOf(ex, clientId)).length;
}

/** Everything a deleted client trusted goes with it. */
export async function deleteTrustOfClient(ex: Executor, clientId: string): Promise<void> {
  await ex.deleteFrom('client_keys').where('client_id', '=', clientId).execute();
  await ex.deleteFrom('client_federations').where('client_id', '=', clientId).execute();
}

/**
 * Remembers an accepted assertion's id until `expiresAt`; false when the issuer's id was already
 * used (a replay). The primary key decides, so two instances cannot both accept one assertion.
 */
export async function rememberAssertion(ex: Executor, issuer: string, id: string, expiresAt: string): Promise<boolean> {
  const key = sha256(JSON.stringify([issuer, id]));
  const inserted = await ex.insertInto('used_assertions').values({ key, expires_at: expiresAt }).onConflict((oc) => oc.column('key').doNothing()).returning('key').executeTakeFirst();
  return inserted !== undefined;
}

/** Deletes at most PURGE_BATCH ids of assertions expired before `now`; answers how many. */
export async function purgeUsedAssertions(ex: Executor, now: string): Promise<number> {
  const result = await ex
    .deleteFrom('used_assertions')
    .where('key', 'in', (eb) => eb.selectFrom('used_assertions').select('key').where('expires_at', '<', now).limit(PURGE_BATCH))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
