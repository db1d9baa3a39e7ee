/**
 * The token, revocation and introspection endpoints as ordered checks (RFC 6749 2.3 and 5,
 * RFC 7009, RFC 7662): parameters well-formed (none repeated, no credentials in the query),
 * exactly one client authentication method, the client authenticated, then the grant or the
 * operation. The HTTP plugin only extracts and renders.
 *
 * Client secrets are 256 random bits: the presented secret is always checked (constant time,
 * against every live secret of the client: client-secrets.ts), so a right secret always works,
 * whatever others sent for the same client id; only a source that fails is throttled, per
 * (client id, address) with exponential backoff (limits.ts). An expired or revoked secret fails
 * and counts exactly as a wrong one. A client id that cannot exist (not 20 characters of
 * [A-Z0-9]) is refused before anything is counted or looked up; one that does not exist is
 * looked up and compared like any other, and counted only per address (client ids are not
 * secrets, RFC 6749 2.2: no answer needs to hide which exist).
 */
import { recordEvent } from '../audit/events.ts';
import { isStorableText } from '../text.ts';
import { userById } from '../storage/repos/users.ts';
import { revokeFamily, revokeToken, tokenByHash } from '../storage/repos/tokens.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import { sha256 } from '../ids.ts';
import { authenticateByAssertion } from './assertion-auth.ts';
import type { AssertionLog } from './assertion-auth.ts';
import { isWellFormedClientId } from './clients.ts';
import { matchSecret } from './client-secrets.ts';
import type { OAuthContext } from './context.ts';
import { invalidClient, invalidRequest, OAuthError, tooManyAttempts } from './errors.ts';
import { GRANTS } from './grants/index.ts';
import type { TokenParams } from './grants/types.ts';
import { required } from './grants/types.ts';
import { liveToken } from './tokens.ts';
import type { GrantedTokens } from './tokens.ts';
import { transact } from '../storage/statements.ts';

/** What the HTTP layer hands over: the form body, the query, and the Authorization header. */
export interface EndpointRequest {
  readonly body: unknown;
  readonly query: Readonly<Record<string, unknown>>;
  readonly authorization: string | undefined;
  readonly requestId: string | null;
  /** The source address (request.ip): failed client authentications are counted per address. */
  readonly address: string;
  /** Where the reason a client assertion failed is logged for the operator (never answered). */
  readonly log?: AssertionLog;
}

/** RFC 6749 3.2 / 5.2: a form body of single-valued string parameters; empty ones count as absent. */
function formParams(body: unknown): TokenParams {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidRequest('Send the parameters as an application/x-www-form-urlencoded body');
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (Array.isArray(value)) throw invalidRequest(`The ${name.slice(0, 40)} parameter is repeated`);
    if (typeof value === 'string' && !isStorableText(value)) throw invalidRequest('A parameter holds text that is not valid Unicode or contains NUL characters');
    if (typeof value === 'string' && value !== '') out[name] = value;
  }
  return out;
}

/** RFC 6749 2.3.1: HTTP Basic with the form-urlencoded client id and secret. */
function basicCredentials(header: string): { id: string; secret: string } {
  const match = /^basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header.trim());
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient(true);
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    throw invalidClient(true);
  }
}

/** Checks the request's shape and authenticates the client (every endpoint here requires one). */
export async function authenticate(ctx: OAuthContext, request: EndpointRequest): Promise<{ client: ClientRow; secretId: string | null; params: TokenParams }> {
  const params = formParams(request.body);
  if ('client_secret' in request.query || 'client_id' in request.query || 'client_assertion' in request.query) {
    throw invalidRequest('Client credentials must not be sent in the query string (RFC 6749 2.3.1)');
  }
  const usedBasic = request.authorization !== undefined && request.authorization.trim() !== '';
  const usedForm = params.client_secret !== undefined;
  if (usedBasic && usedForm) throw invalidRequest('Use one client authentication method, not both');
  if (params.client_assertion !== undefined || params.client_assertion_type !== undefined) {
    if (usedBasic || usedForm) throw invalidRequest('Use one client authentication method, not both');
    return { client: await authenticateByAssertion(ctx, params, request.address, request.log), params, secretId: null };
  }
  let id: string;
  let secret: string;
  if (usedBasic) ({ id, secret } = basicCredentials(request.authorization!));
  else if (params.client_id !== undefined && params.client_secret !== undefined) [id, secret] = [params.client_id, params.client_secret];
  else throw invalidClient(false);
  if (usedBasic && params.client_id !== undefined && params.client_id !== id) throw invalidRequest('client_id differs from the authenticated client');
  if (!isWellFormedClientId(id)) throw invalidClient(usedBasic);
  const found = await ctx.clients.withSecrets(id);
  const authenticated = matchSecret(found, id, secret, ctx.clock.now().toISOString());
  if (!authenticated) {
    // Only a client that exists has failures worth remembering: an unknown id costs
    // no counter, and its source is still limited by its failed requests per address.
    const wait = found ? await ctx.limits.clientFailed(id, request.address) : undefined;
    throw wait === undefined ? invalidClient(usedBasic) : tooManyAttempts(wait);
  }
  await ctx.clients.secretUse.used(ctx.storage.db, ctx.clock, authenticated.secret);
  return { client: authenticated.client, secretId: authenticated.secret.id, params };
}

/** POST /oauth/token. */
export async function token(ctx: OAuthContext, request: EndpointRequest): Promise<GrantedTokens> {
  const { client, secretId, params } = await authenticate(ctx, request);
  const grantType = required(params, 'grant_type');
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant || (grantType === 'password' && !ctx.passwordGrant)) {
    throw new OAuthError('unsupported_grant_type', `grant_type "${grantType.slice(0, 40)}" is not supported`);
  }
  return grant(ctx, { client, secretId, params, requestId: request.requestId, address: request.address });
}

const TOKEN_TYPE_HINTS = new Set(['access_token', 'refresh_token']);

/**
 * POST /oauth/revoke (RFC 7009 2.1): revoking a refresh token ends its whole grant, an access
 * token only itself, a provisioning token (no client) too. Unknown tokens and tokens of other
 * clients answer 200 and change nothing.
 */
export async function revoke(ctx: OAuthContext, request: EndpointRequest): Promise<void> {
  const { client, params } = await authenticate(ctx, request);
  const presented = required(params, 'token');
  const hint = params.token_type_hint;
  if (hint !== undefined && !TOKEN_TYPE_HINTS.has(hint)) {
    throw new OAuthError('unsupported_token_type', `token_type_hint "${hint.slice(0, 40)}" is not supported`);
  }
  if (presented.length > 200) return;
  const row = await tokenByHash(ctx.storage.db, sha256(presented));
  // A provisioning token (issued by an operator, bound to no client) may be revoked by whoever
  // presents it: holding it already grants everything it does, and revoking only takes away.
  if (!row || (row.client_id !== null && row.client_id !== client.id) || row.revoked_at !== null) return;
  await transact(ctx.storage.db, async (trx) => {
    const now = ctx.clock.now().toISOString();
    const whole = row.kind === 'refresh' && row.family_id !== null;
    const revoked = whole ? await revokeFamily(trx, row.family_id!, now) : Number(await revokeToken(trx, row.hash, now));
    await recordEvent(trx, ctx.clock, {
      teamId: row.team_id,
      actor: { via: 'oauth', clientId: client.id, userId: null },
      requestId: request.requestId,
      action: whole ? 'grant_revoked' : 'token_revoked',
      resourceType: 'Token',
      resourceId: row.family_id ?? null,
      detail: { kind: row.kind, reason: 'revoked by the client (RFC 7009)', tokensRevoked: revoked },
    });
  });
}

/**
 * POST /oauth/introspect (RFC 7662 2): `{"active": false}` for anything not live or not issued
 * to the asking client; otherwise what the token grants.
 */
export async function introspect(ctx: OAuthContext, request: EndpointRequest): Promise<Record<string, unknown>> {
  const { client, params } = await authenticate(ctx, request);
  const presented = required(params, 'token');
  const row = await liveToken(ctx.storage.db, ctx.clock, presented);
  if (!row || row.client_id !== client.id) return { active: false };
  const user = row.user_id !== null ? await userById(ctx.storage.db, row.team_id, row.user_id) : undefined;
  return {
    active: true,
    scope: row.scope,
    client_id: row.client_id,
    token_type: row.kind === 'access' ? 'access_token' : 'refresh_token',
    exp: Math.floor(Date.parse(row.expires_at) / 1000),
    iat: Math.floor(Date.parse(row.created_at) / 1000),
    iss: ctx.issuer,
    ...(user ? { sub: user.id, username: user.user_name } : {}),
    team: row.team_id,
  };
}
