/**
 * The SCIM request log (migration 008): batched inserts, pruning to an age and
 * a count per team, and a team's newest requests filtered by status class and connection, paged
 * by (at, id) seek.
 */
import { sql } from 'kysely';
import type { Executor, RequestLogTable } from '../types.ts';

export type RequestLogRow = RequestLogTable;

export interface RequestLogListed extends RequestLogRow {
  readonly token_id: string | null;
  readonly token_name: string | null;
  readonly connection_name: string | null;
}

export async function insertRequestLog(ex: Executor, rows: readonly RequestLogRow[]): Promise<void> {
  if (rows.length > 0) await ex.insertInto('request_log').values([...rows]).execute();
}

/** The newest of a team's rows past its newest `keep` (the last one pruning removes), if any. */
export async function requestLogEdge(ex: Executor, teamId: string, keep: number): Promise<{ readonly at: string; readonly id: string } | undefined> {
  return ex
    .selectFrom('request_log')
    .select(['at', 'id'])
    .where('team_id', '=', teamId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(1)
    .executeTakeFirst();
}

/**
 * Deletes at most `batch` of a team's rows that are older than `before` or not after `edge`
 * (requestLogEdge), the oldest first; returns how many it deleted (fewer than `batch`: nothing
 * is left to prune). Bounded so that no one statement holds SQLite's connection (and so the
 * event loop) long.
 */
export async function pruneRequestLog(
  ex: Executor,
  teamId: string,
  before: string,
  edge: { readonly at: string; readonly id: string } | undefined,
  batch: number,
): Promise<number> {
  const oldest = ex
    .selectFrom('request_log')
    .select('id')
    .where('team_id', '=', teamId)
    .where((eb) =>
      eb.or([
        eb('at', '<', before),
        ...(edge ? [eb('at', '<', edge.at), eb.and([eb('at', '=', edge.at), eb('id', '<=', edge.id)])] : []),
      ]),
    )
    .orderBy('at')
    .orderBy('id')
    .limit(batch);
  const result = await ex.deleteFrom('request_log').where('id', 'in', oldest).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface RequestLogQuery {
  /** A status class (2, 4, 5: 2xx, 4xx, 5xx) or an exact status. */
  readonly status?: { readonly class: number } | { readonly exact: number };
  /** `client:<id>`, `token:<provisioning token id>` or `connection:<id>` (its tokens and clients). */
  readonly connection?: { readonly clientId: string } | { readonly tokenId: string } | { readonly connectionId: string };
  /** Rows strictly older than this (at, id): the next page. */
  readonly before?: { readonly at: string; readonly id: string };
  readonly limit: number;
}

export async function listRequestLog(ex: Executor, teamId: string, q: RequestLogQuery): Promise<RequestLogListed[]> {
  let query = ex
    .selectFrom('request_log as r')
    .leftJoin('provisioning_tokens as p', 'p.token_hash', 'r.token_hash')
    .leftJoin('connections as c', 'c.id', 'r.connection_id')
    .selectAll('r')
    .select(['p.id as token_id', 'p.name as token_name', 'c.name as connection_name'])
    .where('r.team_id', '=', teamId);
  if (q.status && 'class' in q.status) query = query.where('r.status', '>=', q.status.class * 100).where('r.status', '<', q.status.class * 100 + 100);
  if (q.status && 'exact' in q.status) query = query.where('r.status', '=', q.status.exact);
  if (q.connection && 'clientId' in q.connection) query = query.where('r.client_id', '=', q.connection.clientId);
  if (q.connection && 'tokenId' in q.connection) query = query.where('p.id', '=', q.connection.tokenId);
  if (q.connection && 'connectionId' in q.connection) query = query.where('r.connection_id', '=', q.connection.connectionId);
  const before = q.before;
  if (before) query = query.where((eb) => eb.or([eb('r.at', '<', before.at), eb.and([eb('r.at', '=', before.at), eb('r.id', '<', before.id)])]));
  return query.orderBy('r.at', 'desc').orderBy('r.id', 'desc').limit(q.limit).execute();
}

/** The newest request per connection of a team (the console's overview), over the last `since`. */
export async function lastRequestPerConnection(
  ex: Executor,
  teamId: string,
  since: string,
): Promise<{ client_id: string | null; token_hash: string | null; at: string; failures: number; total: number }[]> {
  const rows = await ex
    .selectFrom('request_log')
    .select(['client_id', 'token_hash'])
    .select((eb) => [
      eb.fn.max('at').as('at'),
      eb.fn.countAll<number | string>().as('total'),
      eb.fn.sum<number | string>(sql`case when status >= 400 then 1 else 0 end`).as('failures'),
    ])
    .where('team_id', '=', teamId)
    .where('at', '>=', since)
    .groupBy(['client_id', 'token_hash'])
    .execute();
  return rows.map((r) => ({ client_id: r.client_id, token_hash: r.token_hash, at: String(r.at), failures: Number(r.failures ?? 0), total: Number(r.total) }));
}
