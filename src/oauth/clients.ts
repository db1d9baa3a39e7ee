/**
 * OAuth clients (RFC 6749 sections 2 and 3.1.2; RFC 9700 2.1 and 4.1.3): registration rules for
 * redirect URIs, the shape of secrets (shown once, kept as SHA-256 hashes; client-secrets.ts
 * checks them), and the exact-match rule for a redirect URI presented at the authorization endpoint, where only
 * the port of a loopback URI may vary (RFC 8252 7.3).
 */
import { newToken } from '../ids.ts';
import type { ClientRow } from '../storage/repos/clients.ts';

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
