/**
 * Connections (migration 027): a team's named provisioning principals, with what belongs to each
 * (provisioning tokens, OAuth clients) counted beside it. Names are unique per team through
 * `name_key`; the caller computes the key (oauth/connections.ts connectionKey).
 */
import type { ConnectionsTable, Executor } from '../types.ts';

export type ConnectionRow = ConnectionsTable;

export interface ConnectionCounted extends ConnectionRow {
  /** Its provisioning tokens neither revoked nor expired at `now`. */
  readonly live_tokens: number;
  readonly clients: number;
}

export async function insertConnection(ex: Executor, row: ConnectionRow): Promise<void> {
  await ex.insertInto('connections').values(row).execute();
}

/** A team's connections with their live tokens and clients counted, by name (`ids`: only those). */
export async function listConnectionRows(ex: Executor, teamId: string, now: string, ids?: readonly string[]): Promise<ConnectionCounted[]> {
  if (ids !== undefined && ids.length === 0) return [];
  let query = ex
    .selectFrom('connections as c')
    .selectAll('c')
    .select((eb) => [
      eb
        .selectFrom('provisioning_tokens as p')
        .innerJoin('oauth_tokens as t', 't.hash', 'p.token_hash')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .whereRef('p.connection_id', '=', 'c.id')
        .where('t.revoked_at', 'is', null)
        .where('t.expires_at', '>', now)
        .as('live_tokens'),
      eb.selectFrom('oauth_clients as o').select((e) => e.fn.countAll<number | string>().as('n')).whereRef('o.connection_id', '=', 'c.id').as('clients'),
    ])
    .where('c.team_id', '=', teamId);
  if (ids !== undefined) query = query.where('c.id', 'in', ids);
  const rows = await query.orderBy('c.name_key').orderBy('c.id').execute();
  return rows.map((r) => ({ ...r, live_tokens: Number(r.live_tokens ?? 0), clients: Number(r.clients ?? 0) }));
}

export async function connectionRow(ex: Executor, teamId: string, id: string): Promise<ConnectionRow | undefined> {
  return ex.selectFrom('connections').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export async function connectionRowByKey(ex: Executor, teamId: string, nameKey: string): Promise<ConnectionRow | undefined> {
  return ex.selectFrom('connections').selectAll().where('team_id', '=', teamId).where('name_key', '=', nameKey).executeTakeFirst();
}

/** The names of some of a team's connections, by id (for pages and the audit log naming them). */
export async function connectionNameRows(ex: Executor, teamId: string, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  return ex.selectFrom('connections').select(['id', 'name']).where('team_id', '=', teamId).where('id', 'in', ids).execute();
}

export async function setConnectionName(ex: Executor, teamId: string, id: string, name: string, nameKey: string): Promise<boolean> {
  const result = await ex.updateTable('connections').set({ name, name_key: nameKey }).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteConnectionRow(ex: Executor, teamId: string, id: string): Promise<boolean> {
  const result = await ex.deleteFrom('connections').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** The hashes of a connection's tokens still unrevoked (its provisioning tokens and what its clients minted). */
export async function unrevokedTokenHashes(ex: Executor, connectionId: string): Promise<string[]> {
  const rows = await ex.selectFrom('oauth_tokens').select('hash').where('connection_id', '=', connectionId).where('revoked_at', 'is', null).execute();
  return rows.map((r) => r.hash);
}

/** The ids of a connection's OAuth clients. */
export async function clientIdsOfConnection(ex: Executor, connectionId: string): Promise<string[]> {
  const rows = await ex.selectFrom('oauth_clients').select('id').where('connection_id', '=', connectionId).orderBy('created_at').execute();
  return rows.map((r) => r.id);
}

/** Records uses of connections (batched by http/last-used.ts with their tokens'), never moving back. */
export async function touchConnections(ex: Executor, ids: readonly string[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await ex
    .updateTable('connections')
    .set({ last_used_at: at })
    .where('id', 'in', ids)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
}
