/**
 * What a team's extension schemas cost the shared server, measured against the team's budgets
 * (budgets.ts) when a schema is registered: how many extensions, attributes
 * (sub-attributes included), bytes of definitions, attributes with a database index (each one
 * an index on a shared table, evaluated by every write of the table on PostgreSQL), and bytes of
 * the team's `/Schemas` document. A registration that would take any of them over its budget is
 * refused (OverBudget, 400 invalidValue naming the budget); one that does not grow a figure
 * already over a lowered budget is not, so a team can always shrink. No storage, no HTTP.
 */
import { budgetsOf, OverBudget } from '../budgets.ts';
import type { BudgetName } from '../budgets.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { schemasList } from './discovery.ts';
import { indexedKeys } from './filter/lower.ts';
import { teamTypes } from './schema/extensions.ts';
import type { ExtensionDecl } from './schema/extensions.ts';
import type { AttributeDef } from './schema/types.ts';

/** One registered extension: its declaration and its definition as stored (JSON text). */
export interface StoredExtension {
  readonly decl: ExtensionDecl;
  readonly definition: string;
}

type Footprint = Readonly<Record<'extensions' | 'extension.attributes' | 'extension.bytes' | 'indexed.attributes' | 'discovery.bytes', number>>;

const attributeCount = (attributes: readonly AttributeDef[]): number => attributes.reduce((n, a) => n + 1 + attributeCount(a.subAttributes ?? []), 0);

/** The team's `/Schemas` document as it would be served, in bytes. */
export const discoveryBytes = (decls: readonly ExtensionDecl[], baseUrl: string): number => Buffer.byteLength(JSON.stringify(schemasList(baseUrl, teamTypes(decls))));

function footprint(extensions: readonly StoredExtension[], baseUrl: string): Footprint {
  const decls = extensions.map((e) => e.decl);
  return {
    extensions: extensions.length,
    'extension.attributes': decls.reduce((n, d) => n + attributeCount(d.schema.attributes), 0),
    'extension.bytes': extensions.reduce((n, e) => n + Buffer.byteLength(e.definition), 0),
    'indexed.attributes': decls.reduce((n, d) => n + indexedKeys(d.schema).length, 0),
    'discovery.bytes': discoveryBytes(decls, baseUrl),
  };
}

const WHAT: Record<keyof Footprint, string> = {
  extensions: 'extension schemas',
  'extension.attributes': 'attributes in its extension schemas',
  'extension.bytes': 'bytes of extension schemas',
  'indexed.attributes': 'indexed attributes (uniqueness: server)',
  'discovery.bytes': 'bytes of /Schemas',
};

/**
 * Refuses `after` (the team's extensions once the change is made) if it takes a figure over the
 * team's budget that `before` did not already exceed as much.
 */
export function checkSchemaBudgets(team: TeamRow, before: readonly StoredExtension[], after: readonly StoredExtension[], baseUrl: string): void {
  const budgets = budgetsOf(team);
  const was = footprint(before, baseUrl);
  const will = footprint(after, baseUrl);
  for (const name of Object.keys(WHAT) as (keyof Footprint & BudgetName)[]) {
    if (will[name] > budgets[name] && will[name] > was[name]) {
      throw new OverBudget(team.id, name, `Team ${team.name} would have ${will[name]} ${WHAT[name]}; its budget "${name}" is ${budgets[name]}`);
    }
  }
}
