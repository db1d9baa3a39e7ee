/**
 * What every grant handler shares: the authenticated client, the form parameters and the request
 * id in, tokens out; and the one way tokens are minted, together with their audit event.
 */
import type { Actor } from '../../audit/events.ts';
import { recordEvent } from '../../audit/events.ts';
import type { ClientRow } from '../../storage/repos/clients.ts';
import type { Executor } from '../../storage/types.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../../storage/types.ts';
import type { OAuthContext } from '../context.ts';
import { invalidRequest } from '../errors.ts';
import { issueGrant, ReplayDetected, refuseReplay } from '../tokens.ts';
import type { GrantedTokens } from '../tokens.ts';
import { transact } from '../../storage/statements.ts';

export type TokenParams = Readonly<Record<string, string>>;

export interface GrantRequest {
  readonly client: ClientRow;
  /** The client secret that authenticated the request; null when the client authenticated otherwise (a client assertion, RFC 7523). */
  readonly secretId: string | null;
  readonly params: TokenParams;
  readonly requestId: string | null;
  /** The source address (request.ip), for the sign-in failure counters. */
  readonly address: string;
}

export type GrantHandler = (ctx: OAuthContext, request: GrantRequest) => Promise<GrantedTokens>;

/** A parameter the grant cannot do without (RFC 6749 5.2 invalid_request). */
export function required(params: TokenParams, name: string): string {
  const value = params[name];
  if (value === undefined || value === '') throw invalidRequest(`The ${name} parameter is required`);
  return value;
}

export const actorOf = (request: GrantRequest, userId: string | null): Actor => ({
  via: 'oauth',
  clientId: request.client.id,
  userId,
  ...(request.client.connection_id ? { connectionId: request.client.connection_id } : {}),
});

/**
 * Mints a grant's tokens and records `token_issued` with the same executor (one transaction).
 * The tokens of a client that belongs to a connection belong to that connection.
 * The access token lives as long as the client's token lifetime says (the server's default when
 * it has none) and names the secret that authenticated the request.
 */
export async function issueRecorded(
  ex: Executor,
  ctx: OAuthContext,
  request: GrantRequest,
  grantType: string,
  grant: Omit<Parameters<typeof issueGrant>[3], 'secretId'>,
): Promise<GrantedTokens> {
  const lifetimes = { ...ctx.lifetimes, accessTokenTtl: request.client.token_lifetime ?? ctx.lifetimes.accessTokenTtl };
  // A connection's client mints the connection's tokens: they name no user, so the person who
  // approved an authorization request (the audit row names them) can leave without ending them.
  const connectionId = request.client.connection_id ?? null;
  const owner = connectionId === null ? { userId: grant.userId } : { userId: null, connectionId };
  const tokens = await issueGrant(ex, ctx.clock, lifetimes, { ...grant, ...owner, secretId: request.secretId });
  await recordEvent(ex, ctx.clock, {
    teamId: grant.teamId,
    actor: actorOf(request, grant.userId),
    requestId: request.requestId,
    action: 'token_issued',
    resourceType: 'Token',
    resourceId: tokens.familyId,
    detail: { grantType, scope: grant.scope.join(' '), refreshToken: tokens.refreshToken !== undefined },
  });
  return tokens;
}

/**
 * Runs a grant that consumes a one-time artifact (a code, a refresh token) in one transaction.
 * A replay rolls the transaction back; the grant it belongs to is then revoked and recorded on
 * its own, and the answer is invalid_grant (RFC 6749 4.1.2, RFC 9700 4.14.2).
 */
export async function replayGuarded(
  ctx: OAuthContext,
  request: GrantRequest,
  work: (trx: Transaction<Database>) => Promise<GrantedTokens>,
): Promise<GrantedTokens> {
  try {
    return await transact(ctx.storage.db, work);
  } catch (error) {
    if (error instanceof ReplayDetected) return refuseReplay(ctx.storage, ctx.clock, error, actorOf(request, null), request.requestId);
    throw error;
  }
}
