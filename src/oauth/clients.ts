/**
 * OAuth clients (RFC 6749 sections 2 and 3.1.2; RFC 9700 2.1 and 4.1.3): registration rules for
 * redirect URIs, secrets (shown once, kept as SHA-256 hashes, compared in constant time), and
 * the exact-match rule for a redirect URI presented at the authorization endpoint, where only
 * the port of a loopback URI may vary (RFC 8252 7.3).
 */
import { timingSafeEqual } from 'node:crypto';
import { newToken, sha256 } from '../ids.ts';
import { clientById } from '../storage/repos/clients.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import type { Executor } from '../storage/types.ts';

export const CLIENT_SECRET_PREFIX = 'rc_cs_';

export const newClientSecret = (): string => newToken(CLIENT_SECRET_PREFIX);

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why `uri` cannot be registered as a redirect URI, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `"${uri}" is not an absolute URI`;
  }
  if (uri.includes('#')) return `"${uri}" has a fragment; redirect URIs may not (RFC 6749 3.1.2)`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return undefined;
  return `"${uri}" must use https (http only for 127.0.0.1, [::1] or localhost)`;
}

export const redirectUrisOf = (client: ClientRow): string[] => JSON.parse(client.redirect_uris) as string[];

/** Exact string match with a registered URI; for a loopback http URI, any port (RFC 8252 7.3). */
export function matchesRegistered(client: ClientRow, given: string): boolean {
  const registered = redirectUrisOf(client);
  if (registered.includes(given)) return true;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) return false;
  return registered.some((r) => {
    const reg = new URL(r);
    if (reg.protocol !== 'http:' || reg.hostname !== url.hostname) return false;
    reg.port = url.port;
    return reg.toString() === url.toString() && given === url.toString();
  });
}

/** Client ids are resource ids (ids.ts): 20 characters of [A-Z0-9]; nothing else can name a client. */
export const isWellFormedClientId = (id: string): boolean => /^[A-Z0-9]{20}$/.test(id);

const equalHashes = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The client if `secret` is its secret; undefined otherwise, in time independent of where they
 * differ. `lookup` finds the row (the token endpoint's ClientCache, or a plain read).
 */
export async function authenticateClient(
  ex: Executor,
  id: string,
  secret: string,
  lookup: (id: string) => Promise<ClientRow | undefined> = (i) => clientById(ex, i),
): Promise<ClientRow | undefined> {
  const client = isWellFormedClientId(id) ? await lookup(id) : undefined;
  const presented = sha256(secret);
  // Compare against something even for an unknown id, so timing does not reveal which ids exist.
  const ok = equalHashes(presented, client?.secret_hash ?? sha256(`${id}:unknown`));
  return ok && client ? client : undefined;
}
