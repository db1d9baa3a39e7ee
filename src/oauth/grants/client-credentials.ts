/**
 * grant_type=client_credentials (RFC 6749 4.4), for clients registered for one team (`client
 * create --team`; Microsoft's provisioning validator uses it). The token acts for the client,
 * not a user, and comes without a refresh token (RFC 6749 4.4.3).
 */
import { OAuthError } from '../errors.ts';
import { parseScope } from '../scopes.ts';
import type { GrantHandler } from './types.ts';
import { issueRecorded } from './types.ts';
import { transact } from '../../storage/statements.ts';

export const clientCredentialsGrant: GrantHandler = async (ctx, request) => {
  const { client, params } = request;
  if (client.team_id === null) {
    throw new OAuthError('unauthorized_client', 'This client is not registered for a team, so it cannot use client_credentials');
  }
  const scope = parseScope(params.scope);
  const teamId = client.team_id;
  return transact(ctx.storage.db, (trx) => issueRecorded(trx, ctx, request, 'client_credentials', {
    teamId,
    userId: null,
    clientId: client.id,
    scope,
    withRefresh: false,
  }));
};
