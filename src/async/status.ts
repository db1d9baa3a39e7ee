/**
 * The status document of an asynchronous request (the `Location` of its 202, RFC 9967 section
 * 2.5.1.1 option (a), GET /v2/scim/AsyncRequests/{txn}): where it stands, and once done the
 * outcome, shaped as the completion event's payload (a BulkResponse operation: method, version,
 * location, status, and the SCIM error as `response` on failure) or the whole BulkResponse for a
 * Bulk. RFC 9967 names no format for it: the schema URN is Rollcall's own.
 */
import { outcomeOf } from './queue.ts';
import type { RequestRow } from './queue.ts';

export const ASYNC_REQUEST_SCHEMA = 'urn:rollcall:params:scim:api:messages:2.0:AsyncRequest';

export interface AsyncStatus {
  readonly schemas: [typeof ASYNC_REQUEST_SCHEMA];
  readonly id: string;
  readonly status: 'queued' | 'running' | 'done';
  readonly method: string;
  readonly path: string;
  readonly operations: number;
  readonly completed: number;
  readonly accepted: string;
  readonly finished?: string;
  readonly response?: unknown;
}

export function statusDocument(row: RequestRow): AsyncStatus {
  const outcome = outcomeOf(row);
  let response: unknown;
  if (outcome?.kind === 'bulk') response = outcome.bulk;
  else if (outcome?.kind === 'write') {
    const { resource: _resource, ...operation } = outcome.write;
    response = operation;
  }
  return {
    schemas: [ASYNC_REQUEST_SCHEMA],
    id: row.txn,
    status: row.state === 'done' ? 'done' : row.state === 'running' ? 'running' : 'queued',
    method: row.method,
    path: row.path,
    operations: row.operations,
    completed: row.steps_done,
    accepted: row.created_at,
    ...(row.finished_at !== null ? { finished: row.finished_at } : {}),
    ...(response !== undefined ? { response } : {}),
  };
}
