/**
 * Verifies a Security Event Token from Rollcall (RFC 8417, RFC 9967 SCIM events): ES256,
 * `typ: secevent+jwt`, the issuer and audience, against the JWKS (`/.well-known/jwks.json`,
 * fetched and cached by jose, or a key set the caller holds). Returns the typed claims.
 */
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { SetVerificationError } from './errors.ts';

/** One member of `events`, keyed by the event URI. */
export interface SetEventPayload {
  readonly ref?: string;
  readonly version?: string;
  /** `:notice` events: the names of the attributes that changed. */
  readonly attributes?: readonly string[];
  /** `:full` events: the resource, or a PatchOp for patch. */
  readonly data?: Record<string, unknown>;
}

export interface SetClaims {
  readonly iss: string;
  readonly aud: string | string[];
  readonly iat: number;
  readonly toe?: number;
  /** `<team id>.<seq>`: de-duplicate on it. */
  readonly jti: string;
  readonly txn?: string;
  readonly seq: number;
  readonly sub_id: { readonly format: string; readonly uri?: string; readonly externalId?: string | null; readonly [k: string]: unknown };
  readonly events: Readonly<Record<string, SetEventPayload>>;
}

export interface VerifySetOptions {
  /** The JWKS URL (`<base>/.well-known/jwks.json`); keys are fetched and cached. */
  jwksUrl?: string | URL;
  /** A key set already at hand. */
  jwks?: JSONWebKeySet;
  /** Rollcall's public base URL. */
  issuer: string;
  /** The receiver URL (push) or `<base>/v2/events/poll/<subscription id>` (poll). */
  audience: string;
  /** Seconds of clock skew allowed for time claims (default 60). */
  clockToleranceSeconds?: number;
}

type KeyGetter = ReturnType<typeof createRemoteJWKSet>;
const remote = new Map<string, KeyGetter>();

function keysOf(options: VerifySetOptions): KeyGetter | ReturnType<typeof createLocalJWKSet> {
  if (options.jwks) return createLocalJWKSet(options.jwks);
  if (!options.jwksUrl) throw new TypeError('verifySet: pass jwksUrl or jwks');
  const url = String(options.jwksUrl);
  let keys = remote.get(url);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(url));
    remote.set(url, keys);
  }
  return keys;
}

export async function verifySet(token: string, options: VerifySetOptions): Promise<SetClaims> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, keysOf(options), {
      issuer: options.issuer,
      audience: options.audience,
      algorithms: ['ES256'],
      typ: 'secevent+jwt',
      clockTolerance: options.clockToleranceSeconds ?? 60,
    }));
  } catch (error) {
    throw new SetVerificationError(`SET does not verify: ${(error as Error).message}`, { cause: error });
  }
  const events = payload.events;
  if (events === null || typeof events !== 'object' || Array.isArray(events) || Object.keys(events).length === 0) {
    throw new SetVerificationError('SET has no events claim');
  }
  if (typeof payload.jti !== 'string' || typeof payload.iat !== 'number') throw new SetVerificationError('SET lacks jti or iat');
  if (typeof payload.seq !== 'number') throw new SetVerificationError('SET lacks seq');
  const sub = payload.sub_id as { format?: unknown } | undefined;
  if (!sub || typeof sub !== 'object' || typeof sub.format !== 'string') throw new SetVerificationError('SET lacks sub_id');
  return payload as unknown as SetClaims;
}
