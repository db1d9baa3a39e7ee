/**
 * What a client trusts to authenticate it by a JWT assertion (RFC 7523 2.2, DESIGN.md section 11):
 * its own public keys (`private_key_jwt`: an inline JWK Set or a `jwks_uri`) and, for a client
 * bound to a team, federated credentials (an external issuer, the subject and audience it puts in
 * its assertions, and where its keys are: Entra workload identity federation). The operator adds,
 * lists and removes them (`rollcall client key|federation ...`); every change is audited in the
 * change's transaction, and each team's budget `client.credentials` caps how many its clients hold.
 *
 * A JWK Set is checked when it is added: public keys only (RFC 7517 4, RFC 7518 6), RSA of at
 * least 2048 bits or EC P-256, signing keys only, algorithms RS256, PS256 or ES256 (the ones the
 * token endpoint accepts), at most MAX_KEYS keys with distinct `kid`s. Only the public members are
 * kept. Key sets on the web are fetched only when an assertion needs them (remote-keys.ts).
 */
import { importJWK } from 'jose';
import type { JWK } from 'jose';
import type { AdminDeps } from '../admin.ts';
import { AdminError } from '../admin.ts';
import type { AuditAction } from '../audit/events.ts';
import { CLI_ACTOR, recordEvent } from '../audit/events.ts';
import { budgetsOf, OverBudget } from '../budgets.ts';
import { iso } from '../clock.ts';
import { newId } from '../ids.ts';
import { clientById } from '../storage/repos/clients.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import {
  clientKeysOf,
  deleteClientKey,
  deleteFederation,
  federationsOf,
  insertClientKey,
  insertFederation,
  trustCountOfClient,
  trustCountOfTeam,
} from '../storage/repos/client-trust.ts';
import type { ClientKeyRow, FederationRow } from '../storage/repos/client-trust.ts';
import { listTeams, teamById } from '../storage/repos/teams.ts';
import { transact } from '../storage/statements.ts';
import type { Executor } from '../storage/types.ts';

/** The signature algorithms client assertions may use (RFC 7518 3.1): never `none`, never HMAC. */
export const ASSERTION_ALGS = ['RS256', 'PS256', 'ES256'] as const;

/** Keys one JWK Set may hold. */
export const MAX_KEYS = 10;
/** The largest JWK Set file accepted. */
export const MAX_JWKS_BYTES = 64 * 1024;
export const MIN_RSA_BITS = 2048;

const PUBLIC_MEMBERS = ['kty', 'kid', 'use', 'alg', 'key_ops', 'n', 'e', 'crv', 'x', 'y', 'x5t', 'x5t#S256'] as const;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why `value` cannot be a key set's URL or an issuer: https, or http to a loopback host only. */
export function trustUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value.slice(0, 200)}" is not an absolute URL`;
  }
  if (value.length > 2000) return 'the URL is longer than 2000 characters';
  if (url.username !== '' || url.password !== '') return 'the URL may not hold a user name or password';
  if (url.hash !== '') return 'the URL may not have a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return undefined;
  return `"${value.slice(0, 200)}" must use https (http only for 127.0.0.1, [::1] or localhost)`;
}

/** Whether an RSA modulus (base64url) has at least MIN_RSA_BITS bits: inline and fetched keys alike. */
export const isStrongRsaModulus = (n: unknown): boolean => bytesOfBase64url(n) * 8 >= MIN_RSA_BITS - 8;

export const bytesOfBase64url = (value: unknown): number => (typeof value === 'string' && /^[A-Za-z0-9_-]+$/.test(value) ? Math.floor((value.length * 3) / 4) : 0);

/** Why one JWK cannot verify assertions, or undefined when it can. */
function keyProblem(key: Record<string, unknown>, at: number): string | undefined {
  const where = `key ${at + 1}${typeof key.kid === 'string' ? ` ("${key.kid.slice(0, 40)}")` : ''}`;
  if (PRIVATE_MEMBERS.some((m) => m in key)) return `${where} holds private key material: register public keys only`;
  if (key.kid !== undefined && (typeof key.kid !== 'string' || key.kid === '' || key.kid.length > 200)) return `${where}: "kid" must be a string of 1-200 characters`;
  if (key.use !== undefined && key.use !== 'sig') return `${where} is not a signing key ("use" is "${String(key.use).slice(0, 20)}")`;
  if (key.key_ops !== undefined && !(Array.isArray(key.key_ops) && key.key_ops.includes('verify'))) return `${where}: its "key_ops" do not include "verify"`;
  if (key.kty === 'RSA') {
    if (typeof key.n !== 'string' || typeof key.e !== 'string') return `${where}: an RSA key needs "n" and "e"`;
    if (!isStrongRsaModulus(key.n)) return `${where}: RSA keys must have at least ${MIN_RSA_BITS} bits`;
    if (key.alg !== undefined && key.alg !== 'RS256' && key.alg !== 'PS256') return `${where}: an RSA key's "alg" must be RS256 or PS256`;
    return undefined;
  }
  if (key.kty === 'EC') {
    if (key.crv !== 'P-256' || typeof key.x !== 'string' || typeof key.y !== 'string') return `${where}: an EC key must be P-256 with "x" and "y"`;
    if (key.alg !== undefined && key.alg !== 'ES256') return `${where}: an EC P-256 key's "alg" must be ES256`;
    return undefined;
  }
  return `${where}: the key type "${String(key.kty).slice(0, 20)}" is not accepted (RSA or EC P-256)`;
}

/** The JWK Set in `text`, checked and reduced to its public members; AdminError says what is wrong. */
export async function parseJwks(text: string): Promise<{ keys: JWK[] }> {
  if (Buffer.byteLength(text) > MAX_JWKS_BYTES) throw new AdminError(`the JWK Set is larger than ${MAX_JWKS_BYTES / 1024} KiB`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AdminError('the JWK Set is not JSON');
  }
  const keys = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys) || keys.length === 0) throw new AdminError('a JWK Set is a JSON object whose "keys" is a list of one or more keys (RFC 7517 5)');
  if (keys.length > MAX_KEYS) throw new AdminError(`a JWK Set may hold at most ${MAX_KEYS} keys; this one has ${keys.length}`);
  const kept: JWK[] = [];
  for (const [at, key] of keys.entries()) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw new AdminError(`key ${at + 1} is not a JSON object`);
    const problem = keyProblem(key as Record<string, unknown>, at);
    if (problem) throw new AdminError(problem);
    const publicKey = Object.fromEntries(PUBLIC_MEMBERS.filter((m) => m in key).map((m) => [m, (key as Record<string, unknown>)[m]])) as JWK;
    try {
      await importJWK(publicKey, publicKey.kty === 'EC' ? 'ES256' : (publicKey.alg ?? 'RS256'));
    } catch {
      throw new AdminError(`key ${at + 1} is not a valid ${String(publicKey.kty)} public key`);
    }
    kept.push(publicKey);
  }
  const kids = kept.map((k) => k.kid);
  if (kept.length > 1 && (kids.some((k) => k === undefined) || new Set(kids).size !== kids.length)) {
    throw new AdminError('when a JWK Set holds several keys, each needs its own "kid"');
  }
  return { keys: kept };
}

/** A key registration as the CLI and console show it (never more than public keys). */
export interface ClientKeyView {
  readonly id: string;
  readonly clientId: string;
  readonly jwksUri: string | null;
  /** The `kid`s of an inline key set (null for a key set at a URL). */
  readonly kids: readonly (string | null)[] | null;
  readonly createdAt: string;
}

export interface FederationView {
  readonly id: string;
  readonly clientId: string;
  readonly issuer: string;
  readonly subject: string;
  readonly audience: string;
  /** Where the issuer's keys are; null: its OpenID configuration names them. */
  readonly jwksUri: string | null;
  readonly createdAt: string;
}

const keyView = (row: ClientKeyRow): ClientKeyView => ({
  id: row.id,
  clientId: row.client_id,
  jwksUri: row.jwks_uri,
  kids: row.jwks !== null ? (JSON.parse(row.jwks) as { keys: JWK[] }).keys.map((k) => k.kid ?? null) : null,
  createdAt: row.created_at,
});

const federationView = (row: FederationRow): FederationView => ({
  id: row.id,
  clientId: row.client_id,
  issuer: row.issuer,
  subject: row.subject,
  audience: row.audience,
  jwksUri: row.jwks_uri,
  createdAt: row.created_at,
});

async function requireClient(deps: AdminDeps, id: string): Promise<ClientRow> {
  const row = await clientById(deps.storage.db, id);
  if (!row) throw new AdminError(`no client with id "${id.slice(0, 40)}" (see: rollcall client list)`);
  return row;
}

/** A client's audit row goes to its team, or to every team for a client bound to none (as admin.ts). */
async function audit(deps: AdminDeps, ex: Executor, client: ClientRow, action: AuditAction, detail: Record<string, unknown>): Promise<void> {
  const teamIds = client.team_id !== null ? [client.team_id] : (await listTeams(ex)).map((t) => t.id);
  for (const teamId of teamIds) {
    await recordEvent(ex, deps.clock, { teamId, actor: deps.actor ?? CLI_ACTOR, requestId: null, action, resourceType: 'Client', resourceId: client.id, detail });
  }
}

/**
 * Refuses one more credential over the team's budget (`client.credentials`); a client bound to no
 * team is held to the budget's default on its own. Counted in the adding transaction.
 */
async function assertWithinBudget(ex: Executor, client: ClientRow): Promise<void> {
  const team = client.team_id !== null ? await teamById(ex, client.team_id) : undefined;
  const budget = budgetsOf(team ?? {})['client.credentials'];
  const held = team ? await trustCountOfTeam(ex, team.id) : await trustCountOfClient(ex, client.id);
  if (held + 1 <= budget) return;
  const over = `federated credentials and key sets; the budget "client.credentials" is ${budget}`;
  if (!team) throw new AdminError(`client ${client.id} holds ${held} ${over} (a client bound to no team is held to the default)`);
  throw new OverBudget(team.id, 'client.credentials', `team ${team.name}'s clients hold ${held} ${over}`);
}

/** `client key add`: an inline JWK Set (its text) or a `jwks_uri`, exactly one. */
export async function addClientKey(deps: AdminDeps, clientId: string, source: { readonly jwks?: string; readonly jwksUri?: string }): Promise<ClientKeyView> {
  if ((source.jwks === undefined) === (source.jwksUri === undefined)) throw new AdminError('give exactly one of --jwks FILE or --jwks-uri URL');
  const client = await requireClient(deps, clientId);
  const jwks = source.jwks !== undefined ? JSON.stringify(await parseJwks(source.jwks)) : null;
  if (source.jwksUri !== undefined) {
    const problem = trustUrlProblem(source.jwksUri);
    if (problem) throw new AdminError(`--jwks-uri: ${problem}`);
  }
  const row: ClientKeyRow = { id: newId(), client_id: client.id, team_id: client.team_id, jwks, jwks_uri: source.jwksUri ?? null, created_at: iso(deps.clock) };
  await transact(deps.storage.db, async (trx) => {
    await assertWithinBudget(trx, client);
    await insertClientKey(trx, row);
    await audit(deps, trx, client, 'client_key_added', { keyId: row.id, ...(row.jwks_uri !== null ? { jwksUri: row.jwks_uri } : { kids: keyView(row).kids }) });
  });
  return keyView(row);
}

export async function listClientKeys(deps: AdminDeps, clientId: string): Promise<ClientKeyView[]> {
  const client = await requireClient(deps, clientId);
  return (await clientKeysOf(deps.storage.db, client.id)).map(keyView);
}

export async function removeClientKey(deps: AdminDeps, clientId: string, id: string): Promise<void> {
  const client = await requireClient(deps, clientId);
  await transact(deps.storage.db, async (trx) => {
    if (!(await deleteClientKey(trx, client.id, id))) throw new AdminError(`client ${client.id} has no key set "${id.slice(0, 40)}" (see: rollcall client key list)`);
    await audit(deps, trx, client, 'client_key_removed', { keyId: id });
  });
}

const text = (name: string, value: string, max: number): string => {
  if (value.trim() !== value || value === '' || value.length > max || /[\u0000-\u001f]/.test(value)) {
    throw new AdminError(`${name} is 1-${max} characters without surrounding spaces or control characters`);
  }
  return value;
};

/** `client federation add`: the client (bound to a team) trusts `issuer`'s assertions about `subject`. */
export async function addFederation(
  deps: AdminDeps,
  clientId: string,
  options: { readonly issuer: string; readonly subject: string; readonly audience?: string; readonly jwksUri?: string },
): Promise<FederationView> {
  const client = await requireClient(deps, clientId);
  try {
    return await transact(deps.storage.db, (trx) => addFederationIn(trx, deps, client, options));
  } catch (error) {
    if (deps.storage.hooks.isUniqueViolation(error)) throw new AdminError(`client ${client.id} already trusts that issuer for that subject`);
    throw error;
  }
}

/**
 * Adds a federated credential to `client` with its audit row in the caller's transaction `trx`
 * (addFederation's, or the connection wizard's, which makes a connection, its client and the
 * client's federated credential in one). Refused over the team's budget (OverBudget) or for bad
 * input (AdminError).
 */
export async function addFederationIn(
  trx: Executor,
  deps: AdminDeps,
  client: ClientRow,
  options: { readonly issuer: string; readonly subject: string; readonly audience?: string; readonly jwksUri?: string },
): Promise<FederationView> {
  if (client.team_id === null) throw new AdminError(`client ${client.id} is bound to no team; federated credentials are for clients created with --team (client_credentials)`);
  const issuerProblem = trustUrlProblem(options.issuer);
  if (issuerProblem) throw new AdminError(`--issuer: ${issuerProblem}`);
  if (options.jwksUri !== undefined) {
    const problem = trustUrlProblem(options.jwksUri);
    if (problem) throw new AdminError(`--jwks-uri: ${problem}`);
  }
  const row: FederationRow = {
    id: newId(),
    client_id: client.id,
    team_id: client.team_id,
    issuer: text('--issuer', options.issuer, 2000),
    subject: text('--subject', options.subject, 200),
    audience: options.audience !== undefined ? text('--audience', options.audience, 200) : client.id,
    jwks_uri: options.jwksUri ?? null,
    created_at: iso(deps.clock),
  };
  await assertWithinBudget(trx, client);
  await insertFederation(trx, row);
  await audit(deps, trx, client, 'client_federation_added', { federationId: row.id, issuer: row.issuer, subject: row.subject, audience: row.audience, jwksUri: row.jwks_uri });
  return federationView(row);
}

export async function listFederations(deps: AdminDeps, clientId: string): Promise<FederationView[]> {
  const client = await requireClient(deps, clientId);
  return (await federationsOf(deps.storage.db, client.id)).map(federationView);
}

export async function removeFederation(deps: AdminDeps, clientId: string, id: string): Promise<void> {
  const client = await requireClient(deps, clientId);
  await transact(deps.storage.db, async (trx) => {
    if (!(await deleteFederation(trx, client.id, id))) throw new AdminError(`client ${client.id} has no federated credential "${id.slice(0, 40)}" (see: rollcall client federation list)`);
    await audit(deps, trx, client, 'client_federation_removed', { federationId: id });
  });
}
