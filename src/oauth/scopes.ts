/**
 * Scopes (DESIGN.md sections 5 and 14): `read` allows GET on the SCIM API, `write` everything
 * else; `ssf` manages and polls the team's Shared Signals streams (SSF 1.0). A request naming no
 * scope gets `read` and `write` (DEFAULT_SCOPES), which is what the contract's token response
 * shows; `ssf` is granted only when asked for.
 */
import { invalidScope } from './errors.ts';

export const ALL_SCOPES = ['read', 'write', 'ssf'] as const;
export type Scope = (typeof ALL_SCOPES)[number];

/** What a request that names no scope gets, and what `scim` stands for. */
export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'write'];

const isScope = (s: string): s is Scope => (ALL_SCOPES as readonly string[]).includes(s);

/**
 * `scim`, the scope Entra ID's provisioning service asks for in its token request, stands for
 * everything provisioning needs: `read` and `write` (DEFAULT_SCOPES).
 */
export const PROVISIONING_SCOPE = 'scim';

/**
 * The scopes of a `scope` parameter (RFC 6749 3.3), limited to `granted` when given (a refresh
 * may not widen its grant, RFC 6749 6). Absent or empty means what was granted, or for a new
 * grant DEFAULT_SCOPES.
 */
export function parseScope(raw: string | undefined, granted?: readonly Scope[]): Scope[] {
  const allowed = granted ?? ALL_SCOPES;
  if (raw === undefined || raw.trim() === '') return [...(granted ?? DEFAULT_SCOPES)];
  const asked = [...new Set(raw.trim().split(/ +/).flatMap((s) => (s === PROVISIONING_SCOPE ? [...DEFAULT_SCOPES] : [s])))];
  for (const s of asked) {
    if (!isScope(s)) throw invalidScope(`Unknown scope "${s.slice(0, 40)}"; scopes are read, write, ssf and scim (read and write)`);
    if (!allowed.includes(s)) throw invalidScope(`The scope "${s}" was not granted`);
  }
  return ALL_SCOPES.filter((s) => asked.includes(s));
}

export const scopeString = (scopes: readonly string[]): string => scopes.join(' ');

export const scopesOf = (stored: string): Scope[] => stored.split(' ').filter(isScope);
