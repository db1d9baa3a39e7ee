/**
 * SCIM filters built in code (RFC 7644 section 3.4.2.2), so values are always quoted right:
 *
 *   where('userName').eq('a"b')                      -> userName eq "a\"b"
 *   and(where('active').eq(true), where('title').pr())
 *   has('emails', where('type').eq('work'))            -> emails[type eq "work"]
 *
 * Strings are JSON strings (the RFC's compValue is JSON: quotes, backslashes and control
 * characters escaped), dates are JSON strings of their ISO 8601 form, numbers JSON numbers.
 * Attribute paths are checked against the RFC's attrPath grammar, so a path cannot inject text.
 */

export type FilterValue = string | number | boolean | null | Date;

/** A built filter: its text is `toString()`. */
export class Filter {
  readonly text: string;
  /** How the text combines: compound texts get parentheses when nested in another operator. */
  readonly kind: 'simple' | 'and' | 'or';
  constructor(text: string, kind: Filter['kind'] = 'simple') {
    this.text = text;
    this.kind = kind;
  }
  toString(): string {
    return this.text;
  }
  and(...others: Filter[]): Filter {
    return and(this, ...others);
  }
  or(...others: Filter[]): Filter {
    return or(this, ...others);
  }
}

// attrPath = [URI ":"] ATTRNAME *1subAttr (RFC 7644 3.4.2.2; RFC 7643 2.1 ATTRNAME, plus $ref).
const ATTR = '(?:[A-Za-z][A-Za-z0-9_-]*|\\$ref)';
const ATTR_PATH = new RegExp(`^(?:urn:[A-Za-z0-9:._-]+:)?${ATTR}(?:\\.${ATTR})?$`);

function checkPath(path: string): string {
  if (!ATTR_PATH.test(path)) throw new TypeError(`Not a SCIM attribute path: ${JSON.stringify(path)}`);
  return path;
}

/** A value as the filter grammar's compValue (JSON). */
export function literal(value: FilterValue): string {
  if (value === null) return 'null';
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError('Invalid Date in a filter');
    return JSON.stringify(value.toISOString());
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`A filter number must be finite, not ${value}`);
    return JSON.stringify(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return JSON.stringify(value);
  throw new TypeError(`Not a filter value: ${typeof value}`);
}

/** The comparisons on one attribute path. */
export class Attribute {
  readonly path: string;
  constructor(path: string) {
    this.path = checkPath(path);
  }
  #op(op: string, value: FilterValue): Filter {
    return new Filter(`${this.path} ${op} ${literal(value)}`);
  }
  eq(value: FilterValue): Filter { return this.#op('eq', value); }
  ne(value: FilterValue): Filter { return this.#op('ne', value); }
  co(value: string): Filter { return this.#op('co', value); }
  sw(value: string): Filter { return this.#op('sw', value); }
  ew(value: string): Filter { return this.#op('ew', value); }
  gt(value: string | number | Date): Filter { return this.#op('gt', value); }
  ge(value: string | number | Date): Filter { return this.#op('ge', value); }
  lt(value: string | number | Date): Filter { return this.#op('lt', value); }
  le(value: string | number | Date): Filter { return this.#op('le', value); }
  /** Present: has a value (not null, not empty). */
  pr(): Filter { return new Filter(`${this.path} pr`); }
}

/** Attribute names of `T` for completion; any valid path string is accepted. */
export type FilterPath<T> = (keyof T & string) | (string & {});

/** Starts a comparison on an attribute path (`userName`, `name.givenName`, `urn:…:User:department`). */
export function where<T = Record<string, unknown>>(path: FilterPath<T>): Attribute {
  return new Attribute(path);
}

const wrap = (f: Filter, parent: 'and' | 'or'): string => (f.kind === 'simple' || f.kind === parent ? f.text : `(${f.text})`);

function join(op: 'and' | 'or', filters: Filter[]): Filter {
  if (filters.length === 0) throw new TypeError(`${op}() needs at least one filter`);
  if (filters.length === 1) return filters[0]!;
  return new Filter(filters.map((f) => wrap(f, op)).join(` ${op} `), op);
}

export const and = (...filters: Filter[]): Filter => join('and', filters);
export const or = (...filters: Filter[]): Filter => join('or', filters);
export const not = (filter: Filter): Filter => new Filter(`not (${filter.text})`);

/** The attribute name without its schema URN (`urn:…:2.0:User:emails` -> `emails`): the URN's dots are not sub-attributes. */
const nameOf = (path: string): string => path.slice(path.lastIndexOf(':') + 1);

/** A value filter on a multi-valued attribute: `emails[type eq "work" and primary eq true]`. */
export function has(attribute: string, filter: Filter): Filter {
  if (nameOf(attribute).includes('.')) throw new TypeError('has() takes a multi-valued attribute, without a sub-attribute');
  return new Filter(`${checkPath(attribute)}[${filter.text}]`);
}

/** A PATCH path with a value filter (RFC 7644 3.5.2): `members[value eq "id"]`, `emails[type eq "work"].value`. */
export function valuePath(attribute: string, filter: Filter, subAttribute?: string): string {
  const sub = subAttribute === undefined ? '' : `.${checkPath(subAttribute)}`;
  if (subAttribute !== undefined && subAttribute.includes('.')) throw new TypeError('the sub-attribute is one name');
  return `${has(attribute, filter).text}${sub}`;
}
