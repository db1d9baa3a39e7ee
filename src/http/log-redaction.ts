/**
 * What the SCIM request log keeps of a request's body and filter: nothing secret. A value is
 * secret when the name that carries it is: an attribute the team's schemas declare `returned:
 * never` (the core `password`, and any extension attribute so declared, sub-attributes included)
 * or a name that says credential (password, secret, token, key...). Names are read the way the
 * SCIM parsers read them (RFC 7643 2.1, RFC 7644 3.10): in any letter case, with or without a
 * schema URN prefix, as a segment of a dotted path, in a PatchOp member spelled `Path`, `PATH`,
 * `VALUE`, or as a key of a value object or a nested extension object. Redaction errs on the
 * side of hiding: a name that merely contains a secret name's segment hides its value too.
 *
 * A filter (the `filter` query parameter, a `/.search` body's `filter`, the brackets of a PATCH
 * path) is text, and a refused one is logged as sent: in each clause that names a secret
 * attribute, every literal (quoted or bare) is replaced. This module decides nothing about what
 * is logged and reads no storage; request-journal.ts calls it.
 */
import type { TeamTypes } from '../scim/schema/extensions.ts';
import type { AttributeDef } from '../scim/schema/types.ts';

export const REDACTED = '[redacted]';

/** Names whose values are never stored: passwords, secrets, tokens, keys, credentials. */
const SENSITIVE = /pass(word|wd|phrase)?|secret|token|credential|private|api[-_]?key|authorization|cookie/i;

/** Decides whether a name (one segment of a path, any case) carries a secret. */
export type SecretName = (name: string) => boolean;

/** Credential-like names only: what is known without the team's schemas (the application log). */
export const credentialName: SecretName = (name) => SENSITIVE.test(name) || SENSITIVE.test(name.toLowerCase());

/** The lower-cased names of every `returned: never` attribute (and sub-attribute) of `types`. */
export function neverReturned(types: TeamTypes): ReadonlySet<string> {
  const names = new Set<string>();
  const visit = (attrs: readonly AttributeDef[]) => {
    for (const attr of attrs) {
      if (attr.returned === 'never') names.add(attr.name.toLowerCase());
      if (attr.subAttributes) visit(attr.subAttributes);
    }
  };
  for (const rt of [types.User, types.Group]) {
    visit(rt.schema.attributes);
    for (const ext of rt.extensions) visit(ext.schema.attributes);
  }
  return names;
}

/** Credential-like names, and the attributes a team's schemas never return. */
export function secretNames(never: ReadonlySet<string>): SecretName {
  return (name) => {
    // Folded as the schema lookup folds (registry.ts `lower`): the Kelvin sign reads as "k" there.
    const folded = name.toLowerCase();
    return SENSITIVE.test(name) || SENSITIVE.test(folded) || never.has(folded);
  };
}

/**
 * Whether a member name or path text names a secret: any of its name segments does (a URN
 * prefix, a dotted sub-attribute and a value filter's words are all segments).
 */
export function namesSecret(text: string, secret: SecretName): boolean {
  // Split at ASCII punctuation and spaces only: a letter outside ASCII may fold into a name.
  return text.split(/[^\p{L}\p{N}\p{M}_$-]+/u).some((segment) => segment !== '' && secret(segment));
}

const OPERATORS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'pr']);
const JOINERS = new Set(['and', 'or', 'not']);
const BRACKETS = new Set(['(', ')', '[', ']']);

interface Token {
  readonly start: number;
  readonly end: number;
  readonly kind: 'quoted' | 'bracket' | 'word';
}

/** Tokens of a filter as sent (it may not parse): quoted strings (to their end), brackets, words. */
function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out.push({ start: i, end: Math.min(j + 1, text.length), kind: 'quoted' });
      i = j + 1;
    } else if (BRACKETS.has(c)) {
      out.push({ start: i, end: i + 1, kind: 'bracket' });
      i++;
    } else {
      let j = i;
      while (j < text.length && !/\s/.test(text[j]!) && text[j] !== '"' && !BRACKETS.has(text[j]!)) j++;
      out.push({ start: i, end: j, kind: 'word' });
      i = j;
    }
  }
  return out;
}

/**
 * `filter` with every literal of each clause that names a secret attribute replaced (RFC 7644
 * 3.4.2.2 grammar, read leniently: a refused filter is logged too). Clauses are split at
 * brackets and `and` / `or` / `not`; a token right after a comparison operator is always the
 * clause's value, whatever it spells.
 */
export function redactFilter(filter: string, secret: SecretName): string {
  const clauses: { token: Token; value: boolean }[][] = [[]];
  let afterOperator = false;
  for (const token of tokens(filter)) {
    const word = token.kind === 'word' ? filter.slice(token.start, token.end).toLowerCase() : '';
    const value: boolean = afterOperator;
    afterOperator = token.kind === 'word' && OPERATORS.has(word) && !value;
    if (!value && (token.kind === 'bracket' || JOINERS.has(word))) clauses.push([]);
    else clauses.at(-1)!.push({ token, value });
  }
  const replaced: { start: number; end: number; text: string }[] = [];
  for (const clause of clauses) {
    const names = (t: { token: Token; value: boolean }) => t.token.kind === 'word' && namesSecret(filter.slice(t.token.start, t.token.end), secret);
    if (!clause.some(names)) continue;
    for (const t of clause) {
      const text = filter.slice(t.token.start, t.token.end);
      if (t.token.kind === 'quoted') replaced.push({ start: t.token.start, end: t.token.end, text: `"${REDACTED}"` });
      else if (t.value || (!names(t) && !OPERATORS.has(text.toLowerCase()))) replaced.push({ start: t.token.start, end: t.token.end, text: REDACTED });
    }
  }
  let out = '';
  let at = 0;
  for (const r of replaced) {
    out += filter.slice(at, r.start) + r.text;
    at = r.end;
  }
  return out + filter.slice(at);
}

/** `url` with the `filter` query parameter's secret literals replaced (re-encoded). */
export function redactUrlFilter(url: string, secret: SecretName): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(pair.slice(0, eq).replace(/\+/g, ' '));
      value = decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      // Not decodable: kept only when it names nothing secret.
      return namesSecret(pair, secret) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
    }
    if (name.toLowerCase() !== 'filter') return pair;
    const redacted = redactFilter(value, secret);
    return redacted === value ? pair : `${pair.slice(0, eq)}=${encodeURIComponent(redacted)}`;
  });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

type Json = Record<string, unknown>;

/**
 * A copy of `body` fit for the log: secret members, and every `value` member of an object whose
 * `path` member (either in any letter case) names a secret, replaced by "[redacted]"; `filter`
 * and `path` strings redacted as filters; strings cut at 256 characters, at most 2,000 nodes
 * visited and 8 levels deep; then serialised and cut at `maxChars`.
 */
export function redactBody(body: unknown, secret: SecretName, maxChars: number): string | null {
  if (body === undefined || body === null) return null;
  let budget = 2000;
  const cut = (text: string) => (text.length > 256 ? `${text.slice(0, 256)}…` : text);
  const walk = (value: unknown, depth: number): unknown => {
    if (--budget < 0) return '[…]';
    if (typeof value === 'string') return cut(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > 8) return '[…]';
    if (Array.isArray(value)) return value.slice(0, 200).map((v) => walk(v, depth + 1));
    const record = value as Json;
    const entries = Object.entries(record);
    // A path that is not a string is refused by the parser, and hides its operation's value too.
    const pathIsSecret = entries.some(([key, v]) => key.toLowerCase() === 'path' && v !== null && (typeof v !== 'string' || namesSecret(v, secret)));
    const out: Json = {};
    for (const [key, v] of entries) {
      if (budget < 0) break;
      const lowerKey = key.toLowerCase();
      if (namesSecret(key, secret) || (pathIsSecret && lowerKey === 'value')) out[key] = REDACTED;
      else if ((lowerKey === 'filter' || lowerKey === 'path') && typeof v === 'string') out[key] = cut(redactFilter(v, secret));
      else out[key] = walk(v, depth + 1);
    }
    return out;
  };
  const text = JSON.stringify(walk(body, 0));
  return text.length > maxChars ? `${text.slice(0, maxChars)}…[truncated]` : text;
}
