/**
 * The subjects a receiver adds to or removes from a stream (SSF 1.0 section 8.1.3), resolved to
 * users of its team. A subject is an RFC 9493 subject identifier, or an SSF complex subject
 * (section 3.3) whose `user` member is one:
 * - `email`: users one of whose emails is that address (case-insensitive, as SCIM compares it);
 * - `iss_sub`: `iss` Rollcall's issuer, `sub` the user's SCIM id (what the signals carry);
 * - `opaque`: `id` the user's SCIM id;
 * - `scim` (RFC 9967's SCIM subject): `uri` the user's location (`/Users/<id>`, relative or
 *   absolute) and/or its `externalId`;
 * - `aliases`: any of its identifiers.
 * Any other format is well formed but names nobody Rollcall knows (nothing matches); a subject
 * that is no identifier at all (not an object, no format, a member of the wrong type) is a 400.
 * It reads users through storage's predicate vocabulary; no SQL, no HTTP.
 */
import { userIdsWhere } from '../../storage/repos/ssf-streams.ts';
import type { Predicate } from '../../storage/predicate.ts';
import type { Executor } from '../../storage/types.ts';
import { invalidValue } from '../errors.ts';

/** How many users one subject may name (an email shared by many users names them all, up to this). */
const MAX_USERS = 1_000;
const MAX_ALIASES = 20;

type Identifier = Readonly<Record<string, unknown>>;

const isObject = (v: unknown): v is Identifier => typeof v === 'object' && v !== null && !Array.isArray(v);

function member(identifier: Identifier, name: string, optional = false): string | undefined {
  const value = identifier[name];
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string' || value === '') throw invalidValue(`a subject of format "${String(identifier.format)}" needs "${name}" as a non-empty string`);
  return value;
}

const column = (name: 'id' | 'external_id', value: string): Predicate => ({ kind: 'text', scalar: { at: 'column', column: name }, op: 'eq', value, folded: false });

/** The user id a SCIM location names: `/Users/<id>`, relative or absolute; undefined for anything else. */
function idOfLocation(uri: string): string | undefined {
  const match = /(?:^|\/)Users\/([^/?#]+)$/.exec(uri);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

const NOBODY: Predicate = { kind: 'not', predicate: { kind: 'always' } };

/** The users one simple subject identifier names, as a predicate (NOBODY when it can name none). */
function predicateOf(identifier: unknown, issuer: string, nested: boolean): Predicate[] {
  if (!isObject(identifier) || typeof identifier.format !== 'string') throw invalidValue('subject must be a subject identifier: a JSON object with its "format" (RFC 9493)');
  switch (identifier.format) {
    case 'email': {
      const email = member(identifier, 'email')!;
      return [{ kind: 'anyElement', array: ['emails'], where: { kind: 'text', scalar: { at: 'element', keys: ['value'] }, op: 'eq', value: email.toLowerCase(), folded: true } }];
    }
    case 'iss_sub': {
      const iss = member(identifier, 'iss')!;
      const sub = member(identifier, 'sub')!;
      return [iss === issuer ? column('id', sub) : NOBODY];
    }
    case 'opaque':
      return [column('id', member(identifier, 'id')!)];
    case 'scim': {
      const uri = member(identifier, 'uri', true);
      const externalId = member(identifier, 'externalId', true);
      if (uri === undefined && externalId === undefined) throw invalidValue('a subject of format "scim" needs its "uri" or its "externalId"');
      const byUri = uri === undefined ? undefined : idOfLocation(uri);
      if (uri !== undefined && byUri === undefined) return [NOBODY];
      const parts = [...(byUri !== undefined ? [column('id', byUri)] : []), ...(externalId !== undefined ? [column('external_id', externalId)] : [])];
      return [parts.reduce((left, right) => ({ kind: 'and', left, right }))];
    }
    case 'aliases': {
      if (nested) throw invalidValue('an aliases subject cannot hold another aliases subject');
      const identifiers = identifier.identifiers;
      if (!Array.isArray(identifiers) || identifiers.length === 0 || identifiers.length > MAX_ALIASES) throw invalidValue(`a subject of format "aliases" needs "identifiers": 1 to ${MAX_ALIASES} subject identifiers`);
      return identifiers.flatMap((i) => predicateOf(i, issuer, true));
    }
    case 'complex': {
      if (nested) throw invalidValue('a complex subject cannot be nested');
      // Only a complex subject's user names users; its other members (tenant, device...) do not here.
      return identifier.user === undefined ? [NOBODY] : predicateOf(identifier.user, issuer, true);
    }
    default:
      return [NOBODY];
  }
}

/** The team's users a subject names (none when it names nobody Rollcall knows), and its format for the audit row. */
export async function resolveSubject(ex: Executor, teamId: string, issuer: string, subject: unknown): Promise<{ format: string; userIds: string[] }> {
  if (subject === undefined) throw invalidValue('subject is required: the subject identifier to add or remove');
  const predicates = predicateOf(subject, issuer, false).filter((p) => p !== NOBODY);
  const format = String((subject as Identifier).format);
  if (predicates.length === 0) return { format, userIds: [] };
  const where = predicates.reduce((left, right) => ({ kind: 'or', left, right }));
  return { format, userIds: await userIdsWhere(ex, teamId, where, MAX_USERS) };
}
