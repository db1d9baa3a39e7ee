import { ASSERTION_ALGS } from './client-trust.ts';

/**
 * Authorization server metadata (RFC 8414 2): exactly what this server supports. Client
 * assertions (RFC 7523 2.2) are `private_key_jwt`, with the signature algorithms they may use.
 */
export function serverMetadata(issuer: string, passwordGrant: boolean): Record<string, unknown> {
  const authMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'];
  const signingAlgs = [...ASSERTION_ALGS];
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', ...(passwordGrant ? ['password'] : [])],
    token_endpoint_auth_methods_supported: authMethods,
    token_endpoint_auth_signing_alg_values_supported: signingAlgs,
    revocation_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_signing_alg_values_supported: signingAlgs,
    introspection_endpoint_auth_methods_supported: authMethods,
    introspection_endpoint_auth_signing_alg_values_supported: signingAlgs,
    code_challenge_methods_supported: ['S256'],
    scopes_supported: ['read', 'write', 'ssf', 'scim'],
    authorization_response_iss_parameter_supported: true,
  };
}
