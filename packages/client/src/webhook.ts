/**
 * Verifies a plain webhook from Rollcall (the Standard Webhooks specification): the
 * `webhook-signature` header holds space-separated `v1,<base64 HMAC-SHA256>` signatures over
 * `<webhook-id>.<webhook-timestamp>.<raw body>` with the key base64-decoded from the `whsec_`
 * secret; any one matching any given secret (rotation overlap) is enough. Compared in constant
 * time; the timestamp must be within the tolerance of now (replays).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.ts';

/** The JSON body Rollcall sends (the webhook contract). */
export interface WebhookEvent {
  /**
   * `user.created`, `group.updated`, `role.updated`, ...: resource type lower-cased, then the
   * change; `request.completed`: an asynchronous request (or one operation of an asynchronous
   * Bulk) finished, its result in `data.outcome`.
   */
  readonly type: `${'user' | 'group' | 'role' | 'entitlement' | 'resourcetype' | (string & {})}.${'created' | 'replaced' | 'updated' | 'deleted' | 'activated' | 'deactivated' | (string & {})}`;
  readonly timestamp: string;
  readonly data: {
    /** The event's place in the team's feed (the SET's seq). */
    readonly sequence: number;
    /** The RFC 9967 event URI. */
    readonly event: string;
    /** The request id of the change; absent when the change came without one (a CLI command, for one). */
    readonly transaction?: string;
    readonly resource: { readonly type: 'User' | 'Group' | 'Role' | 'Entitlement' | 'ResourceType' | (string & {}); readonly id: string; readonly externalId?: string; readonly location: string; readonly version?: string };
    /** The names of the attributes that changed (empty for `request.completed`). */
    readonly changed: readonly string[];
    /**
     * `request.completed` only (RFC 9967 section 2.5.1.3): the result as one BulkResponse
     * operation; `transaction` is the request's Set-Txn (`<Set-Txn>:<i>` for Bulk operation i);
     * `resource.id` is '' and `resource.location` the endpoint when the write created nothing.
     */
    readonly outcome?: { readonly method: string; readonly bulkId?: string; readonly version?: string; readonly location?: string; readonly status: string; readonly response?: unknown };
    /**
     * A group's membership change. `cleared`: every earlier member left first (a PUT, or a PATCH
     * removing path "members"): drop what you hold, then apply `added`.
     */
    readonly members?: { readonly cleared?: boolean; readonly added?: readonly string[]; readonly removed?: readonly string[] };
    /** A role's or an entitlement's mapped groups changed (`role.updated`, `entitlement.updated`): the group ids mapped or unmapped. */
    readonly groups?: { readonly added?: readonly string[]; readonly removed?: readonly string[] };
  };
}

/** Node's IncomingHttpHeaders, a fetch Headers, or a plain record. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest distance between webhook-timestamp and now (default 300 s). */
  toleranceSeconds?: number;
  /** The current time (default Date.now()): a Date or unix milliseconds. */
  now?: Date | number;
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}

function keyOf(secret: string): Buffer {
  const text = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const key = Buffer.from(text, 'base64');
  if (key.length === 0) throw new TypeError('verifyWebhook: empty secret');
  return key;
}

export function verifyWebhook(secretOrSecrets: string | readonly string[], rawBody: string | Uint8Array, headers: HeaderSource, options: VerifyWebhookOptions = {}): WebhookEvent {
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets;
  if (secrets.length === 0) throw new TypeError('verifyWebhook: no secret');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d+$/.test(timestamp.trim())) throw new WebhookVerificationError('webhook-timestamp is not an integer');
  const now = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  const tolerance = options.toleranceSeconds ?? 300;
  const seconds = Number(timestamp.trim());
  if (Math.abs(Math.floor(now / 1000) - seconds) > tolerance) throw new WebhookVerificationError('webhook-timestamp is outside the tolerance window');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp.trim()}.`, 'utf8'), body]);
  const given = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', keyOf(secret)).update(signed).digest();
    // Every candidate is compared (no early exit), each in constant time.
    for (const candidate of given) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) ok = true;
    }
  }
  if (!ok) throw new WebhookVerificationError('no webhook-signature matches');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
  const event = parsed as Partial<WebhookEvent> | null;
  if (!event || typeof event !== 'object' || typeof event.type !== 'string' || !event.data || typeof event.data.sequence !== 'number') {
    throw new WebhookVerificationError('the body is not a Rollcall webhook event');
  }
  return event as WebhookEvent;
}
