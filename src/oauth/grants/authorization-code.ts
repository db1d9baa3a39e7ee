/**
 * grant_type=authorization_code (RFC 6749 4.1.3, RFC 7636 4.6, RFC 9700 2.1.1): the code is
 * consumed by one conditional UPDATE; a second use revokes everything the first one issued.
 * The code must belong to the client, repeat the authorization request's redirect_uri, and
 * prove its PKCE challenge; a verifier for a code issued without one is a downgrade and fails.
 */
import { createHash } from 'node:crypto';
import { sha256 } from '../../ids.ts';
import { codeByHash, consumeCode } from '../../storage/repos/codes.ts';
import { userById } from '../../storage/repos/users.ts';
import { maySignIn } from '../accounts.ts';
import { invalidGrant } from '../errors.ts';
import { scopesOf } from '../scopes.ts';
import { ReplayDetected } from '../tokens.ts';
import type { GrantHandler } from './types.ts';
import { issueRecorded, replayGuarded, required } from './types.ts';

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

const challengeOf = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

export const authorizationCodeGrant: GrantHandler = async (ctx, request) => {
  const { client, params } = request;
  const code = required(params, 'code');
  const verifier = params.code_verifier;
  return replayGuarded(ctx, request, async (trx) => {
    const now = ctx.clock.now().toISOString();
    const hash = sha256(code);
    const row = code.length <= 200 ? await consumeCode(trx, hash, now) : undefined;
    if (!row) {
      const used = code.length <= 200 ? await codeByHash(trx, hash) : undefined;
      if (used && used.client_id === client.id) throw new ReplayDetected(used.family_id, used.team_id, 'The authorization code');
      throw invalidGrant('The authorization code is invalid');
    }
    if (row.client_id !== client.id) throw invalidGrant('The authorization code was issued to another client');
    if (row.expires_at <= now) throw invalidGrant('The authorization code has expired');
    const redirectUri = params.redirect_uri;
    if (row.redirect_uri_given === 1 ? redirectUri !== row.redirect_uri : redirectUri !== undefined && redirectUri !== row.redirect_uri) {
      throw invalidGrant('redirect_uri does not match the one of the authorization request');
    }
    if (row.code_challenge !== null) {
      if (verifier === undefined) throw invalidGrant('code_verifier is required: the authorization request carried a code_challenge');
      if (!VERIFIER.test(verifier) || challengeOf(verifier) !== row.code_challenge) throw invalidGrant('code_verifier does not match the code_challenge');
    } else if (verifier !== undefined) {
      throw invalidGrant('code_verifier was sent for a code issued without a code_challenge');
    }
    const user = await userById(trx, row.team_id, row.user_id);
    if (!user || !maySignIn(user)) throw invalidGrant('The user who approved the request can no longer sign in');
    return issueRecorded(trx, ctx, request, 'authorization_code', {
      teamId: row.team_id,
      userId: row.user_id,
      clientId: client.id,
      scope: scopesOf(row.scope),
      familyId: row.family_id,
      withRefresh: true,
    });
  });
};
