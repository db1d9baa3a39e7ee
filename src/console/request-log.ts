/**
 * The SCIM request log of the console. Reading: a team's newest requests, filtered by status
 * (2xx / 4xx / 5xx or one code) and connection (an OAuth client or a provisioning token), paged
 * from newest to oldest by an opaque "before" position. Keeping: the journal's batches written
 * (http/request-journal.ts gathers them off the request path), and every team's log pruned to
 * RETENTION_DAYS or RETENTION_ROWS rows, whichever is smaller. Domain only: parses the filters,
 * names each connection, and calls storage/repos/request-log.ts.
 */
import { inBatches } from '../batches.ts';
import type { Storage } from '../storage/connect.ts';
import { insertRequestLog, listRequestLog, pruneRequestLog, requestLogEdge } from '../storage/repos/request-log.ts';
import type { RequestLogQuery, RequestLogRow } from '../storage/repos/request-log.ts';

export type { RequestLogRow };

export const RETENTION_DAYS = 7;
export const RETENTION_ROWS = 10_000;
/**
 * Rows one prune statement deletes at most, so that pruning never holds SQLite's connection (and
 * with it every team's requests) for long: a busy team leaves far more rows than that every
 * minute, and one statement deleting them all would hold the connection for all of them.
 */
export const PRUNE_BATCH = 1000;

/** Writes a batch of the journal's rows (one multi-row INSERT). */
export const writeRequestLog = (storage: Storage, rows: readonly RequestLogRow[]): Promise<void> => insertRequestLog(storage.db, rows);

/**
 * Prunes a team's log to RETENTION_ROWS rows newer than `cutoff`, PRUNE_BATCH rows per
 * statement, letting the event loop turn between statements. Returns how many rows went.
 */
export async function pruneTeamRequestLog(storage: Storage, teamId: string, cutoff: string): Promise<number> {
  // Found once: rows logged while the pass runs are newer than it, and stay.
  const edge = await requestLogEdge(storage.db, teamId, RETENTION_ROWS);
  return inBatches(() => pruneRequestLog(storage.db, teamId, cutoff, edge, PRUNE_BATCH), PRUNE_BATCH);
}

export interface RequestLogEntry {
  readonly id: string;
  readonly at: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly scimType: string | null;
  readonly latencyMs: number;
  /** `connection:<id>`, `client:<id>` or `token:<id>`, what the connection filter takes. */
  readonly connection: string;
  /** How the connection is shown: the connection's name, else the client id or the token's name. */
  readonly connectionLabel: string;
  readonly requestId: string | null;
  readonly body: string | null;
  /** Why an error answer said it failed (its SCIM `detail`), when it said. */
  readonly detail: string | null;
}

export interface RequestLogFilters {
  /** '2xx', '4xx', '5xx', or a code such as '409'; empty for all. */
  readonly status?: string;
  /** `connection:<id>`, `client:<id>` or `token:<id>`; empty for all. */
  readonly connection?: string;
  /** The `next` of a previous page. */
  readonly before?: string;
  readonly limit?: number;
}

export class RequestLogFilterError extends Error {}

function statusFilter(value: string | undefined): RequestLogQuery['status'] {
  if (value === undefined || value === '') return undefined;
  const cls = /^([1-5])xx$/i.exec(value);
  if (cls) return { class: Number(cls[1]) };
  if (/^[1-5]\d\d$/.test(value)) return { exact: Number(value) };
  throw new RequestLogFilterError('status is 2xx, 4xx, 5xx or a status code such as 409');
}

function connectionFilter(value: string | undefined): RequestLogQuery['connection'] {
  if (value === undefined || value === '') return undefined;
  const match = /^(connection|client|token):([A-Z0-9]{1,40})$/.exec(value);
  if (!match) throw new RequestLogFilterError('connection is connection:<id>, client:<id> or token:<id>');
  return match[1] === 'client' ? { clientId: match[2]! } : match[1] === 'token' ? { tokenId: match[2]! } : { connectionId: match[2]! };
}

function beforeFilter(value: string | undefined): RequestLogQuery['before'] {
  if (value === undefined || value === '') return undefined;
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)_([A-Z0-9]{20})$/.exec(value);
  if (!match) throw new RequestLogFilterError('the page position is not valid');
  return { at: match[1]!, id: match[2]! };
}

export async function requestLogEntries(storage: Storage, teamId: string, filters: RequestLogFilters): Promise<{ entries: RequestLogEntry[]; next: string | null }> {
  const limit = Math.min(Math.max(filters.limit ?? 50, 1), 200);
  const status = statusFilter(filters.status);
  const connection = connectionFilter(filters.connection);
  const before = beforeFilter(filters.before);
  const rows = await listRequestLog(storage.db, teamId, { limit: limit + 1, ...(status ? { status } : {}), ...(connection ? { connection } : {}), ...(before ? { before } : {}) });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    entries: page.map((r) => ({
      id: r.id,
      at: r.at,
      method: r.method,
      path: r.path,
      status: r.status,
      scimType: r.scim_type,
      latencyMs: r.latency_ms,
      connection: r.connection_id ? `connection:${r.connection_id}` : r.client_id !== null ? `client:${r.client_id}` : `token:${r.token_id ?? 'unknown'}`,
      connectionLabel: r.connection_name !== null ? r.connection_name : r.client_id !== null ? `client ${r.client_id}` : r.token_name !== null ? `token "${r.token_name}"` : 'a token',
      requestId: r.request_id,
      body: r.body,
      detail: r.detail ?? null,
    })),
    next: rows.length > limit && last ? `${last.at}_${last.id}` : null,
  };
}
