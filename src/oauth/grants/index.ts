/** The grants of /oauth/token, looked up by their wire name (RFC 6749 4.1.3, 4.3.2, 4.4.2, 6). */
import { authorizationCodeGrant } from './authorization-code.ts';
import { clientCredentialsGrant } from './client-credentials.ts';
import { passwordGrant } from './password.ts';
import { refreshTokenGrant } from './refresh-token.ts';
import type { GrantHandler } from './types.ts';

export const GRANTS: Readonly<Record<string, GrantHandler>> = {
  authorization_code: authorizationCodeGrant,
  password: passwordGrant,
  refresh_token: refreshTokenGrant,
  client_credentials: clientCredentialsGrant,
};
