/**
 * grant_type=password (RFC 6749 4.3; the contract's section 5.2). RFC 9700 2.4 says this grant
 * MUST NOT be used; the contract offers it, so it is on unless PASSWORD_GRANT=off
 * (docs/SECURITY.md records the deviation). Attempts are limited per client, failures per
 * account; a client registered for one team only signs in that team's users.
 * Sign-in names are per team: with a client bound to no team, a name whose password is right in
 * several teams needs the optional `team` parameter (the team's name) to say which; without it
 * the answer is invalid_grant saying so (only someone who proved those passwords reads that).
 * An admin with a second factor (or whose team requires one) is refused: the grant takes no factor.
 */
import { signIn, WRONG_CREDENTIALS } from '../accounts.ts';
import { secondFactorStep } from '../factors.ts';
import { invalidGrant, OAuthError } from '../errors.ts';
import { parseScope } from '../scopes.ts';
import type { GrantHandler } from './types.ts';
import { issueRecorded, required } from './types.ts';
import { transact } from '../../storage/statements.ts';

export const passwordGrant: GrantHandler = async (ctx, request) => {
  const { client, params } = request;
  if (!ctx.passwordGrant) throw new OAuthError('unsupported_grant_type', 'The password grant is turned off on this server');
  await ctx.limits.attempt('passwordPerClient', client.id);
  const username = required(params, 'username');
  const password = required(params, 'password');
  const scope = parseScope(params.scope);
  const signedIn = await signIn(ctx, username, password, {
    clientId: client.id,
    requestId: request.requestId,
    method: 'password_grant',
    address: request.address,
    clientTeamId: client.team_id,
    ...(params.team !== undefined ? { teamName: params.team } : {}),
  });
  if (signedIn.kind === 'choose') {
    throw invalidGrant('This user name signs in to several teams with this password; repeat the request with the team parameter naming one');
  }
  const user = signedIn.user;
  if (client.team_id !== null && client.team_id !== user.team_id) throw invalidGrant(WRONG_CREDENTIALS);
  // A password alone is not enough for an admin with a second factor, or whose team requires one.
  if ((await secondFactorStep(ctx.storage.db, user)) !== 'none') throw invalidGrant('This account signs in with a second factor: use the authorization code flow (the sign-in page)');
  return transact(ctx.storage.db, (trx) => issueRecorded(trx, ctx, request, 'password', {
    teamId: user.team_id,
    userId: user.id,
    clientId: client.id,
    scope,
    withRefresh: true,
  }));
};
