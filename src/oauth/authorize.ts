/**
 * The authorization endpoint's request checks (RFC 6749 3.1, 3.1.2 and 4.1.2.1; RFC 7636 4.3;
 * RFC 9700 2.1 and 4.11), in a fixed order. Until the client and its redirect URI are known to
 * be good, every failure is an error page and never a redirect (no open redirector); after
 * that, failures go back to the client's redirect URI with `error` and `state`. Also issues the
 * authorization code once the user approves (60 seconds, single use, stored by hash).
 */
import type { Clock } from '../clock.ts';
import { newId, newToken, sha256 } from '../ids.ts';
import { clientById } from '../storage/repos/clients.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import { insertCode } from '../storage/repos/codes.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { Executor } from '../storage/types.ts';
import { matchesRegistered, redirectUrisOf } from './clients.ts';
import { CODE_TTL_SECONDS } from './context.ts';
import { OAuthError } from './errors.ts';
import type { OAuthErrorCode } from './errors.ts';
import { parseScope, scopeString } from './scopes.ts';
import type { Scope } from './scopes.ts';

export const CODE_PREFIX = 'rc_ac_';

/** A checked authorization request: what the sign-in and consent pages carry along. */
export interface AuthorizationRequest {
  readonly client: ClientRow;
  readonly redirectUri: string;
  readonly redirectUriGiven: boolean;
  readonly scope: readonly Scope[];
  readonly state?: string;
  readonly codeChallenge?: string;
  /** The parameters to carry through the pages (as received, minus empty ones). */
  readonly params: Readonly<Record<string, string>>;
}

export type AuthorizeCheck =
  | { readonly kind: 'ok'; readonly request: AuthorizationRequest }
  /** Shown to the user; never redirected (unknown client, bad redirect URI). */
  | { readonly kind: 'page'; readonly status: number; readonly title: string; readonly message: string }
  /** Sent back to the client's redirect URI (RFC 6749 4.1.2.1). */
  | { readonly kind: 'redirect'; readonly redirectUri: string; readonly error: OAuthErrorCode; readonly description: string; readonly state?: string };

const page = (title: string, message: string, status = 400): AuthorizeCheck => ({ kind: 'page', status, title, message });

const PARAMETERS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method'];

/** Runs the checks over raw query (or form) parameters. */
export async function checkAuthorizationRequest(ex: Executor, raw: Readonly<Record<string, unknown>>): Promise<AuthorizeCheck> {
  const repeated = Object.entries(raw).filter(([, v]) => Array.isArray(v)).map(([k]) => k);
  const single = (name: string): string | undefined => {
    const v = raw[name];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };

  // 1. The client.
  if (repeated.includes('client_id')) return page('This sign-in link is not valid', 'The link names more than one client.');
  const clientId = single('client_id');
  if (clientId === undefined) return page('This sign-in link is not valid', 'The link does not say which application is asking (client_id is missing).');
  const client = clientId.length <= 64 ? await clientById(ex, clientId) : undefined;
  if (!client) return page('This sign-in link is not valid', 'The application asking for access is not registered with Rollcall.');

  // 2. The redirect URI: exact match with a registered one, or the only one registered.
  if (repeated.includes('redirect_uri')) return page('This sign-in link is not valid', 'The link names more than one return address.');
  const given = single('redirect_uri');
  let redirectUri: string;
  if (given !== undefined) {
    if (!matchesRegistered(client, given)) {
      return page('This sign-in link is not valid', `The return address is not one that ${client.name} registered, so Rollcall will not send you there.`);
    }
    redirectUri = given;
  } else {
    const registered = redirectUrisOf(client);
    if (registered.length !== 1) return page('This sign-in link is not valid', 'The link does not say where to return (redirect_uri is missing).');
    redirectUri = registered[0]!;
  }

  // From here on, errors may be redirected to the client.
  const state = repeated.includes('state') ? undefined : single('state');
  const fail = (error: OAuthErrorCode, description: string): AuthorizeCheck => ({
    kind: 'redirect',
    redirectUri,
    error,
    description,
    ...(state !== undefined ? { state } : {}),
  });
  if (repeated.length > 0) return fail('invalid_request', `Parameters repeated: ${repeated.slice(0, 5).join(', ')}`);

  // 3. The response type: only the code flow.
  const responseType = single('response_type');
  if (responseType === undefined) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');

  // 4. The scope.
  let scope: Scope[];
  try {
    scope = parseScope(single('scope'));
  } catch (error) {
    if (error instanceof OAuthError) return fail(error.error, error.message);
    throw error;
  }

  // 5. PKCE: S256 only (RFC 9700 2.1.1); "plain" is the RFC 7636 default, so a method is required.
  const challenge = single('code_challenge');
  const method = single('code_challenge_method');
  if (challenge === undefined && method !== undefined) return fail('invalid_request', 'code_challenge_method was sent without a code_challenge');
  if (challenge !== undefined) {
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be a base64url SHA-256 digest (43 characters)');
  }

  const params: Record<string, string> = {};
  for (const name of PARAMETERS) {
    const v = single(name);
    if (v !== undefined) params[name] = v;
  }
  return {
    kind: 'ok',
    request: {
      client,
      redirectUri,
      redirectUriGiven: given !== undefined,
      scope,
      ...(state !== undefined ? { state } : {}),
      ...(challenge !== undefined ? { codeChallenge: challenge } : {}),
      params,
    },
  };
}

/** Whether `user` may authorize this client: a client registered for a team serves only that team. */
export const userMayAuthorize = (request: AuthorizationRequest, user: Pick<UserRow, 'team_id'>): boolean =>
  request.client.team_id === null || request.client.team_id === user.team_id;

/** Issues a code for an approved request (RFC 6749 4.1.2): 60 seconds, single use, hashed. */
export async function issueCode(ex: Executor, clock: Clock, request: AuthorizationRequest, user: Pick<UserRow, 'id' | 'team_id'>): Promise<string> {
  const code = newToken(CODE_PREFIX);
  const now = clock.now();
  await insertCode(ex, {
    hash: sha256(code),
    family_id: newId(),
    client_id: request.client.id,
    user_id: user.id,
    team_id: user.team_id,
    redirect_uri: request.redirectUri,
    redirect_uri_given: request.redirectUriGiven ? 1 : 0,
    scope: scopeString(request.scope),
    code_challenge: request.codeChallenge ?? null,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + CODE_TTL_SECONDS * 1000).toISOString(),
    consumed_at: null,
  });
  return code;
}

/** The redirect back to the client, with `iss` (RFC 9207) so it can tell which server answered. */
export function redirectTo(redirectUri: string, issuer: string, values: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) if (v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set('iss', issuer);
  return url.toString();
}
