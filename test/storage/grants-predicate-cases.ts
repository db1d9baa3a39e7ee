/**
 * The `granted` predicate forms (a user's grants rows, storage/predicate.ts) over one team, for
 * the golden SQL and the runs on every engine of test/storage/grants-predicate.test.ts.
 */
import type { Predicate } from '../../src/storage/predicate.ts';

const value = { at: 'grant', field: 'value' } as const;
const type = { at: 'grant', field: 'type' } as const;

export const grantCases = (team: string): readonly { readonly name: string; readonly predicate: Predicate }[] => [
  { name: 'role value eq (the holders\' index range)', predicate: { kind: 'granted', team, grant: 'role', where: { kind: 'text', scalar: value, op: 'eq', value: 'admin', folded: false } } },
  { name: 'any role', predicate: { kind: 'granted', team, grant: 'role', where: { kind: 'always' } } },
  { name: 'entitlement type eq, folded', predicate: { kind: 'granted', team, grant: 'entitlement', where: { kind: 'text', scalar: type, op: 'eq', value: 'license', folded: true } } },
  {
    name: 'entitlement of a type and a value',
    predicate: { kind: 'granted', team, grant: 'entitlement', where: { kind: 'and', left: { kind: 'text', scalar: type, op: 'eq', value: 'license', folded: true }, right: { kind: 'text', scalar: value, op: 'eq', value: 'e5', folded: false } } },
  },
  { name: 'entitlement type known', predicate: { kind: 'granted', team, grant: 'entitlement', where: { kind: 'known', scalar: type, as: 'text' } } },
  { name: 'not a role value', predicate: { kind: 'not', predicate: { kind: 'granted', team, grant: 'role', where: { kind: 'text', scalar: value, op: 'eq', value: 'admin', folded: false } } } },
  { name: 'role value sw', predicate: { kind: 'granted', team, grant: 'role', where: { kind: 'text', scalar: value, op: 'sw', value: 'vi', folded: false } } },
];
