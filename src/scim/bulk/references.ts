/**
 * Where a Bulk operation may name a resource another operation of the request creates, as
 * `bulkId:<id>` (RFC 7644 3.7.2). The RFC shows references only in reference values: a group's
 * `members[].value`, the enterprise extension's `manager.value`. So a reference is recognised, and
 * later replaced by the created id, only in:
 * - a `value` sub-attribute of a complex attribute, at any depth below a resource's top level
 *   (an extension's attributes count as top level: `manager.value` inside the enterprise
 *   extension is a reference, its `employeeNumber` is not);
 * - a PATCH operation's `value` when its path names a `value` sub-attribute (`manager.value`,
 *   `members[display eq "x"].value`), or, when the value is an object or array, in the `value`
 *   sub-attributes it holds (path `members` with `[{"value": "bulkId:u"}]`, or no path);
 * - quoted values in a PATCH operation's path filter (`members[value eq "bulkId:u"]`);
 * - a segment of the operation's path (`/Groups/bulkId:g`), handled by the planner and runner.
 * A top-level string (`displayName`, `title`, `externalId`) and a `password`, anywhere, are never
 * references: they are stored as sent, as the same request sent alone stores them.
 */
export const BULK_REF_PREFIX = 'bulkId:';

/** A quoted reference inside a PATCH operation's path filter: members[value eq "bulkId:x"]. */
export const QUOTED_REF = /"bulkId:([^"\\]+)"/g;

/** The bulkId a string names when it is exactly `bulkId:<id>`. */
export const refOf = (value: string): string | undefined =>
  value.startsWith(BULK_REF_PREFIX) && value.length > BULK_REF_PREFIX.length ? value.slice(BULK_REF_PREFIX.length) : undefined;

/** Given a bulkId, the string to put in its place, or undefined to keep it. */
export type Resolve = (bulkId: string) => string | undefined;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const lower = (s: string): string => s.toLowerCase();

/** Maps each entry of an object; the same object back when nothing changed (no copy of a large body). */
function mapEntries(object: Json, map: (key: string, value: unknown) => unknown): Json {
  let out: Json | undefined;
  for (const [key, value] of Object.entries(object)) {
    const next = map(key, value);
    if (next !== value) {
      out ??= { ...object };
      out[key] = next;
    }
  }
  return out ?? object;
}

function mapArray(values: readonly unknown[], map: (value: unknown) => unknown): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < values.length; i++) {
    const next = map(values[i]);
    if (next !== values[i]) {
      out ??= [...values];
      out[i] = next;
    }
  }
  return out ?? (values as unknown[]);
}

const replaceString = (value: string, resolve: Resolve): string => {
  const ref = refOf(value);
  return ref === undefined ? value : (resolve(ref) ?? value);
};

/** A complex attribute's value (an object, or an array of them): its `value` sub-attributes, at any depth. */
function inComplex(value: unknown, resolve: Resolve): unknown {
  if (Array.isArray(value)) return mapArray(value, (v) => inComplex(v, resolve));
  if (!isObject(value)) return value;
  return mapEntries(value, (key, v) => {
    const name = lower(key);
    if (name === 'password') return v;
    if (name === 'value' && typeof v === 'string') return replaceString(v, resolve);
    return typeof v === 'object' && v !== null ? inComplex(v, resolve) : v;
  });
}

/** A resource's (or an extension's) attributes: top-level strings are not references. */
function inResource(value: unknown, resolve: Resolve): unknown {
  if (!isObject(value)) return value;
  return mapEntries(value, (key, v) => {
    const name = lower(key);
    if (name === 'password' || name === 'schemas' || typeof v !== 'object' || v === null) return v;
    // An extension's attributes, keyed by its schema URN, are top level too.
    if (name.startsWith('urn:') && isObject(v)) return inResource(v, resolve);
    return inComplex(v, resolve);
  });
}

/** One PATCH operation: its value where it is a reference value, and quoted references in its path filter. */
function inPatchOperation(op: unknown, resolve: Resolve): unknown {
  if (!isObject(op)) return op;
  const pathKey = Object.keys(op).find((k) => lower(k) === 'path');
  const path = pathKey === undefined ? undefined : op[pathKey];
  return mapEntries(op, (key, v) => {
    const name = lower(key);
    if (name === 'path' && typeof v === 'string') {
      return v.includes('"bulkId:') ? v.replace(QUOTED_REF, (whole, id: string) => {
        const to = resolve(id);
        return to === undefined ? whole : JSON.stringify(to);
      }) : v;
    }
    if (name !== 'value') return v;
    if (typeof path !== 'string' || path === '') return inResource(v, resolve);
    if (/password$/i.test(path)) return v;
    if (typeof v === 'string') return /\.value$/i.test(path.trim()) ? replaceString(v, resolve) : v;
    return inComplex(v, resolve);
  });
}

/**
 * `data` with each reference (in the places listed above) passed to `resolve` and replaced by
 * what it answers; the same object back when nothing changed. With a `resolve` that records and
 * answers undefined, it lists an operation's references.
 */
export function mapReferences(method: string, data: unknown, resolve: Resolve): unknown {
  if (method !== 'PATCH') return inResource(data, resolve);
  if (!isObject(data)) return data;
  return mapEntries(data, (key, v) => (lower(key) === 'operations' && Array.isArray(v) ? mapArray(v, (op) => inPatchOperation(op, resolve)) : v));
}
