/**
 * grant_type=refresh_token (RFC 6749 6, RFC 9700 4.14.2): the presented token is retired and a
 * new pair issued in the same family, in one transaction; presenting a retired token revokes the
 * family. The new grant may narrow the scope, never widen it, and ends when its user can no
 * longer sign in.
 */
import { maySignIn } from '../accounts.ts';
import { invalidGrant } from '../errors.ts';
import { parseScope, scopesOf } from '../scopes.ts';
import { rotateRefreshToken } from '../tokens.ts';
import type { GrantHandler } from './types.ts';
import { issueRecorded, replayGuarded, required } from './types.ts';

export const refreshTokenGrant: GrantHandler = async (ctx, request) => {
  const { client, params } = request;
  const token = required(params, 'refresh_token');
  return replayGuarded(ctx, request, async (trx) => {
    const { row, user } = await rotateRefreshToken(trx, ctx.clock, token, client.id);
    const scope = parseScope(params.scope, scopesOf(row.scope));
    if (row.user_id !== null && (!user || !maySignIn(user))) throw invalidGrant('The user of this grant can no longer sign in');
    return issueRecorded(trx, ctx, request, 'refresh_token', {
      teamId: row.team_id,
      userId: row.user_id,
      clientId: client.id,
      scope,
      familyId: row.family_id ?? undefined,
      withRefresh: true,
    });
  });
};
