/**
 * A webhook subscription's signing secrets (Standard Webhooks: `whsec_` + base64 of 32 random
 * bytes, the HMAC key): made at creation and at rotation and shown only then; stored sealed under
 * the instance's master key (keys/sealed.ts, bound to the subscription's id), never in clear and
 * never in a view. A rotation makes a new current secret and keeps the one it replaces signing
 * beside it for an overlap (default one day, at most seven), so receivers can switch without a
 * refused delivery; a secret replaced before its overlap ended is dropped (two at most). Two
 * rotations at once: one wins, the other is a 409 (retry) and changes nothing. Rotation
 * writes its audit row (`subscription_secret_rotated`) in its transaction, like every change to a
 * subscription. It owns no SQL (storage/repos/subscriptions.ts) and no HTTP.
 */
import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../keys/sealed.ts';
import { SealError } from '../keys/sealed.ts';
import { replaceWebhookSecret, webhookSecretsOf } from '../storage/repos/subscriptions.ts';
import type { Db } from '../storage/types.ts';
import { iso } from '../clock.ts';
import { conflict, invalidValue } from './errors.ts';
import { changeSubscription, CLI_ORIGIN } from './subscriptions.ts';
import type { ChangeOrigin, SubscriptionDeps, SubscriptionView } from './subscriptions.ts';

/** The use the secrets' sealing key is derived for (KeyStore.box). */
export const WEBHOOK_SECRETS = 'webhook secrets';

export const DEFAULT_OVERLAP_SECONDS = 86_400;
export const MAX_OVERLAP_SECONDS = 7 * 86_400;

const PREFIX = 'whsec_';

/** What a sealed secret is bound to: its subscription. */
const contextOf = (subscriptionId: string): string => `event_subscriptions:${subscriptionId}:webhook`;

/** A new secret as shown once (`whsec_...`), and its sealed form for the subscription's row. */
export function newWebhookSecret(box: SecretBox, subscriptionId: string): { secret: string; sealed: string } {
  const key = randomBytes(32);
  return { secret: `${PREFIX}${key.toString('base64')}`, sealed: box.seal(contextOf(subscriptionId), key) };
}

/** A stored secret could not be opened (the database was copied under another SECRET_KEY): rotate it. */
export class WebhookSecretUnreadable extends Error {}

/**
 * The HMAC keys a webhook attempt is signed with now, newest first: the current secret, and the
 * previous one while its overlap lasts. A previous secret that cannot be opened is left out; an
 * unreadable current one fails the attempt (WebhookSecretUnreadable).
 */
export async function liveWebhookKeys(db: Db, box: SecretBox, subscriptionId: string, now: Date): Promise<Buffer[]> {
  const row = await webhookSecretsOf(db, subscriptionId);
  if (!row?.webhook_secret) throw new WebhookSecretUnreadable(`subscription ${subscriptionId} has no webhook secret`);
  const open = (text: string): Buffer | undefined => {
    try {
      return box.open(contextOf(subscriptionId), text);
    } catch (error) {
      if (error instanceof SealError) return undefined;
      throw error;
    }
  };
  const current = open(row.webhook_secret);
  if (current === undefined) throw new WebhookSecretUnreadable(`the webhook secret of subscription ${subscriptionId} cannot be opened with this master key: rotate it`);
  const keys = [current];
  if (row.webhook_previous_secret && row.webhook_previous_until && Date.parse(row.webhook_previous_until) > now.getTime()) {
    const previous = open(row.webhook_previous_secret);
    if (previous) keys.push(previous);
  }
  return keys;
}

/** The overlap a rotation asks for (seconds), checked: a whole number from 0 to seven days. */
export function overlapOf(value: unknown): number {
  if (value === undefined) return DEFAULT_OVERLAP_SECONDS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_OVERLAP_SECONDS) {
    throw invalidValue(`overlapSeconds must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS} (7 days)`);
  }
  return value;
}

export interface RotatedSecret {
  readonly subscription: SubscriptionView;
  /** The new secret, shown only now. */
  readonly secret: string;
  /** Until when the replaced secret still signs (beside the new one). */
  readonly previousValidUntil: string;
}

/** Gives a webhook subscription a new secret; the replaced one signs too until the overlap ends. */
export async function rotateWebhookSecret(
  deps: SubscriptionDeps & { readonly box: SecretBox },
  teamId: string,
  id: string,
  /** Seconds the replaced secret keeps signing (checked: 0 to seven days; default one day). */
  overlapSeconds?: unknown,
  by: ChangeOrigin = CLI_ORIGIN,
): Promise<RotatedSecret> {
  const overlap = overlapOf(overlapSeconds);
  let secret = '';
  let until = '';
  const subscription = await changeSubscription(deps, teamId, id, by, 'subscription_secret_rotated', async (trx, row) => {
    if (row.format !== 'webhook') throw invalidValue(`subscription ${id} sends SETs (format "set"), which are signed with Rollcall's published keys: only a webhook subscription has a secret to rotate`);
    const now = deps.clock.now();
    until = new Date(now.getTime() + overlap * 1000).toISOString();
    const made = newWebhookSecret(deps.box, id);
    secret = made.secret;
    // Conditional on the secret read: a rotation that committed meanwhile made it "previous"
    // material this one would overwrite with a stale one, leaving that rotation's secret unused.
    const replaced = await replaceWebhookSecret(trx, teamId, id, row.webhook_secret, { webhook_secret: made.sealed, webhook_previous_secret: row.webhook_secret, webhook_previous_until: until, updated_at: iso(deps.clock) });
    if (!replaced) throw conflict(`the secret of subscription ${id} was rotated concurrently, retry: nothing was changed`);
    return { overlapSeconds: overlap, previousValidUntil: until };
  });
  return { subscription, secret, previousValidUntil: until };
}
