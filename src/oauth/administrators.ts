/**
 * Whose access token is a team administrator's: what may create, change or
 * delete the team's event subscriptions, which push the team's changes (whole user documents
 * with `full`) to any receiver. An administrator's token is one issued to an active user whose
 * userType is admin (the OAuth sign-in: DESIGN.md section 5), or the operator's (no client and
 * no user, no connection). Never a connection's token (oauth/connections.ts), nor a provisioning token, whoever its user (it is a credential handed to an
 * identity provider to provision with), nor a client's own (client credentials). It reads; the
 * caller refuses in its protocol's shape.
 */
import type { Executor } from '../storage/types.ts';
import { isProvisioningToken } from '../storage/repos/provisioning-tokens.ts';
import { userById } from '../storage/repos/users.ts';
import { signsIn } from './accounts.ts';
import type { Bearer } from './tokens.ts';

/** Why `bearer` is no administrator of its team, or undefined when it is one. */
export async function notAnAdministrator(ex: Executor, bearer: Bearer): Promise<string | undefined> {
  if (bearer.connectionId !== null) return "a connection's token";
  if (await isProvisioningToken(ex, bearer.tokenHash)) return 'a provisioning token';
  if (bearer.userId === null) return bearer.clientId === null ? undefined : "a client's own token (client credentials)";
  const user = await userById(ex, bearer.team.id, bearer.userId);
  if (!user || user.active !== 1 || !signsIn(user)) return "the token of a user who is not an active administrator (userType admin)";
  return undefined;
}

/**
 * Whether the team administration API (/v2/admin) accepts `bearer`: the operator's token, or
 * one issued on behalf of an active administrator, provisioning tokens included (the API asks
 * only whose token it is). A connection's token is neither, whoever made the connection.
 */
export async function administersTeam(ex: Executor, bearer: Bearer): Promise<boolean> {
  if (bearer.connectionId !== null) return false;
  if (bearer.userId === null) return bearer.clientId === null;
  const user = await userById(ex, bearer.team.id, bearer.userId);
  return user !== undefined && user.active === 1 && signsIn(user);
}
