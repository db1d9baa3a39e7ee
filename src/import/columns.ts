/**
 * The CSV layout of `rollcall import`: which columns a header may name and how a row's fields
 * become a SCIM resource. Users: userName (required), externalId, givenName, familyName,
 * displayName, email (the work e-mail, primary), phone (the work number), title, active; groups:
 * displayName (required), externalId, members (userNames separated by `;`). Either may add
 * `urn:...:attribute` columns (`urn:...:attribute.sub` for a sub-attribute of a complex one) for
 * the attributes of the team's extensions of that resource type, converted by the attribute's
 * type (a multi-valued one takes values separated by `;`). Header names match in any case. An
 * empty field leaves the attribute out: the import never clears what the file does not give.
 * The header is checked whole before any row is read, so a typo in a column name stops the
 * import (ImportFileError) instead of dropping a column from every row.
 */
import { extensionByUrn, findAttribute, findSubAttribute, lower } from '../scim/schema/registry.ts';
import type { AttributeDef, ResourceTypeDef } from '../scim/schema/types.ts';
import { GROUP_SCHEMA, USER_SCHEMA } from '../scim/schema/urns.ts';
import type { CsvRecord } from './csv.ts';
import { ImportFileError, refusal } from './rows.ts';
import type { ImportKind, ImportRow, MemberRef } from './rows.ts';

type Json = Record<string, unknown>;

/** Writes one non-empty field into the resource being built; returns a problem to refuse the row with. */
type Setter = (doc: Json, value: string) => string | undefined;

interface Column {
  readonly name: string;
  readonly set: Setter;
  /** The extension URN the column writes under (added to the resource's schemas). */
  readonly urn?: string;
}

const object = (doc: Json, key: string): Json => (doc[key] ??= {}) as Json;

const BOOLEANS: Readonly<Record<string, boolean>> = { true: true, false: false, yes: true, no: false, '1': true, '0': false };

function booleanOf(value: string): boolean | undefined {
  const key = value.trim().toLowerCase();
  return Object.hasOwn(BOOLEANS, key) ? BOOLEANS[key] : undefined;
}

/** The columns of a users file. */
const USER_COLUMNS: Readonly<Record<string, Setter>> = {
  userName: (d, v) => void (d.userName = v),
  externalId: (d, v) => void (d.externalId = v),
  givenName: (d, v) => void (object(d, 'name').givenName = v),
  familyName: (d, v) => void (object(d, 'name').familyName = v),
  displayName: (d, v) => void (d.displayName = v),
  email: (d, v) => void (d.emails = [{ value: v, type: 'work', primary: true }]),
  phone: (d, v) => void (d.phoneNumbers = [{ value: v, type: 'work' }]),
  title: (d, v) => void (d.title = v),
  active: (d, v) => {
    const b = booleanOf(v);
    if (b === undefined) return `active is "${v}"; write true or false`;
    d.active = b;
    return undefined;
  },
};

/** The columns of a groups file; `members` is read apart (its userNames are resolved to ids). */
const GROUP_COLUMNS: Readonly<Record<string, Setter>> = {
  displayName: (d, v) => void (d.displayName = v),
  externalId: (d, v) => void (d.externalId = v),
};

/** Each kind's columns by lower-cased name (header names match in any case). */
const BY_KEY: Readonly<Record<ImportKind, ReadonlyMap<string, Setter>>> = {
  users: new Map(Object.entries(USER_COLUMNS).map(([name, set]) => [lower(name), set])),
  groups: new Map(Object.entries(GROUP_COLUMNS).map(([name, set]) => [lower(name), set])),
};

/** The column that keys each kind's rows. */
export const KEY_COLUMN: Readonly<Record<ImportKind, string>> = { users: 'userName', groups: 'displayName' };

/** A field as the attribute's type wants it, or the problem with it. */
function converted(attr: AttributeDef, value: string, column: string): { value: unknown } | { problem: string } {
  const one = (text: string): { value: unknown } | { problem: string } => {
    switch (attr.type) {
      case 'boolean': {
        const b = booleanOf(text);
        return b === undefined ? { problem: `${column} is "${text}"; write true or false` } : { value: b };
      }
      case 'integer':
        return /^[+-]?\d{1,15}$/.test(text.trim()) ? { value: Number(text) } : { problem: `${column} is "${text}"; write a whole number` };
      case 'decimal': {
        const n = Number(text);
        return text.trim() !== '' && Number.isFinite(n) ? { value: n } : { problem: `${column} is "${text}"; write a number` };
      }
      default:
        return { value: text };
    }
  };
  if (!attr.multiValued) return one(value);
  const values: unknown[] = [];
  for (const part of value.split(';').map((p) => p.trim()).filter((p) => p !== '')) {
    const c = one(part);
    if ('problem' in c) return c;
    values.push(c.value);
  }
  return { value: values };
}

/** The column of an extension attribute, `urn:...:name` or `urn:...:name.sub`; throws when the team has no such attribute. */
function extensionColumn(rt: ResourceTypeDef, header: string): Column {
  const at = header.lastIndexOf(':');
  const urn = header.slice(0, at);
  const ext = extensionByUrn(rt, urn);
  if (!ext) throw new ImportFileError(`column "${header}": ${urn} is not an extension of the team's ${rt.name} resources`);
  const [name = '', subName, ...deeper] = header.slice(at + 1).split('.');
  const attr = findAttribute(ext.attributes, name);
  if (!attr || deeper.length > 0) throw new ImportFileError(`column "${header}": ${ext.id} has no attribute "${header.slice(at + 1)}"`);
  if (subName === undefined) {
    if (attr.type === 'complex') throw new ImportFileError(`column "${header}": ${attr.name} is complex; name a sub-attribute (${header}.value), or import from JSONL`);
    return { name: header, urn: ext.id, set: (d, v) => setConverted(object(d, ext.id), attr, attr.name, v, header) };
  }
  const sub = findSubAttribute(attr, subName);
  if (!sub || attr.multiValued) throw new ImportFileError(`column "${header}": ${attr.name} has no sub-attribute "${subName}" a column can set`);
  return { name: header, urn: ext.id, set: (d, v) => setConverted(object(object(d, ext.id), attr.name), sub, sub.name, v, header) };
}

function setConverted(target: Json, attr: AttributeDef, name: string, value: string, column: string): string | undefined {
  const c = converted(attr, value, column);
  if ('problem' in c) return c.problem;
  target[name] = c.value;
  return undefined;
}

/** Which kind of resource a header describes: users when it has a userName column, groups when it has displayName or members. */
export function kindOfHeader(header: readonly string[]): ImportKind | undefined {
  const names = new Set(header.map((h) => lower(h.trim())));
  if (names.has('username')) return 'users';
  if (names.has('members') || names.has('displayname')) return 'groups';
  return undefined;
}

/** A CSV file's rows as resources of `rt`, by the columns of its header. */
export class CsvLayout {
  readonly #kind: ImportKind;
  readonly #header: readonly string[];
  readonly #columns: readonly (Column | 'members')[];

  /** Checks the header: every column known, none twice, the key column present. */
  constructor(kind: ImportKind, rt: ResourceTypeDef, header: CsvRecord) {
    if (header.problem) throw new ImportFileError(`the header (line ${header.line}): ${header.problem}`);
    this.#kind = kind;
    this.#header = header.fields.map((h) => h.trim());
    const known = BY_KEY[kind];
    const seen = new Set<string>();
    this.#columns = this.#header.map((name) => {
      const key = lower(name);
      if (seen.has(key)) throw new ImportFileError(`the header names column "${name}" twice`);
      seen.add(key);
      if (kind === 'groups' && key === 'members') return 'members';
      const set = known.get(key);
      if (set) return { name, set };
      if (/^urn:/i.test(name)) return extensionColumn(rt, name);
      const names = [...Object.keys(kind === 'users' ? USER_COLUMNS : GROUP_COLUMNS), ...(kind === 'groups' ? ['members'] : [])];
      throw new ImportFileError(`unknown column "${name}" in a ${kind} file (known: ${names.join(', ')}, and urn:...:attribute for the team's extensions)`);
    });
    if (!seen.has(lower(KEY_COLUMN[kind]))) throw new ImportFileError(`a ${kind} file needs a ${KEY_COLUMN[kind]} column`);
  }

  /** One record as an import row: its resource and key, or why it is refused. */
  row(record: CsvRecord): ImportRow {
    const raw: Record<string, string> = {};
    this.#header.forEach((name, i) => {
      if (i < record.fields.length) raw[name] = record.fields[i]!;
    });
    const refused = (detail: string, scimType: 'invalidSyntax' | 'invalidValue' = 'invalidValue'): ImportRow => ({ line: record.line, raw, refusal: refusal(scimType, detail) });
    if (record.problem) return { line: record.line, raw: { fields: record.fields }, refusal: refusal('invalidSyntax', `line ${record.line}: ${record.problem}`) };
    if (record.fields.length !== this.#header.length) {
      return { line: record.line, raw: { fields: record.fields }, refusal: refusal('invalidSyntax', `the row has ${record.fields.length} fields; the header has ${this.#header.length}`) };
    }
    const doc: Json = { schemas: [this.#kind === 'users' ? USER_SCHEMA : GROUP_SCHEMA] };
    let members: MemberRef[] | undefined;
    for (const [i, column] of this.#columns.entries()) {
      const value = record.fields[i]!;
      if (value.trim() === '') continue;
      if (column === 'members') {
        members = value.split(';').map((m) => m.trim()).filter((m) => m !== '').map((userName) => ({ userName }));
        continue;
      }
      const problem = column.set(doc, value);
      if (problem) return refused(problem);
      if (column.urn && !(doc.schemas as string[]).includes(column.urn)) (doc.schemas as string[]).push(column.urn);
    }
    const key = doc[KEY_COLUMN[this.#kind]];
    if (typeof key !== 'string') return refused(`${KEY_COLUMN[this.#kind]} is empty; every row needs one`);
    return { line: record.line, raw, key, resource: doc, ...(members ? { members } : {}) };
  }
}
