/** The Rollcall client: SCIM resources, the event feed, discovery. */
import { Events } from './events.ts';
import { Transport } from './http.ts';
import type { TransportOptions } from './http.ts';
import { ResourceClient } from './resources.ts';
import { BULK_REQUEST, CORE_GROUP, CORE_USER } from './types.ts';
import type { AsyncAccepted, AsyncRequestStatus, BulkOperation, BulkResponse, Extensions, GenericResource, Group, User } from './types.ts';

export type RollcallOptions = TransportOptions;

/** A /ResourceTypes entry (RFC 7643 section 6). */
export interface ResourceType {
  readonly id?: string;
  readonly name: string;
  readonly endpoint: string;
  readonly schema: string;
  readonly description?: string;
  readonly schemaExtensions?: readonly { readonly schema: string; readonly required: boolean }[];
}

export interface BulkOptions {
  /** Stop after this many failed operations (RFC 7644 3.7 failOnErrors); later ones are not run. */
  failOnErrors?: number;
  /**
   * Send `Prefer: respond-async` (RFC 9967): the server queues the Bulk and answers 202 with its
   * txn and status URL. A server that cannot queue it (the team's queue is full) runs it at once
   * and answers the BulkResponse: check which one came back (`'txn' in result`).
   */
  respondAsync?: boolean;
  /** With respondAsync: `wait=N` (RFC 7240), seconds the server may wait to answer the outcome itself (Rollcall: at most 10). */
  wait?: number;
  signal?: AbortSignal;
}

export class Rollcall<UX extends Extensions = Extensions, GX extends Extensions = Extensions> {
  readonly http: Transport;
  readonly users: ResourceClient<User<UX>>;
  readonly groups: ResourceClient<Group<GX>>;
  readonly events: Events;

  constructor(options: RollcallOptions) {
    this.http = new Transport(options);
    this.users = new ResourceClient(this.http, '/Users', CORE_USER);
    this.groups = new ResourceClient(this.http, '/Groups', CORE_GROUP);
    this.events = new Events(this.http);
  }

  /** The client for another endpoint of the team's resource types (see resourceTypes()). */
  resources<R extends GenericResource = GenericResource>(endpoint: string, schema?: string): ResourceClient<R> {
    return new ResourceClient<R>(this.http, endpoint, schema);
  }

  /** The team's resource types (GET /v2/scim/ResourceTypes). */
  async resourceTypes(): Promise<ResourceType[]> {
    const body = (await this.http.request<{ Resources?: ResourceType[] } | ResourceType[]>({ method: 'GET', path: '/v2/scim/ResourceTypes' })).body;
    return Array.isArray(body) ? body : (body.Resources ?? []);
  }

  /**
   * POST /v2/scim/Bulk (RFC 7644 section 3.7): the operations run in dependency order, each its
   * own transaction; the answer has each one's result in request order. Not retried after a
   * network error (operations may have been applied); a 429 is retried like any request.
   */
  bulk(operations: readonly BulkOperation[], options?: BulkOptions & { respondAsync?: false }): Promise<BulkResponse>;
  bulk(operations: readonly BulkOperation[], options: BulkOptions & { respondAsync: true }): Promise<AsyncAccepted | BulkResponse>;
  bulk(operations: readonly BulkOperation[], options?: BulkOptions): Promise<AsyncAccepted | BulkResponse>;
  async bulk(operations: readonly BulkOperation[], options: BulkOptions = {}): Promise<AsyncAccepted | BulkResponse> {
    const body = { schemas: [BULK_REQUEST], ...(options.failOnErrors !== undefined ? { failOnErrors: options.failOnErrors } : {}), Operations: operations };
    const prefer = options.respondAsync ? `respond-async${options.wait !== undefined ? `, wait=${options.wait}` : ''}` : undefined;
    const answer = await this.http.request<BulkResponse>({ method: 'POST', path: '/v2/scim/Bulk', body, ...(prefer ? { headers: { prefer } } : {}), ...(options.signal ? { signal: options.signal } : {}) });
    if (answer.status === 202) return { txn: answer.headers.get('set-txn') ?? '', location: answer.headers.get('location') ?? '' };
    return answer.body;
  }

  /**
   * The status document of an asynchronous request: GET its status URL, given as the txn
   * (Set-Txn) or the Location of the 202. `status` is 'done' once every operation has run; its
   * `response` is then the outcome.
   */
  async asyncRequest(txnOrLocation: string, signal?: AbortSignal): Promise<AsyncRequestStatus> {
    const path = /^https?:\/\//.test(txnOrLocation) ? txnOrLocation : `/v2/scim/AsyncRequests/${encodeURIComponent(txnOrLocation)}`;
    return (await this.http.request<AsyncRequestStatus>({ method: 'GET', path, ...(signal ? { signal } : {}) })).body;
  }
}
