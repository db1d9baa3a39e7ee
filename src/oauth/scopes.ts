/**
 * Scopes (DESIGN.md section 5): `read` allows GET on the SCIM API, `write` everything else. A
 * request naming no scope gets both, which is what the contract's token response shows.
 */
import { invalidScope } from './errors.ts';

export const ALL_SCOPES = ['read', 'write'] as const;
export type Scope = (typeof ALL_SCOPES)[number];

const isScope = (s: string): s is Scope => (ALL_SCOPES as readonly string[]).includes(s);

/**
 * `scim`, the scope Entra ID's provisioning service asks for in its token request, stands for
 * everything provisioning needs: `read` and `write`.
 */
export const PROVISIONING_SCOPE = 'scim';

/**
 * The scopes of a `scope` parameter (RFC 6749 3.3), limited to `allowed` (a refresh may not
 * widen its grant, RFC 6749 6). Absent or empty means everything allowed.
 */
export function parseScope(raw: string | undefined, allowed: readonly Scope[] = ALL_SCOPES): Scope[] {
  if (raw === undefined || raw.trim() === '') return [...allowed];
  const asked = [...new Set(raw.trim().split(/ +/).flatMap((s) => (s === PROVISIONING_SCOPE ? [...ALL_SCOPES] : [s])))];
  for (const s of asked) {
    if (!isScope(s)) throw invalidScope(`Unknown scope "${s.slice(0, 40)}"; scopes are read, write and scim (both)`);
    if (!allowed.includes(s)) throw invalidScope(`The scope "${s}" was not granted`);
  }
  return ALL_SCOPES.filter((s) => asked.includes(s));
}

export const scopeString = (scopes: readonly string[]): string => scopes.join(' ');

export const scopesOf = (stored: string): Scope[] => stored.split(' ').filter(isScope);
