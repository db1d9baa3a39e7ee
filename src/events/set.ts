/**
 * Events as Security Event Tokens (RFC 8417, RFC 9967 section 2): each feed row
 * renders as one SET whose `events` member is keyed by the RFC 9967 provisioning event URI, with
 * `iss` (the public base URL), `iat` (when the change happened, so a retried SET is the same
 * SET), `jti` (team and seq: stable across retries, for de-duplication), `aud`, `txn` (the
 * request id of the change), `toe`, and `sub_id` in the `scim` subject identifier format RFC 9967
 * registers under RFC 9493 (the resource's relative `uri`, and its `externalId` when it has one).
 * Rollcall adds one private claim, `seq`, the event's place in the team's feed.
 *
 * `:notice` variants name the changed attributes; `:full` variants (only when the subscription
 * asked) carry the resource as stored (never a password: the stored document has none) or, for
 * a PATCH, a PatchOp that turns the previous state into the new one. Signed ES256 (RFC 7518
 * 3.4) with `jose` (a well-kept JOSE library, no hand-built JWS), `kid` naming the key,
 * `typ` secevent+jwt (RFC 8417 section 2.3).
 *
 * An asyncresp row (feed.ts recordAsyncResponse) renders as the RFC 9967 section 2.5.1.3 event:
 * its stored outcome as the payload, with no `:full` variant.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import type { JWK } from 'jose';
import type { KeyStore } from '../keys/store.ts';
import type { EventRow } from '../storage/repos/events.ts';
import { ASYNC_RESPONSE, asyncOutcomeOf, asyncSubjectPath, deltaAttribute, resourcePath, SIGNAL, signalOf } from './feed.ts';
import type { ChangeType, EventType, MembersDelta } from './feed.ts';

const PROV = 'urn:ietf:params:scim:event:prov';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
/** RFC 9967 section 2.5.1.3: an asynchronous request's completion (one per Bulk operation). */
export const ASYNC_RESPONSE_URI = 'urn:ietf:params:scim:event:misc:asyncresp';

/** The RFC 9967 event URI of a feed row's type, `:full` or `:notice` where the RFC has both. */
export function eventUri(type: EventType, full: boolean): string {
  switch (type) {
    case ASYNC_RESPONSE:
      return ASYNC_RESPONSE_URI;
    case 'create':
    case 'put':
    case 'patch':
      return `${PROV}:${type}:${full ? 'full' : 'notice'}`;
    default:
      return `${PROV}:${type}`;
  }
}

/** Every event URI Rollcall emits (ServiceProviderConfig advertises these). */
export const EVENT_URIS: readonly string[] = [
  ...(['create', 'put', 'patch'] as const).flatMap((t) => [eventUri(t, false), eventUri(t, true)]),
  eventUri('delete', false),
  eventUri('activate', false),
  eventUri('deactivate', false),
  ASYNC_RESPONSE_URI,
];

/** The delivery methods Rollcall serves: RFC 8935 push and RFC 8936 poll. */
export const EVENT_DELIVERY_METHODS: readonly string[] = ['urn:ietf:rfc:8935', 'urn:ietf:rfc:8936'];

export interface ClaimsOptions {
  readonly issuer: string;
  /** The receiver URL or the poll URL; an SSF stream's own audience, which may be several. */
  readonly audience: string | readonly string[];
  /** Whether the subscription asked for the `:full` variants. */
  readonly full: boolean;
}

const parse = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T));

/** The resource as a `:full` create or put carries it. */
function resourceOf(row: EventRow, base: string): Record<string, unknown> {
  const document = parse<Record<string, unknown>>(row.data) ?? {};
  const members = parse<MembersDelta>(row.members);
  return {
    ...document,
    id: row.resource_id,
    ...(row.resource_type === 'Group' && members ? { members: (members.added ?? []).map((value) => ({ value })) } : {}),
    meta: { resourceType: row.resource_type, version: `W/"${row.version}"`, location: `${base}/v2/scim${resourcePath(row.resource_type, row.resource_id)}` },
  };
}

/**
 * A PatchOp message that turns the previous state into this one (`:full` patch events). The
 * MembersDelta is a group's `members`, or, on a role or an entitlement, the groups mapped to it.
 */
function patchOf(row: EventRow): Record<string, unknown> {
  const document = parse<Record<string, unknown>>(row.data) ?? {};
  const members = parse<MembersDelta>(row.members);
  const delta = deltaAttribute(row.resource_type);
  const operations: Record<string, unknown>[] = [];
  for (const name of parse<string[]>(row.changed) ?? []) {
    if (name === delta || name === 'password') continue;
    const [urn, attr] = name.startsWith('urn:') ? [name.slice(0, name.lastIndexOf(':')), name.slice(name.lastIndexOf(':') + 1)] : [undefined, name];
    const value = urn ? (document[urn] as Record<string, unknown> | undefined)?.[attr] : document[attr];
    operations.push(value === undefined ? { op: 'remove', path: name } : { op: 'replace', path: name, value });
  }
  if (members?.cleared) operations.push({ op: 'remove', path: delta });
  if (members?.removed?.length) for (const id of members.removed) operations.push({ op: 'remove', path: `${delta}[value eq "${id}"]` });
  if (members?.added?.length) operations.push({ op: 'add', path: delta, value: members.added.map((value) => ({ value })) });
  return { schemas: [PATCH_OP], Operations: operations };
}

/**
 * The SET of an asyncresp row (RFC 9967 section 2.5.1.3): the outcome as the event's payload
 * (method, bulkId, version, status, response on error, location), the same whatever the
 * subscription's `full`; `sub_id.uri` the resource, or the endpoint when the write created nothing.
 */
function asyncResponseClaims(row: EventRow, options: ClaimsOptions): Record<string, unknown> {
  return envelope(row, options, { format: 'scim', uri: asyncSubjectPath(row) }, { [ASYNC_RESPONSE_URI]: asyncOutcomeOf(row) });
}

/** The claims every SET carries around its subject and its event (RFC 8417 section 2.2, RFC 9967 section 2). */
function envelope(row: EventRow, options: ClaimsOptions, subject: Record<string, unknown>, events: Record<string, unknown>): Record<string, unknown> {
  const seconds = Math.floor(Date.parse(row.at) / 1000);
  return {
    iss: options.issuer,
    iat: seconds,
    toe: seconds,
    jti: `${row.team_id}.${row.seq}`,
    aud: options.audience,
    ...(row.txn ? { txn: row.txn } : {}),
    sub_id: subject,
    seq: row.seq,
    events,
  };
}

/**
 * The SET of a Shared Signal row (OpenID SSF 1.0 section 4): `iss`, `aud` (the stream's),
 * `iat`, `jti` (team and seq, as every SET), `txn` when the change had one, `sub_id` at the top
 * level (SSF 1.0 requires it there), and exactly one event with its payload. No `toe` or `seq`:
 * SSF receivers match on `jti`.
 */
export function signalClaims(row: EventRow, options: { readonly issuer: string; readonly audience: string | readonly string[] }): Record<string, unknown> {
  const signal = signalOf(row);
  return {
    iss: options.issuer,
    iat: Math.floor(Date.parse(row.at) / 1000),
    jti: `${row.team_id}.${row.seq}`,
    aud: options.audience,
    ...(row.txn ? { txn: row.txn } : {}),
    sub_id: signal.subject,
    events: { [signal.event]: signal.payload },
  };
}

/** The SET's claims for one feed row (unsigned). */
export function setClaims(row: EventRow, options: ClaimsOptions): Record<string, unknown> {
  if (row.type === ASYNC_RESPONSE) return asyncResponseClaims(row, options);
  if (row.type === SIGNAL) return signalClaims(row, options);
  const type = row.type as ChangeType;
  const ref = `${options.issuer}/v2/scim${resourcePath(row.resource_type, row.resource_id)}`;
  const version = `W/"${row.version}"`;
  let payload: Record<string, unknown>;
  if (type === 'create' || type === 'put') {
    payload = options.full ? { ref, version, data: resourceOf(row, options.issuer) } : { ref, version, attributes: parse<string[]>(row.changed) ?? [] };
  } else if (type === 'patch') {
    payload = options.full ? { ref, version, data: patchOf(row) } : { ref, version, attributes: parse<string[]>(row.changed) ?? [] };
  } else {
    payload = { ref, version };
  }
  const subject = { format: 'scim', uri: resourcePath(row.resource_type, row.resource_id), ...(row.external_id ? { externalId: row.external_id } : {}) };
  return envelope(row, options, subject, { [eventUri(type, options.full)]: payload });
}

interface SigningKeys {
  readonly version: number;
  readonly signing: { readonly kid: string; readonly key: KeyObject };
}

/** Signs SETs with the newest events key this instance loaded (rebuilt when the store reloads) and publishes every live one. */
export class SetSigner {
  readonly #keys: KeyStore;
  #cached: Promise<SigningKeys> | undefined;
  #cachedVersion = -1;

  constructor(keys: KeyStore) {
    this.#keys = keys;
  }

  async #current(): Promise<SigningKeys> {
    await this.#keys.refreshIfStale();
    const version = this.#keys.version;
    if (this.#cached === undefined || this.#cachedVersion !== version) {
      this.#cachedVersion = version;
      const [newest] = this.#keys.keys('events');
      this.#cached = Promise.resolve({ version, signing: { kid: newest!.id, key: createPrivateKey({ key: newest!.secret, format: 'der', type: 'pkcs8' }) } });
    }
    return this.#cached;
  }

  /**
   * The public keys as a JWK Set (RFC 7517 section 5): /.well-known/jwks.json. Read from the
   * database on every call (a cheap query; receivers cache the answer), so the set also holds
   * keys other instances sign with that this one has not loaded yet.
   */
  async jwks(): Promise<{ keys: JWK[] }> {
    const live = await this.#keys.readLive('events');
    const keys = await Promise.all(
      live.map(async (k) => ({ ...(await exportJWK(createPublicKey(createPrivateKey({ key: k.secret, format: 'der', type: 'pkcs8' })))), kid: k.id, alg: 'ES256', use: 'sig' })),
    );
    return { keys };
  }

  /** `claims` as a compact JWS. */
  async sign(claims: Record<string, unknown>): Promise<string> {
    const { signing } = await this.#current();
    return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: signing.kid, typ: 'secevent+jwt' }).sign(signing.key);
  }
}
