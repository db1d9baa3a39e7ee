/**
 * The console's own reads: a team's counts for the overview (its counters), the audit log with
 * filters (newest first, (at, id) seek), and the OAuth clients holding live tokens for a team.
 * Everything else the console shows comes through the SCIM services' repositories.
 */
import { sql } from 'kysely';
import type { EngineName } from '../dialect.ts';
import { actorIdSql } from '../migrations/033_console_indexes.ts';
import type { AuditEventsTable, Executor } from '../types.ts';
import { teamCounts as countersOf } from './counters.ts';

/** The overview's counts: the team's counters (repos/counters.ts), never a count over its rows. */
export async function teamCounts(ex: Executor, teamId: string): Promise<{ activeUsers: number; deactivatedUsers: number; groups: number }> {
  const counts = await countersOf(ex, teamId);
  return { activeUsers: counts.usersActive, deactivatedUsers: counts.usersDeactivated, groups: counts.groups };
}

export interface AuditFilter {
  readonly via?: string;
  readonly actorId?: string;
  /** The connection the actor acted through (migration 027's actor_connection_id). */
  readonly connectionId?: string;
  readonly action?: string;
  readonly resourceId?: string;
  readonly from?: string;
  readonly to?: string;
  readonly before?: { readonly at: string; readonly id: string };
  readonly limit: number;
}

export async function filteredAuditEvents(ex: Executor, engine: EngineName, teamId: string, f: AuditFilter): Promise<AuditEventsTable[]> {
  const filtered = () => {
    let query = ex.selectFrom('audit_events').selectAll().where('team_id', '=', teamId);
    // The actor is stored as JSON text ({"via":..,"clientId":..,"userId":..}): matched as text.
    if (f.via !== undefined) query = query.where('actor', 'like', `{"via":"${f.via}",%`);
    if (f.connectionId !== undefined) query = query.where('actor_connection_id', '=', f.connectionId);
    if (f.action !== undefined) query = query.where('action', '=', f.action);
    if (f.resourceId !== undefined) query = query.where('resource_id', '=', f.resourceId);
    if (f.from !== undefined) query = query.where('at', '>=', f.from);
    if (f.to !== undefined) query = query.where('at', '<=', f.to);
    const before = f.before;
    if (before) query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]));
    return query;
  };
  const newest = (query: ReturnType<typeof filtered>) => query.orderBy('at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
  if (f.actorId === undefined) return newest(filtered());
  // An id acts as a user, a client or a connection: one walk of each one's index (migration 033),
  // merged, rather than one walk of the whole trail testing the actor of every row.
  const id = f.actorId;
  const found = new Map<string, AuditEventsTable>();
  for (const query of [
    filtered().where(sql.raw(actorIdSql(engine, 'userId')), '=', id),
    filtered().where(sql.raw(actorIdSql(engine, 'clientId')), '=', id),
    filtered().where('actor_connection_id', '=', id),
  ]) {
    for (const row of await newest(query)) found.set(row.id, row);
  }
  return [...found.values()].sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1)).slice(0, f.limit);
}

export async function clientsWithTokens(ex: Executor, teamId: string, now: string): Promise<{ id: string; name: string; bound: boolean; liveTokens: number; connectionId: string | null }[]> {
  const rows = await ex
    .selectFrom('oauth_clients as c')
    .leftJoin('oauth_tokens as t', (join) => join.onRef('t.client_id', '=', 'c.id').on('t.team_id', '=', teamId).on('t.revoked_at', 'is', null).on('t.expires_at', '>', now))
    .select(['c.id', 'c.name', 'c.team_id', 'c.connection_id'])
    .select((eb) => eb.fn.count<number | string>('t.hash').as('live'))
    .groupBy(['c.id', 'c.name', 'c.team_id', 'c.connection_id'])
    .execute();
  return rows
    .filter((r) => r.team_id === teamId || Number(r.live) > 0)
    .map((r) => ({ id: r.id, name: r.name, bound: r.team_id === teamId, liveTokens: Number(r.live), connectionId: r.connection_id ?? null }));
}
