/**
 * The connection wizard's domain (issue 30, item 6): one path (wizard-paths.ts) makes a
 * connection (oauth/connections.ts) and what it needs: a bearer token of the connection, an
 * OAuth client of the connection with a secret, such a client trusting a federated credential,
 * or one registered for Okta's authorization code flow. Every input is checked before anything
 * is written; then the connection, its credential, their audit rows and (from a setup link's
 * session, which may make one connection: setup-links.ts) the link's claim are written in one
 * transaction, so a credential refused after all (a budget, a race) or a failure between the
 * steps leaves nothing behind.
 *
 * It also says what the provider's screens ask for (the values with the secret only when just
 * made) and the Test state: the connection's newest SCIM request since it was made, from the
 * request log (which http/request-journal.ts writes within a second or so).
 */
import type { AdminDeps } from '../admin.ts';
import { AdminError, checkedTokenLifetime, createClientIn } from '../admin.ts';
import { OverBudget } from '../budgets.ts';
import type { Actor } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { addFederationIn, trustUrlProblem } from '../oauth/client-trust.ts';
import { redirectUriProblem, redirectUrisOf } from '../oauth/clients.ts';
import { connectionById, ConnectionError, createConnectionIn, nameTaken } from '../oauth/connections.ts';
import { issueProvisioningTokenIn, ProvisioningTokenError } from '../oauth/provisioning.ts';
import type { Storage } from '../storage/connect.ts';
import { clientById } from '../storage/repos/clients.ts';
import { federationsOf } from '../storage/repos/client-trust.ts';
import { newestRequestOfConnection } from '../storage/repos/connection-requests.ts';
import { clientIdsOfConnection } from '../storage/repos/connections.ts';
import { claimConnectionForLink, SetupLinkError } from './setup-links.ts';
import { entraIssuer, GALLERY_TOKEN_LIFETIME, OKTA_SCOPES, pathById, PATHS, WIZARD_TOKEN_DAYS } from './wizard-paths.ts';
import type { WizardPath } from './wizard-paths.ts';
import { transact } from '../storage/statements.ts';
import type { Executor } from '../storage/types.ts';

/** A wizard input the person must correct (shown on the form, 400). */
export class WizardInputError extends Error {}

export interface WizardInputs {
  readonly name: string;
  readonly tenantId?: string;
  readonly issuer?: string;
  readonly subject?: string;
  readonly redirectUri?: string;
}

/** The one-time value a path made: shown on the next page only. */
export interface MadeSecret {
  readonly kind: 'token' | 'clientSecret';
  readonly value: string;
  readonly expiresAt: string;
}

export interface MadeConnection {
  readonly connectionId: string;
  readonly secret?: MadeSecret;
}

export interface WizardDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
}

const TENANT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The federated credential a form asks for: the issuer from the tenant id (or given), and the subject. */
function federationInputs(inputs: WizardInputs): { issuer: string; subject: string } {
  const subject = (inputs.subject ?? '').trim();
  if (subject === '' || subject.length > 200 || /[\p{Cc}\s]/u.test(subject)) throw new WizardInputError('The object ID of the provisioning identity is 1-200 characters without spaces (the sub of its assertions).');
  const given = (inputs.issuer ?? '').trim();
  if (given !== '') {
    const problem = trustUrlProblem(given);
    if (problem) throw new WizardInputError(`Issuer URL: ${problem}.`);
    return { issuer: given, subject };
  }
  const tenant = (inputs.tenantId ?? '').trim();
  if (!TENANT.test(tenant)) throw new WizardInputError('The Directory (tenant) ID is a GUID such as 72f988bf-86f1-41af-91ab-2d7cd011db47 (or give the issuer URL instead).');
  return { issuer: entraIssuer(tenant.toLowerCase()), subject };
}

function redirectInput(inputs: WizardInputs): string {
  const uri = (inputs.redirectUri ?? '').trim();
  const problem = uri === '' ? 'give the redirect URI Okta shows' : uri.length > 2000 ? 'it is longer than 2000 characters' : redirectUriProblem(uri);
  if (problem) throw new WizardInputError(`Okta's redirect URI: ${problem}.`);
  return uri;
}

/**
 * Makes the connection of `path` with what it needs, for the team `team`, as `actor`; with
 * `setupLinkId`, records it as that link's one connection. One transaction: the connection, its
 * credential, their audit rows and the link's claim commit together, or nothing is written.
 */
export async function setUpConnection(
  deps: WizardDeps,
  request: { team: { id: string; name: string }; path: WizardPath; inputs: WizardInputs; actor: Actor; requestId: string | null; setupLinkId?: string },
): Promise<MadeConnection> {
  const { path, team } = request;
  // Every input first: a form that must be corrected opens no transaction.
  const federation = path.credential === 'client-federation' ? federationInputs(request.inputs) : undefined;
  const redirectUri = path.credential === 'client-code' ? redirectInput(request.inputs) : undefined;
  try {
    return await transact(deps.storage.db, async (trx) => {
      const made = await createConnectionIn(trx, deps.clock, { teamId: team.id, name: request.inputs.name, provider: path.provider, actor: request.actor, requestId: request.requestId });
      const secret = await makeCredential(trx, deps, request, made.id, made.name, federation, redirectUri);
      if (request.setupLinkId !== undefined) await claimConnectionForLink(trx, request.setupLinkId, made.id);
      return { connectionId: made.id, ...(secret ? { secret } : {}) };
    });
  } catch (error) {
    if (error instanceof AdminError || error instanceof ProvisioningTokenError || error instanceof OverBudget) throw new WizardInputError(error.message);
    // A concurrent connection of the same name, committed first (or a concurrent claim of the link's one connection).
    if (!(error instanceof ConnectionError) && !(error instanceof SetupLinkError) && deps.storage.hooks.isUniqueViolation(error)) throw nameTaken(request.inputs.name);
    throw error;
  }
}

async function makeCredential(
  trx: Executor,
  deps: WizardDeps,
  request: { team: { id: string; name: string }; path: WizardPath; actor: Actor; requestId: string | null },
  connectionId: string,
  name: string,
  federation: { issuer: string; subject: string } | undefined,
  redirectUri: string | undefined,
): Promise<MadeSecret | undefined> {
  const admin: AdminDeps = { storage: deps.storage, clock: deps.clock, baseUrl: deps.baseUrl, actor: request.actor };
  switch (request.path.credential) {
    case 'token': {
      const issued = await issueProvisioningTokenIn(trx, deps.clock, {
        teamId: request.team.id,
        connectionId,
        name: `${name} token`.slice(0, 100),
        scope: ['read', 'write'],
        ttlSeconds: WIZARD_TOKEN_DAYS * 86_400,
        actor: request.actor,
        requestId: request.requestId,
      });
      return { kind: 'token', value: issued.token, expiresAt: issued.expiresAt };
    }
    case 'client-secret':
    case 'client-federation':
    case 'client-code': {
      const client = await createClientIn(trx, admin, {
        name,
        redirectUris: redirectUri !== undefined ? [redirectUri] : [],
        teamId: request.team.id,
        connectionId,
        tokenLifetime: request.path.credential === 'client-code' ? null : checkedTokenLifetime(GALLERY_TOKEN_LIFETIME),
      });
      if (federation) {
        await addFederationIn(trx, admin, client.row, { issuer: federation.issuer, subject: federation.subject });
        return undefined;
      }
      return { kind: 'clientSecret', value: client.secret, expiresAt: client.secretExpiresAt };
    }
  }
}

/** A connection as the wizard shows it: which path made it, and its client if it has one. */
export interface ConnectionSetup {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  readonly path: WizardPath;
  readonly client?: { readonly id: string; readonly redirectUris: readonly string[] };
  readonly federation?: { readonly issuer: string; readonly subject: string; readonly audience: string };
}

/** Which path a connection's provider and credentials say made it. */
function pathOf(provider: string | null, client: { redirectUris: readonly string[]; federated: boolean } | undefined): WizardPath {
  const id = client === undefined ? (provider === 'entra' ? 'entra-token' : provider === 'okta' ? 'okta-token' : 'generic-token') : client.federated ? 'entra-gallery-federation' : client.redirectUris.length > 0 ? 'okta-code' : 'entra-gallery-secret';
  return pathById(id) ?? PATHS[0]!;
}

/** The team's connection `id` as the wizard shows it; undefined when the team has none such. */
export async function connectionSetup(deps: WizardDeps, teamId: string, id: string): Promise<ConnectionSetup | undefined> {
  const connection = await connectionById(deps.storage.db, teamId, id, deps.clock.now().toISOString());
  if (!connection) return undefined;
  const [clientId] = await clientIdsOfConnection(deps.storage.db, connection.id);
  const row = clientId !== undefined ? await clientById(deps.storage.db, clientId) : undefined;
  const federation = row ? (await federationsOf(deps.storage.db, row.id))[0] : undefined;
  const client = row ? { id: row.id, redirectUris: redirectUrisOf(row) } : undefined;
  return {
    id: connection.id,
    name: connection.name,
    createdAt: connection.createdAt,
    path: pathOf(connection.provider, client ? { ...client, federated: federation !== undefined } : undefined),
    ...(client ? { client } : {}),
    ...(federation ? { federation: { issuer: federation.issuer, subject: federation.subject, audience: federation.audience } } : {}),
  };
}

/** One value a provider's screen asks for. */
export interface PasteValue {
  readonly key: string;
  readonly label: string;
  /** undefined: not shown (a secret after its page), `missing` says why. */
  readonly value?: string;
  readonly missing?: string;
  readonly note?: string;
}

/** The values to paste, in the provider's words; a secret only when `secret` was just made. */
export function pasteValues(setup: ConnectionSetup, baseUrl: string, secret: MadeSecret | undefined): PasteValue[] {
  const scim = `${baseUrl}/v2/scim`;
  const tokenEndpoint = `${baseUrl}/oauth/token`;
  const once = (key: string, label: string, kind: MadeSecret['kind'], again: string): PasteValue =>
    secret?.kind === kind ? { key, label, value: secret.value, note: `Shown only now. It expires ${secret.expiresAt.slice(0, 10)}.` } : { key, label, missing: `Shown once, when the connection was made. ${again}` };
  const newToken = 'For a new one, issue a token for this connection on the Connections page.';
  const newSecret = 'For a new one, add a secret on the client\'s page (Connections).';
  const clientId = setup.client?.id ?? '';
  switch (setup.path.id) {
    case 'entra-gallery-secret':
      return [
        { key: 'tenant-url', label: 'Tenant URL', value: scim },
        { key: 'token-endpoint', label: 'Token endpoint', value: tokenEndpoint },
        { key: 'client-id', label: 'Client identifier', value: clientId },
        once('client-secret', 'Client secret', 'clientSecret', newSecret),
      ];
    case 'entra-gallery-federation':
      return [
        { key: 'tenant-url', label: 'Tenant URL', value: scim },
        { key: 'token-endpoint', label: 'Token endpoint', value: tokenEndpoint },
        { key: 'client-id', label: 'Client identifier', value: clientId, note: 'Also the audience of Entra\'s assertions.' },
        ...(setup.federation ? [{ key: 'issuer', label: 'Trusted issuer', value: setup.federation.issuer }, { key: 'subject', label: 'Trusted subject (object ID)', value: setup.federation.subject }] : []),
      ];
    case 'entra-token':
      return [{ key: 'tenant-url', label: 'Tenant URL', value: scim }, once('token', 'Secret Token', 'token', newToken)];
    case 'okta-code':
      return [
        { key: 'base-url', label: 'SCIM connector base URL', value: scim },
        { key: 'unique-id', label: 'Unique identifier field for users', value: 'userName' },
        { key: 'auth-mode', label: 'Authentication Mode', value: 'OAuth 2' },
        { key: 'token-endpoint', label: 'Access token endpoint URI', value: tokenEndpoint },
        { key: 'authorize-endpoint', label: 'Authorization endpoint URI', value: `${baseUrl}/oauth/authorize` },
        { key: 'client-id', label: 'Client ID', value: clientId },
        once('client-secret', 'Client secret', 'clientSecret', newSecret),
        { key: 'scopes', label: 'Scopes', value: OKTA_SCOPES },
        ...(setup.client?.redirectUris[0] ? [{ key: 'redirect-uri', label: 'Redirect URI Rollcall accepts', value: setup.client.redirectUris[0] }] : []),
      ];
    case 'okta-token':
      return [
        { key: 'base-url', label: 'SCIM connector base URL', value: scim },
        { key: 'unique-id', label: 'Unique identifier field for users', value: 'userName' },
        { key: 'auth-mode', label: 'Authentication Mode', value: 'HTTP Header' },
        once('token', 'Authorization: Bearer', 'token', newToken),
      ];
    case 'generic-token':
      return [{ key: 'base-url', label: 'SCIM base URL', value: scim }, once('token', 'Bearer token', 'token', newToken)];
  }
}

/** The provider's steps, as HTML made of constant text only. */
export function pasteSteps(setup: ConnectionSetup): string[] {
  switch (setup.path.id) {
    case 'entra-gallery-secret':
      return ['In Entra: <strong>Enterprise applications</strong> → your Rollcall application → <strong>Provisioning</strong> → Provisioning Mode <strong>Automatic</strong>.', 'Under <strong>Admin Credentials</strong>, choose OAuth 2.0 client credentials and paste the values below. Its tokens live 60 minutes.', 'Select <strong>Test Connection</strong>, then <strong>Save</strong>.'];
    case 'entra-gallery-federation':
      return ['In Entra: <strong>Enterprise applications</strong> → your Rollcall application → <strong>Provisioning</strong> → Provisioning Mode <strong>Automatic</strong>.', 'Under <strong>Admin Credentials</strong>, choose workload identity federation and paste the Tenant URL, Token endpoint and Client identifier. There is no secret.', 'Select <strong>Test Connection</strong>, then <strong>Save</strong>.'];
    case 'entra-token':
      return ['In Entra: <strong>Enterprise applications</strong> → <strong>New application</strong> → <strong>Create your own application</strong> (Non-gallery).', '<strong>Provisioning</strong> → <strong>Get started</strong> → Provisioning Mode <strong>Automatic</strong>; under <strong>Admin Credentials</strong> paste the Tenant URL and Secret Token.', 'Select <strong>Test Connection</strong>, then <strong>Save</strong>. Show deactivated users in this team (Settings), as Entra expects.'];
    case 'okta-code':
      return ['In Okta: your app integration → <strong>Provisioning</strong> → <strong>Integration</strong> → <strong>Edit</strong>, and paste the values below; Authentication Mode <strong>OAuth 2</strong>.', 'Select <strong>Authenticate with Rollcall</strong>: a Rollcall admin of this team signs in and approves once.', 'Select <strong>Test Connector Configuration</strong>, then <strong>Save</strong>.'];
    case 'okta-token':
      return ['In Okta: your app integration → <strong>Provisioning</strong> → <strong>Integration</strong> → <strong>Edit</strong>, and paste the values below.', 'Supported provisioning actions: Import New Users and Profile Updates, Push New Users, Push Profile Updates, Push Groups.', 'Select <strong>Test Connector Configuration</strong>, then <strong>Save</strong>.'];
    case 'generic-token':
      return ['Give your SCIM client the base URL and the token below; it sends <code>Authorization: Bearer &lt;token&gt;</code>.', 'Send any SCIM request, such as <code>GET /Users?count=1</code>.'];
  }
}

export interface TestState {
  readonly state: 'waiting' | 'ok' | 'failed';
  readonly count: number;
  readonly request?: { readonly method: string; readonly path: string; readonly status: number; readonly at: string; readonly scimType: string | null; readonly detail: string | null };
}

/** The connection's newest SCIM request since it was made: none yet, answered, or failed (with the log's reason). */
export async function testState(deps: WizardDeps, teamId: string, setup: ConnectionSetup): Promise<TestState> {
  const { newest, count } = await newestRequestOfConnection(deps.storage.db, teamId, setup.id, setup.client ? [setup.client.id] : [], setup.createdAt);
  if (!newest) return { state: 'waiting', count: 0 };
  return {
    state: newest.status < 400 ? 'ok' : 'failed',
    count,
    request: { method: newest.method, path: newest.path, status: newest.status, at: newest.at, scimType: newest.scim_type, detail: newest.detail ?? null },
  };
}

export { ConnectionError, SetupLinkError };
