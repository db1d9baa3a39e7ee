/**
 * Provisioning tokens (migration 008): the id, name and last use of access tokens an operator
 * issued, joined with their `oauth_tokens` row for expiry and revocation. The secret is never
 * here: only the hash links the two rows.
 */
import type { Executor, ProvisioningTokensTable } from '../types.ts';

export type ProvisioningTokenRow = ProvisioningTokensTable;

export interface ProvisioningTokenListed extends ProvisioningTokenRow {
  readonly revoked_at: string | null;
  readonly scope: string;
  readonly user_name: string | null;
  readonly connection_name: string | null;
}

export async function insertProvisioningToken(ex: Executor, row: ProvisioningTokenRow): Promise<void> {
  await ex.insertInto('provisioning_tokens').values(row).execute();
}

/** A team's provisioning tokens with their token's state and user's name. */
const listed = (ex: Executor, teamId: string) =>
  ex
    .selectFrom('provisioning_tokens as p')
    .innerJoin('oauth_tokens as t', 't.hash', 'p.token_hash')
    .leftJoin('users as u', 'u.id', 'p.user_id')
    .leftJoin('connections as c', 'c.id', 'p.connection_id')
    .selectAll('p')
    .select(['t.revoked_at', 't.scope', 'u.user_name', 'c.name as connection_name'])
    .where('p.team_id', '=', teamId);

/** A team's provisioning tokens, newest first (revoked and expired ones too: the list says so). */
export async function listProvisioningTokens(ex: Executor, teamId: string, limit: number, connectionId?: string): Promise<ProvisioningTokenListed[]> {
  let query = listed(ex, teamId);
  if (connectionId !== undefined) query = query.where('p.connection_id', '=', connectionId);
  return query.orderBy('p.created_at', 'desc').orderBy('p.id', 'desc').limit(limit).execute();
}

export async function provisioningToken(ex: Executor, teamId: string, id: string): Promise<ProvisioningTokenListed | undefined> {
  return listed(ex, teamId).where('p.id', '=', id).executeTakeFirst();
}

/** Records uses batched by http/last-used.ts: one statement per distinct time, never moving back. */
export async function touchProvisioningTokens(ex: Executor, hashes: readonly string[], at: string): Promise<void> {
  if (hashes.length === 0) return;
  await ex
    .updateTable('provisioning_tokens')
    .set({ last_used_at: at })
    .where('token_hash', 'in', hashes)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
}

/** Whether the access token with this SHA-256 is a provisioning token (one an operator issued). */
export async function isProvisioningToken(ex: Executor, tokenHash: string): Promise<boolean> {
  return (await ex.selectFrom('provisioning_tokens').select('id').where('token_hash', '=', tokenHash).executeTakeFirst()) !== undefined;
}
