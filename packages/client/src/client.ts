/** The Rollcall client: SCIM resources, the event feed, discovery. */
import { Events } from './events.ts';
import { Transport } from './http.ts';
import type { TransportOptions } from './http.ts';
import { ResourceClient } from './resources.ts';
import { CORE_GROUP, CORE_USER } from './types.ts';
import type { Extensions, GenericResource, Group, User } from './types.ts';

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
}
