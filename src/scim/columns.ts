/**
 * The indexed column copies of a document, derived from the schema's `storage` mappings: the
 * one place that knows which attribute feeds which column.
 */
import type { ResourceColumn } from '../storage/types.ts';
import type { AttributeDef, ResourceTypeDef } from './schema/types.ts';

/** A resource table's column copies by column name (storage/types.ts names them). */
export type ColumnValues = Partial<Record<ResourceColumn, string | number | null>>;

function visit(attrs: readonly AttributeDef[], doc: Readonly<Record<string, unknown>> | undefined, out: ColumnValues): void {
  for (const a of attrs) {
    if (a.aliasOf !== undefined) continue;
    const value = doc?.[a.name];
    if (a.storage?.kind === 'column') {
      const column = a.storage.column;
      if (a.type === 'boolean') out[column] = value === false ? 0 : 1;
      else out[column] = typeof value === 'string' ? value : null;
      if (a.storage.lowerColumn) out[a.storage.lowerColumn] = typeof value === 'string' ? value.toLowerCase() : null;
    }
    if (a.type === 'complex' && !a.multiValued && a.subAttributes) {
      visit(a.subAttributes, value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined, out);
    }
  }
}

/** Column values for `doc`, covering every mapped column (absent attributes give null). */
export function columnsOf(rt: ResourceTypeDef, doc: Readonly<Record<string, unknown>>, commonAttrs: readonly AttributeDef[]): ColumnValues {
  const out: ColumnValues = {};
  visit(commonAttrs, doc, out);
  visit(rt.schema.attributes, doc, out);
  return out;
}
