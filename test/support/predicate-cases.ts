import type { OrderKey, Predicate } from '../../src/storage/predicate.ts';
import type { ResourceTable } from '../../src/storage/predicate-sql.ts';

/** One predicate form over one table, named for the failure message. */
export interface PredicateCase {
  readonly name: string;
  readonly table: ResourceTable;
  readonly predicate: Predicate;
}

const userName = { at: 'column', column: 'user_name', folded: 'user_name_key' } as const;
const title = { at: 'document', keys: ['title'] } as const;
const ext = { at: 'document', keys: ['urn:x:2.0:User', 'badge'] } as const;

export const predicateCases: readonly PredicateCase[] = [
  { name: 'always', table: 'users', predicate: { kind: 'always' } },
  { name: 'text eq on a column through its folded twin', table: 'users', predicate: { kind: 'text', scalar: userName, op: 'eq', value: 'ada@x', folded: true } },
  { name: 'text eq on a column, case-exact', table: 'users', predicate: { kind: 'text', scalar: { at: 'column', column: 'external_id' }, op: 'eq', value: 'E1', folded: false } },
  { name: 'text co folded in the document', table: 'users', predicate: { kind: 'text', scalar: title, op: 'co', value: 'eng', folded: true } },
  { name: 'text sw', table: 'users', predicate: { kind: 'text', scalar: title, op: 'sw', value: 'Eng', folded: false } },
  { name: 'text ew', table: 'users', predicate: { kind: 'text', scalar: title, op: 'ew', value: 'eer', folded: false } },
  { name: 'text sw on a folded column (an index range)', table: 'users', predicate: { kind: 'text', scalar: userName, op: 'sw', value: 'ad', folded: true } },
  { name: 'text ew on a folded column (a reversed index range)', table: 'users', predicate: { kind: 'text', scalar: userName, op: 'ew', value: 'a@x', folded: true } },
  { name: 'text co with LIKE wildcards taken literally', table: 'users', predicate: { kind: 'text', scalar: userName, op: 'co', value: '_%\\', folded: true } },
  { name: 'text gt by code point', table: 'users', predicate: { kind: 'text', scalar: title, op: 'gt', value: 'M', folded: false } },
  { name: 'flag', table: 'users', predicate: { kind: 'flag', scalar: { at: 'column', column: 'active' }, value: true } },
  { name: 'number le in an extension', table: 'users', predicate: { kind: 'number', scalar: ext, op: 'le', value: 42 } },
  { name: 'known text', table: 'users', predicate: { kind: 'known', scalar: title, as: 'text' } },
  { name: 'not, and, or', table: 'users', predicate: { kind: 'not', predicate: { kind: 'or', left: { kind: 'known', scalar: title, as: 'text' }, right: { kind: 'and', left: { kind: 'always' }, right: { kind: 'flag', scalar: { at: 'document', keys: ['active'] }, value: false } } } } },
  { name: 'anyElement of an array', table: 'users', predicate: { kind: 'anyElement', array: ['emails'], where: { kind: 'text', scalar: { at: 'element', keys: ['type'] }, op: 'eq', value: 'work', folded: true } } },
  { name: 'related: a group\'s active members by name', table: 'groups', predicate: { kind: 'related', users: 'active', where: { kind: 'text', scalar: { at: 'related', field: 'name' }, op: 'sw', value: 'ada', folded: true } } },
  { name: 'related: a group\'s not-deleted members by id', table: 'groups', predicate: { kind: 'related', users: 'notDeleted', where: { kind: 'text', scalar: { at: 'related', field: 'id' }, op: 'eq', value: 'U1', folded: false } } },
  { name: 'related: a user\'s groups by name', table: 'users', predicate: { kind: 'related', users: 'active', where: { kind: 'text', scalar: { at: 'related', field: 'name' }, op: 'eq', value: 'eng', folded: true } } },
];

export const orderCases: readonly { readonly name: string; readonly table: ResourceTable; readonly key: OrderKey }[] = [
  { name: 'folded column', table: 'users', key: { kind: 'scalar', scalar: userName, as: 'text', folded: true } },
  { name: 'document text', table: 'groups', key: { kind: 'scalar', scalar: { at: 'document', keys: ['displayName'] }, as: 'text', folded: false } },
  { name: 'number', table: 'users', key: { kind: 'scalar', scalar: ext, as: 'number', folded: false } },
  { name: 'first (primary) element', table: 'users', key: { kind: 'firstElement', array: ['emails'], scalar: { at: 'element', keys: ['value'] }, as: 'text', folded: true, preferred: ['primary'] } },
];
