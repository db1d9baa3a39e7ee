/**
 * The JSONL layout of `rollcall import`: each line one SCIM User or Group resource as a client
 * would POST it. What the server assigns (`id`, `meta`) and what a user cannot write (`groups`)
 * are dropped; a group's `members` are read apart: `value` is a user id, and a member without
 * one may name its user by `userName` or `display` (resolved to the id before writing). A line
 * of the other resource type (its `schemas` name the other core schema) is refused.
 */
import { GROUP_SCHEMA, USER_SCHEMA } from '../scim/schema/urns.ts';
import { lower } from '../scim/schema/registry.ts';
import type { JsonlRecord } from './jsonl.ts';
import { KEY_COLUMN } from './columns.ts';
import { refusal } from './rows.ts';
import type { ImportKind, ImportRow, MemberRef } from './rows.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Attributes of a resource the import never sends, by lower-cased name. */
const DROPPED: Readonly<Record<ImportKind, ReadonlySet<string>>> = {
  users: new Set(['id', 'meta', 'groups']),
  groups: new Set(['id', 'meta', 'members']),
};

/** The kind a record's `schemas` name, if they name a core schema. */
function schemaKind(value: Json): ImportKind | undefined {
  const schemas = Object.entries(value).find(([k]) => lower(k) === 'schemas')?.[1];
  if (!Array.isArray(schemas)) return undefined;
  const names = schemas.filter((s): s is string => typeof s === 'string').map(lower);
  if (names.includes(lower(USER_SCHEMA))) return 'users';
  if (names.includes(lower(GROUP_SCHEMA))) return 'groups';
  return undefined;
}

/** The kind of the resource a record holds: its schemas, else users when it has a userName. */
export function kindOfRecord(value: unknown): ImportKind | undefined {
  if (!isObject(value)) return undefined;
  const named = schemaKind(value);
  if (named) return named;
  const keys = new Set(Object.keys(value).map(lower));
  if (keys.has('username')) return 'users';
  if (keys.has('members') || keys.has('displayname')) return 'groups';
  return undefined;
}

const field = (o: Json, name: string): unknown => Object.entries(o).find(([k]) => lower(k) === lower(name))?.[1];

function membersOf(value: unknown): MemberRef[] | string {
  if (!Array.isArray(value)) return 'members must be an array';
  const out: MemberRef[] = [];
  for (const [i, m] of value.entries()) {
    if (!isObject(m)) return `members[${i}] must be an object`;
    const id = field(m, 'value');
    const userName = field(m, 'userName') ?? field(m, 'display');
    if (typeof id === 'string' && id !== '') out.push({ id });
    else if (typeof userName === 'string' && userName !== '') out.push({ userName });
    else return `members[${i}] names no user: give its id as value, or its userName`;
  }
  return out;
}

/** One line as an import row of `kind`. */
export function recordRow(kind: ImportKind, record: JsonlRecord): ImportRow {
  const { line } = record;
  if (record.problem !== undefined) return { line, raw: record.text, refusal: refusal('invalidSyntax', record.problem) };
  const value = record.value;
  if (!isObject(value)) return { line, raw: value, refusal: refusal('invalidSyntax', `the line is not a JSON object (a SCIM ${kind === 'users' ? 'User' : 'Group'})`) };
  const other = schemaKind(value);
  if (other !== undefined && other !== kind) return { line, raw: value, refusal: refusal('invalidValue', `the line is a ${other === 'users' ? 'User' : 'Group'}; this import writes ${kind}`) };
  const resource: Json = {};
  for (const [k, v] of Object.entries(value)) if (!DROPPED[kind].has(lower(k))) resource[k] = v;
  const key = field(resource, KEY_COLUMN[kind]);
  if (typeof key !== 'string' || key === '') return { line, raw: value, refusal: refusal('invalidValue', `${KEY_COLUMN[kind]} is missing; every line needs one`) };
  if (kind === 'users') return { line, raw: value, key, resource };
  const given = field(value, 'members');
  if (given === undefined) return { line, raw: value, key, resource };
  const members = membersOf(given);
  if (typeof members === 'string') return { line, raw: value, refusal: refusal('invalidValue', members) };
  return { line, raw: value, key, resource, members };
}
