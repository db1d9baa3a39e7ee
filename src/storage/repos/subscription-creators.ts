/**
 * Subscriptions paused when the credential that created them is revoked
 * (migration 018). Every repository function that takes an access token's access away
 * (repos/tokens.ts) calls `pauseSubscriptionsOfRevoked` on the executor of its write, so the
 * pause commits with the revocation, whichever path revoked: one token (RFC 7009, a provisioning
 * token), a grant's family (a replayed refresh token), a user's credentials (deactivated, a new
 * password, another userType) or a client's (a new secret, deleted). A subscription with no
 * creator (the operator's CLI) is never paused here.
 */
import type { Executor } from '../types.ts';

/** The reason shown on the subscription (console, API, CLI) and in the overview's problems. */
export const CREATOR_REVOKED = "its creator's credential was revoked: an administrator may resume it, and then it acts on that administrator's authority";

/** Pauses the active subscriptions created with what `revoked` names; answers how many. */
export async function pauseSubscriptionsOfRevoked(
  ex: Executor,
  revoked: { readonly kind: 'token' | 'family' | 'user' | 'client'; readonly id: string } | { readonly kind: 'secret'; readonly id: string; readonly clientId: string },
  at: string,
): Promise<number> {
  let update = ex.updateTable('event_subscriptions').set({ state: 'paused', paused_reason: CREATOR_REVOKED, updated_at: at }).where('state', '=', 'active');
  switch (revoked.kind) {
    case 'token':
      update = update.where('creator_token', '=', revoked.id);
      break;
    case 'user':
      update = update.where('creator_user', '=', revoked.id);
      break;
    case 'family':
      update = update.where('creator_token', 'in', (eb) => eb.selectFrom('oauth_tokens').select('hash').where('family_id', '=', revoked.id));
      break;
    case 'client':
      update = update.where('creator_token', 'in', (eb) => eb.selectFrom('oauth_tokens').select('hash').where('client_id', '=', revoked.id));
      break;
    case 'secret': {
      const { clientId, id } = revoked;
      update = update.where('creator_token', 'in', (eb) => eb.selectFrom('oauth_tokens').select('hash').where('client_id', '=', clientId).where('secret_id', '=', id));
      break;
    }
  }
  return Number((await update.executeTakeFirst()).numUpdatedRows);
}
