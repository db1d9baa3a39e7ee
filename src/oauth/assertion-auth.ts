/**
 * Client authentication by a JWT assertion (RFC 7521 4.2, RFC 7523 2.2 and 3) at the token,
 * revocation and introspection endpoints, from two trust sources (DESIGN.md section 11):
 *
 * - `private_key_jwt` (OpenID Connect Core 9): `iss` = `sub` = the client id, `aud` the token
 *   endpoint URL or the issuer identifier, `exp` at most 10 minutes ahead, a `jti`, signed by one
 *   of the client's registered keys (inline, or at its `jwks_uri`).
 * - a federated credential (Entra workload identity federation): the request's `client_id` names
 *   the client; `iss`, `sub` and `aud` are the credential's; the keys are the issuer's (its
 *   `jwks_uri`, or the one its OpenID configuration names); Entra's `uti` stands for `jti`;
 *   lifetime at most 24 hours.
 *
 * Checks in a fixed order, each failure the same `invalid_client` (RFC 7521 4.2.1) with nothing
 * that helps an attacker; the reason goes to the operator's log. Assertions over 8 KiB are refused
 * before anything is parsed. Signature first (RS256, PS256, ES256 only: never `none` or HMAC,
 * whatever the header says), then the claims with 60 s of clock skew, and last the assertion's
 * id, remembered in the database until `exp` so a replay fails on every instance. A failure
 * counts against the client's and the caller's limits exactly as a wrong secret does (limits.ts).
 * Fetching keys is the RemoteKeys's business (remote-keys.ts): a slow or failing issuer fails
 * only the requests that need it.
 */
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import type { JWK, JWTPayload, ProtectedHeaderParameters } from 'jose';
import { clientKeysOf, federationFor, purgeUsedAssertions, rememberAssertion } from '../storage/repos/client-trust.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import { ASSERTION_ALGS, isStrongRsaModulus, MAX_KEYS } from './client-trust.ts';
import { isWellFormedClientId } from './clients.ts';
import { isStorableText } from '../text.ts';
import type { OAuthContext } from './context.ts';
import { invalidClient, invalidRequest, tooManyAttempts } from './errors.ts';
import type { OAuthError } from './errors.ts';
import type { TokenParams } from './grants/types.ts';
import type { KeySource } from './remote-keys.ts';

/** RFC 7523 2.2: the one assertion type this server takes. */
export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Assertions longer than this are refused unread (Entra's are about 1.5 KiB). */
export const MAX_ASSERTION_BYTES = 8 * 1024;
/** Clock skew allowed on `exp`, `nbf` and `iat`. */
export const SKEW_SECONDS = 60;
/** private_key_jwt: `exp` at most this far ahead (the client signs each assertion just before use). */
export const PRIVATE_KEY_JWT_MAX_SECONDS = 10 * 60;
/** Federated assertions: at most this long-lived (Entra's live 60 to 90 minutes). */
export const FEDERATED_MAX_SECONDS = 24 * 60 * 60;
/** Keys tried for one assertion at most (several keys without a `kid` in the header). */
const MAX_CANDIDATES = MAX_KEYS;

/** Where the operator reads why an assertion failed (the request's logger). */
export interface AssertionLog {
  warn(detail: Record<string, unknown>, message: string): void;
}

/** An assertion that does not authenticate: `reason` is for the operator's log only. */
class Rejected extends Error {}

function reject(reason: string): never {
  throw new Rejected(reason);
}

type Method = 'private_key_jwt' | 'federated';

/** What an assertion claims before its signature is checked: only used to find the keys. */
interface Unverified {
  readonly header: ProtectedHeaderParameters;
  readonly payload: JWTPayload;
}

function decode(assertion: string): Unverified {
  try {
    return { header: decodeProtectedHeader(assertion), payload: decodeJwt(assertion) };
  } catch {
    return reject('the assertion is not a compact JWS with a JSON claims set');
  }
}

type Alg = (typeof ASSERTION_ALGS)[number];

/** The header's algorithm when it is one this server accepts (never `none`, never HMAC). */
function acceptedAlg(header: ProtectedHeaderParameters): Alg {
  const alg = header.alg;
  if (typeof alg !== 'string' || !(ASSERTION_ALGS as readonly string[]).includes(alg)) reject(`the algorithm ${JSON.stringify(alg ?? null)} is not accepted`);
  return alg as Alg;
}

/** The keys that may verify an assertion signed with `alg` under `kid` (RFC 7517 4.2-4.5). */
function usableKeys(keys: readonly JWK[], alg: Alg, kid: string | undefined): JWK[] {
  const kty = alg === 'ES256' ? 'EC' : 'RSA';
  return keys.filter(
    (k) =>
      k.kty === kty &&
      (kty !== 'EC' || k.crv === 'P-256') &&
      // A fetched set is held to the size an inline one is registered with.
      (kty !== 'RSA' || isStrongRsaModulus(k.n)) &&
      (kid === undefined || k.kid === kid) &&
      (k.alg === undefined || k.alg === alg) &&
      (k.use === undefined || k.use === 'sig') &&
      (k.key_ops === undefined || (Array.isArray(k.key_ops) && k.key_ops.includes('verify'))),
  );
}

async function keySet(ctx: OAuthContext, source: KeySource, kid: string | undefined): Promise<JWK[]> {
  try {
    const set = await ctx.remoteKeys.keySet(source, kid);
    return Array.isArray(set.keys) ? set.keys : [];
  } catch (error) {
    return reject(`no key set from ${'jwksUri' in source ? source.jwksUri : source.issuer}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The keys the client registered for private_key_jwt: inline sets, and those at its URLs. */
async function clientKeys(ctx: OAuthContext, client: ClientRow, kid: string | undefined): Promise<JWK[]> {
  const rows = await clientKeysOf(ctx.storage.db, client.id);
  if (rows.length === 0) reject('the client has registered no keys');
  const keys: JWK[] = [];
  for (const row of rows) {
    if (row.jwks !== null) keys.push(...(JSON.parse(row.jwks) as { keys: JWK[] }).keys);
    else if (row.jwks_uri !== null) {
      // A URL is asked only while the inline keys have no key the header names.
      if (!hasKid(keys, kid)) keys.push(...(await keySet(ctx, { jwksUri: row.jwks_uri }, kid)));
    }
  }
  return keys;
}

const hasKid = (keys: readonly JWK[], kid: string | undefined): boolean => kid !== undefined && keys.some((k) => k.kid === kid);

/** Verifies the signature with the first candidate key that does; the claims set it signed. */
async function verified(ctx: OAuthContext, assertion: string, alg: Alg, kid: string | undefined, keys: readonly JWK[]): Promise<JWTPayload> {
  const candidates = usableKeys(keys, alg, kid).slice(0, MAX_CANDIDATES);
  if (candidates.length === 0) reject(`no registered key matches the header (kid ${JSON.stringify(kid ?? null)}, alg ${alg})`);
  let last = 'the signature does not verify';
  for (const jwk of candidates) {
    try {
      const key = await importJWK(jwk, alg);
      const { payload } = await jwtVerify(assertion, key, {
        algorithms: [...ASSERTION_ALGS],
        currentDate: ctx.clock.now(),
        clockTolerance: SKEW_SECONDS,
        requiredClaims: ['exp'],
      });
      return payload;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
  }
  return reject(last);
}

const audiences = (payload: JWTPayload): string[] => (typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : []);

/** The time checks of RFC 7523 3 items 4-6 (jose has checked `exp` and `nbf` with the skew). */
function checkTimes(ctx: OAuthContext, payload: JWTPayload, method: Method): number {
  const now = Math.floor(ctx.clock.now().getTime() / 1000);
  const exp = typeof payload.exp === 'number' ? payload.exp : reject('"exp" is missing');
  if (payload.iat !== undefined && (typeof payload.iat !== 'number' || payload.iat > now + SKEW_SECONDS)) reject('"iat" is in the future');
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > now + SKEW_SECONDS)) reject('"nbf" is in the future');
  if (method === 'private_key_jwt') {
    if (exp > now + PRIVATE_KEY_JWT_MAX_SECONDS + SKEW_SECONDS) reject(`"exp" is more than ${PRIVATE_KEY_JWT_MAX_SECONDS} s ahead`);
  } else {
    const start = Math.min(now, payload.iat ?? now, payload.nbf ?? now);
    if (exp - start > FEDERATED_MAX_SECONDS + SKEW_SECONDS) reject(`the assertion lives longer than ${FEDERATED_MAX_SECONDS} s`);
  }
  return exp;
}

/** The assertion's id: `jti` (RFC 7519 4.1.7), or Entra's `uti` for a federated one. */
function assertionId(payload: JWTPayload, method: Method): string {
  const id = payload.jti ?? (method === 'federated' ? (payload as { uti?: unknown }).uti : undefined);
  if (typeof id !== 'string' || id === '' || id.length > 255 || !isStorableText(id)) return reject(method === 'federated' ? 'neither "jti" nor "uti" is present' : '"jti" is missing');
  return id;
}

/** A claim short enough and clean enough to be compared with stored text. */
const isLookupText = (value: string): boolean => value !== '' && value.length <= 2000 && isStorableText(value);

/** Which client the assertion is for, and how it is to be trusted. */
function methodOf(payload: JWTPayload, clientIdParam: string | undefined): { clientId: string; method: Method } {
  const { iss, sub } = payload;
  if (typeof iss !== 'string' || typeof sub !== 'string') return reject('"iss" or "sub" is missing');
  // They are looked up in the database: text it cannot hold (NUL, broken UTF-16) is refused first.
  if (!isLookupText(iss) || !isLookupText(sub)) return reject('"iss" or "sub" is not text that can name a credential');
  if (iss === sub && isWellFormedClientId(iss)) {
    if (clientIdParam !== undefined && clientIdParam !== iss) reject('client_id differs from the assertion\'s "iss"');
    return { clientId: iss, method: 'private_key_jwt' };
  }
  if (clientIdParam === undefined) return reject('a federated assertion needs the client_id parameter');
  return { clientId: clientIdParam, method: 'federated' };
}

/** Checks one assertion for `client`; answers nothing, throws Rejected with the reason. */
async function check(ctx: OAuthContext, client: ClientRow, method: Method, assertion: string, unverified: Unverified): Promise<void> {
  const { header, payload: claimed } = unverified;
  const alg = acceptedAlg(header);
  let keys: JWK[];
  let audience: readonly string[];
  if (method === 'private_key_jwt') {
    keys = await clientKeys(ctx, client, header.kid);
    audience = [`${ctx.issuer}/oauth/token`, ctx.issuer];
  } else {
    const federation = await federationFor(ctx.storage.db, client.id, String(claimed.iss), String(claimed.sub));
    if (!federation) return reject('the client trusts no such issuer and subject');
    keys = await keySet(ctx, federation.jwks_uri !== null ? { jwksUri: federation.jwks_uri } : { issuer: federation.issuer }, header.kid);
    audience = [federation.audience];
  }
  const payload = await verified(ctx, assertion, alg, header.kid, keys);
  // The keys were chosen by the claims read before the signature was checked: the signed ones must agree.
  if (payload.iss !== claimed.iss || payload.sub !== claimed.sub) reject('"iss" or "sub" changed');
  if (method === 'private_key_jwt' && (payload.iss !== client.id || payload.sub !== client.id)) reject('"iss" and "sub" must be the client id');
  if (!audiences(payload).some((a) => audience.includes(a))) reject('"aud" names neither audience this server accepts');
  const exp = checkTimes(ctx, payload, method);
  const id = assertionId(payload, method);
  const expiresAt = new Date((exp + SKEW_SECONDS) * 1000).toISOString();
  if (!(await rememberAssertion(ctx.storage.db, String(payload.iss), id, expiresAt))) reject('the assertion was already used (replay)');
  await purgeUsedAssertions(ctx.storage.db, ctx.clock.now().toISOString());
}

/**
 * The client a `client_assertion` authenticates (RFC 7521 4.2), or the OAuthError to answer.
 * An unknown `client_assertion_type` is `invalid_client`: it names an authentication method this
 * server does not support, which RFC 6749 5.2 and RFC 7521 4.2.1 both answer with invalid_client.
 */
export async function authenticateByAssertion(
  ctx: OAuthContext,
  params: TokenParams,
  address: string,
  log: AssertionLog | undefined,
): Promise<ClientRow> {
  const type = params.client_assertion_type;
  const assertion = params.client_assertion;
  if (type === undefined || assertion === undefined) throw invalidRequest('client_assertion and client_assertion_type go together (RFC 7521 4.2)');
  if (type !== JWT_BEARER) throw invalidClient(true);
  const clientIdParam = params.client_id;
  let clientId = clientIdParam;
  let client: ClientRow | undefined;
  try {
    if (Buffer.byteLength(assertion) > MAX_ASSERTION_BYTES) {
      // Refused unread; the client it claims to be (if it names one) still counts the failure.
      if (clientIdParam !== undefined && isWellFormedClientId(clientIdParam)) client = await ctx.clients.byId(clientIdParam);
      reject(`the assertion is over ${MAX_ASSERTION_BYTES} bytes`);
    }
    const unverified = decode(assertion);
    const target = methodOf(unverified.payload, clientIdParam);
    clientId = target.clientId;
    if (!isWellFormedClientId(clientId)) reject('the client id cannot exist');
    client = await ctx.clients.byId(clientId);
    if (!client) reject('no such client');
    await check(ctx, client, target.method, assertion, unverified);
    return client;
  } catch (error) {
    if (!(error instanceof Rejected)) throw error;
    log?.warn({ clientId: clientId?.slice(0, 40) ?? null, reason: error.message }, 'client assertion refused');
    throw await failed(ctx, client, address);
  }
}

/** A failed assertion counts like a wrong secret: only for a client that exists, per (client, address). */
async function failed(ctx: OAuthContext, client: ClientRow | undefined, address: string): Promise<OAuthError> {
  const wait = client ? await ctx.limits.clientFailed(client.id, address) : undefined;
  return wait === undefined ? invalidClient(true) : tooManyAttempts(wait);
}
