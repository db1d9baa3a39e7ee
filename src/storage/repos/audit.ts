/**
 * Audit events: inserted in the transaction of the change they record (by a statement compiled
 * once: every write makes one, or as a step of a write's chain, chain.ts), never updated.
 */
import type { InsertObject } from 'kysely';
import { defineWrite, hot } from '../statements.ts';
import type { AuditEventsTable, Database, Db, Executor } from '../types.ts';

export type AuditRow = AuditEventsTable;

/** An audit row's columns, in the order its insert binds them. */
export const AUDIT_COLUMNS = ['id', 'team_id', 'at', 'actor', 'request_id', 'action', 'resource_type', 'resource_id', 'detail', 'actor_connection_id'] as const;

/** The insert of one audit row, whatever runs it: insertAuditEvent, or a chain's step (its values may read an earlier step's row). */
export const auditInsert = (db: Db, row: InsertObject<Database, 'audit_events'>) => db.insertInto('audit_events').values(row);

const INSERT_AUDIT_EVENT = defineWrite<AuditRow>('insertAuditEvent', AUDIT_COLUMNS, auditInsert);

export async function insertAuditEvent(ex: Executor, row: AuditRow): Promise<void> {
  await hot(ex).write(ex, INSERT_AUDIT_EVENT, { ...row, actor_connection_id: row.actor_connection_id ?? null });
}

/**
 * A team's events from `since` on, oldest first, or newest first (the last `limit` events, as an
 * operator reading the trail wants them); either way one walk of the (team_id, at, id) index.
 */
export async function listAuditEvents(ex: Executor, teamId: string, since: string | undefined, limit: number, order: 'oldest' | 'newest' = 'oldest'): Promise<AuditRow[]> {
  let query = ex.selectFrom('audit_events').selectAll().where('team_id', '=', teamId);
  if (since !== undefined) query = query.where('at', '>=', since);
  const direction = order === 'newest' ? 'desc' : 'asc';
  return query.orderBy('at', direction).orderBy('id', direction).limit(limit).execute();
}

/** How many events name `resourceId` (crash tests: every acknowledged write has its event). */
export async function countEventsOf(ex: Executor, resourceId: string): Promise<number> {
  const row = await ex.selectFrom('audit_events').select((eb) => eb.fn.countAll<number | string>().as('n')).where('resource_id', '=', resourceId).executeTakeFirstOrThrow();
  return Number(row.n);
}
