/**
 * The connection wizard's paths (issue 30, item 6): for each identity provider and way of
 * authenticating, what the wizard asks, what it makes (a bearer token, an OAuth client with a
 * secret, a client trusting a federated credential, a client for the authorization code flow),
 * and which values the provider's screens ask for, in the provider's own words
 * (docs/integrations/entra-id.md and okta.md). Data only: no I/O, no HTML.
 */

export type PathId = 'entra-gallery-secret' | 'entra-gallery-federation' | 'entra-token' | 'okta-code' | 'okta-token' | 'generic-token';

/** What a path makes for its connection. */
export type Credential = 'token' | 'client-secret' | 'client-federation' | 'client-code';

export interface WizardPath {
  readonly id: PathId;
  readonly provider: 'entra' | 'okta' | 'generic';
  readonly providerLabel: string;
  /** The way of authenticating, as the provider's screens name it. */
  readonly method: string;
  /** One sentence: when to choose this path. */
  readonly when: string;
  readonly credential: Credential;
  /** The connection's name the form suggests. */
  readonly defaultName: string;
  /** Whether a setup link's session (no Rollcall account) can finish it: the code flow needs an admin to approve. */
  readonly forSetupLinks: boolean;
}

export const PATHS: readonly WizardPath[] = [
  {
    id: 'entra-gallery-secret',
    provider: 'entra',
    providerLabel: 'Microsoft Entra ID',
    method: 'Gallery app: OAuth 2.0 client credentials',
    when: 'Rollcall is in the Entra app gallery and you give Entra a client id and a rotating client secret.',
    credential: 'client-secret',
    defaultName: 'Entra ID production',
    forSetupLinks: true,
  },
  {
    id: 'entra-gallery-federation',
    provider: 'entra',
    providerLabel: 'Microsoft Entra ID',
    method: 'Gallery app: workload identity federation',
    when: 'No secret at all: Entra signs a short-lived assertion with your tenant\'s keys, and Rollcall trusts your tenant.',
    credential: 'client-federation',
    defaultName: 'Entra ID production',
    forSetupLinks: true,
  },
  {
    id: 'entra-token',
    provider: 'entra',
    providerLabel: 'Microsoft Entra ID',
    method: 'Non-gallery app: Secret Token',
    when: 'You add Rollcall as your own (non-gallery) enterprise application and paste a long-lived token.',
    credential: 'token',
    defaultName: 'Entra ID production',
    forSetupLinks: true,
  },
  {
    id: 'okta-code',
    provider: 'okta',
    providerLabel: 'Okta',
    method: 'OAuth 2.0 authorization code',
    when: 'Okta\'s recommended way: Okta gets its token by sending a Rollcall admin of this team through Rollcall\'s sign-in once.',
    credential: 'client-code',
    defaultName: 'Okta production',
    forSetupLinks: false,
  },
  {
    id: 'okta-token',
    provider: 'okta',
    providerLabel: 'Okta',
    method: 'HTTP Header: Bearer token',
    when: 'You paste a long-lived token into Okta\'s SCIM integration.',
    credential: 'token',
    defaultName: 'Okta production',
    forSetupLinks: true,
  },
  {
    id: 'generic-token',
    provider: 'generic',
    providerLabel: 'Another SCIM client',
    method: 'Bearer token',
    when: 'OneLogin, JumpCloud, a script of your own, or any client that sends a bearer token.',
    credential: 'token',
    defaultName: 'SCIM client',
    forSetupLinks: true,
  },
];

export const pathById = (id: string): WizardPath | undefined => PATHS.find((p) => p.id === id);

/** How long a wizard's bearer token lives: a year, then it is issued again (the longest allowed). */
export const WIZARD_TOKEN_DAYS = 365;
/** The access token lifetime of a gallery client: Entra asks for 60 to 360 minutes. */
export const GALLERY_TOKEN_LIFETIME = 3600;
/** Entra's workload identity federation issuer for a tenant. */
export const entraIssuer = (tenantId: string): string => `https://login.microsoftonline.com/${tenantId}/v2.0`;
/** The scopes Okta's authorization code path asks for. */
export const OKTA_SCOPES = 'read write';
