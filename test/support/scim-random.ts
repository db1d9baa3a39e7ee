/**
 * Random SCIM data and random filter / sortBy text for the property tests that hold the SQL
 * compiler to the in-memory oracle (DESIGN.md section 7). Users and Groups are generated as
 * request bodies; filters are generated as text over the attributes the schema defines, with
 * literals drawn mostly from the values the stored resources actually hold (so most filters
 * match something), in random spellings: letter case, URN prefixes, both quoting styles,
 * `\u` escapes. It also holds the sort oracle: RFC 7644 3.4.2.3 as Rollcall defines it, written
 * independently of to-sql.ts. Nothing here talks to a database.
 */
import fc from 'fast-check';
import { isCaseInsensitive } from '../../src/scim/filter/evaluate.ts';
import { parseAttrPath } from '../../src/scim/path.ts';
import { findSubAttribute, resolvePath } from '../../src/scim/schema/registry.ts';
import type { AttributeDef, ResourceTypeDef } from '../../src/scim/schema/types.ts';

type Json = Record<string, unknown>;

export const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Text from a few pieces, so values share prefixes, differ in case, and carry LIKE and quote
 * characters, and letters whose lower case is not one code point for one (İ) or depends on
 * what follows (a final Σ lowers to ς), and code points at the edges of the prefix ranges and
 * reversed keys that `sw` / `ew` use on SQLite (outside the BMP, U+10FFFF, U+D7FF before the
 * surrogates).
 */
const PIECES = ['al', 'Al', 'AL', 'bo', 'Bo', 'é', 'É', 'x', 'X', '%', '_', "'", '"', '\\', ' ', '-', '@', '.', 'zz', 'ΟΔΟΣ', 'Σ', 'İ', '𝔘', '\u{10FFFF}', '\uD7FF'];
const word: fc.Arbitrary<string> = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 4 }).map((p) => p.join(''));

/** Absent one time in three. */
const optional = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 3 });

const defined = (o: Record<string, unknown>): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const email = fc
  .record({
    value: optional(word),
    type: optional(fc.constantFrom('work', 'home', 'other', 'Work', 'HOME')),
    primary: optional(fc.boolean()),
    display: fc.option(word, { nil: undefined, freq: 2 }),
  })
  .map(defined);

export interface UserSeed {
  readonly body: Json;
  /** When set, the manager is an earlier user: this index modulo the number created so far. */
  readonly managerIndex?: number;
  /** Patched after creation, so lastModified differs from created. */
  readonly touch?: string;
}

const user: fc.Arbitrary<UserSeed> = fc
  .record({
    userName: word,
    givenName: optional(word),
    familyName: optional(word),
    displayName: optional(word),
    title: optional(word),
    externalId: optional(word),
    active: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    emails: fc.array(email, { maxLength: 3 }),
    department: optional(word),
    manager: optional(fc.oneof(word, fc.nat({ max: 50 }))),
    touch: optional(word),
  })
  .map((u) => {
    let primarySeen = false;
    const emails = u.emails.map((e) => {
      // RFC 7643 2.4: at most one primary value.
      if (e.primary !== true) return e;
      if (primarySeen) return { ...e, primary: false };
      primarySeen = true;
      return e;
    });
    const enterprise = defined({ department: u.department, manager: typeof u.manager === 'string' ? { value: u.manager } : undefined });
    return {
      body: defined({
        userName: u.userName,
        name: u.givenName !== undefined || u.familyName !== undefined ? defined({ givenName: u.givenName, familyName: u.familyName }) : undefined,
        displayName: u.displayName,
        title: u.title,
        externalId: u.externalId,
        active: u.active,
        emails: emails.length > 0 ? emails : undefined,
        [ENTERPRISE]: Object.keys(enterprise).length > 0 ? enterprise : undefined,
      }),
      ...(typeof u.manager === 'number' ? { managerIndex: u.manager } : {}),
      ...(u.touch !== undefined ? { touch: u.touch } : {}),
    };
  });

export interface GroupSeed {
  readonly body: Json;
  /** Indexes of the users (in creation order) that are members. */
  readonly members: readonly number[];
}

const group = (users: number): fc.Arbitrary<GroupSeed> =>
  fc
    .record({ displayName: word, externalId: optional(word), active: optional(fc.boolean()), members: fc.uniqueArray(fc.nat({ max: users - 1 }), { maxLength: 10 }) })
    .map((g) => ({ body: defined({ displayName: g.displayName, externalId: g.externalId, active: g.active }), members: g.members }));

export const dataset = (users: number, groups: number): fc.Arbitrary<{ users: UserSeed[]; groups: GroupSeed[] }> =>
  fc.record({ users: fc.array(user, { minLength: users, maxLength: users }), groups: fc.array(group(users), { minLength: groups, maxLength: groups }) });

/** The definitions a path names; a complex attribute without a sub-attribute stands for its `value`. */
function locate(rt: ResourceTypeDef, text: string): { attr: AttributeDef; leaf: AttributeDef; sub?: AttributeDef; extension?: string } {
  const resolved = resolvePath(rt, parseAttrPath(text, 'invalidValue'), 'invalidValue');
  const sub = resolved.sub ?? (resolved.attr.type === 'complex' ? findSubAttribute(resolved.attr, 'value') : undefined);
  return { attr: resolved.attr, leaf: sub ?? resolved.attr, ...(sub ? { sub } : {}), ...(resolved.extension ? { extension: resolved.extension.id } : {}) };
}

/** The elements a representation holds at `text`: every element of a multi-valued attribute. */
function elementsAt(rt: ResourceTypeDef, resource: Json, text: string): unknown[] {
  const { attr, extension } = locate(rt, text);
  const container = extension !== undefined ? resource[extension] : resource;
  const value = isObject(container) ? container[attr.name] : undefined;
  if (attr.multiValued) return Array.isArray(value) ? value : [];
  return value === undefined || value === null ? [] : [value];
}

/** Every scalar the resources hold at `text`, as literals for filters. */
function scalarsAt(rt: ResourceTypeDef, resources: readonly Json[], text: string): string[] {
  const { sub } = locate(rt, text);
  const out = new Set<string>();
  for (const r of resources) {
    for (const e of elementsAt(rt, r, text)) {
      const v = sub ? (isObject(e) ? e[sub.name] : undefined) : e;
      if (typeof v === 'string') out.add(v);
    }
  }
  return [...out];
}

const compareCodePoints = (a: string, b: string): number => {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

/**
 * RFC 7644 3.4.2.3 as Rollcall sorts: a multi-valued attribute by its primary (else first)
 * value; case-insensitive attributes by their toLowerCase text; code-point order; false before
 * true; absent values last in both directions; ties by creation order (`resources` is in
 * creation order). Returns the ids in order.
 */
export function sortedIds(rt: ResourceTypeDef, resources: readonly Json[], sortBy: string, descending: boolean): string[] {
  const { attr, leaf, sub } = locate(rt, sortBy);
  const keyed = resources.map((r, i) => {
    const elements = elementsAt(rt, r, sortBy);
    const element = attr.multiValued ? (elements.find((e) => isObject(e) && e.primary === true) ?? elements[0]) : elements[0];
    const raw = sub ? (isObject(element) ? element[sub.name] : undefined) : element;
    const key = typeof raw === 'boolean' || typeof raw === 'number' ? Number(raw) : typeof raw === 'string' ? (isCaseInsensitive(leaf) ? raw.toLowerCase() : raw) : undefined;
    return { id: String(r.id), i, key };
  });
  keyed.sort((a, b) => {
    if (a.key === undefined || b.key === undefined) return Number(a.key === undefined) - Number(b.key === undefined) || a.i - b.i;
    const d = typeof a.key === 'number' && typeof b.key === 'number' ? a.key - b.key : compareCodePoints(String(a.key), String(b.key));
    return (descending ? -d : d) || a.i - b.i;
  });
  return keyed.map((k) => k.id);
}

/** Ways to write one attribute path: as defined, in other letter cases, with or without its schema URN. */
export function spellings(rt: ResourceTypeDef, text: string): string[] {
  const p = parseAttrPath(text, 'invalidValue');
  const names = (f: (s: string) => string) => `${f(p.attr)}${p.sub !== undefined ? `.${f(p.sub)}` : ''}`;
  const bare = [names((s) => s), names((s) => s.toLowerCase()), names((s) => s.toUpperCase())];
  const uri = p.uri ?? rt.schema.id;
  // An extension attribute also resolves without its URN (Entra ID E6); a core one with it.
  return [...bare, `${uri}:${names((s) => s)}`, `${uri.toLowerCase()}:${names((s) => s.toLowerCase())}`];
}

/** A string literal in one of the accepted quotings: JSON, JSON with \u escapes, the contract's single quotes. */
const quoted = (s: string): fc.Arbitrary<string> =>
  fc.constantFrom(
    JSON.stringify(s),
    JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    `'${s.replace(/[\\']/g, (m) => `\\${m}`)}'`,
  );

/**
 * Mostly values that occur at the path, or pieces of them; sometimes values from elsewhere
 * (`others`: other attributes, resources the caller cannot see); in a random letter case.
 */
function textLiteral(pool: readonly string[], others: readonly string[]): fc.Arbitrary<string> {
  const base =
    pool.length === 0
      ? fc.oneof(word, fc.constantFrom(...others, 'x'))
      : fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...pool) },
          {
            weight: 3,
            arbitrary: fc.tuple(fc.constantFrom(...pool), fc.nat(), fc.nat()).map(([s, a, b]) => {
              const cps = [...s];
              const from = a % (cps.length + 1);
              return cps.slice(from, from + (b % (cps.length - from + 1))).join('');
            }),
          },
          { weight: 1, arbitrary: fc.constantFrom(...others, 'x') },
          { weight: 1, arbitrary: word },
        );
  return base.chain((s) => fc.constantFrom(s, s, s.toUpperCase(), s.toLowerCase()));
}

/** Timestamps near the ones that occur, in the formats RFC 3339 allows. */
const dateLiteral = (pool: readonly string[]): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(...pool), fc.integer({ min: -2, max: 2 }), fc.constantFrom('ms', 'offset', 'seconds')).map(([s, delta, format]) => {
    const iso = new Date(Date.parse(s) + delta).toISOString();
    return format === 'ms' ? iso : format === 'offset' ? iso.replace('Z', '+00:00') : iso.replace(/\.\d{3}Z$/, 'Z');
  });

const opSpelling = (op: string): fc.Arbitrary<string> => fc.constantFrom(op, op, op.toUpperCase());
const weighted = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });

/**
 * One comparison or presence test of the attribute at `path` (which decides its type and the
 * literal pool), spelled `name` in the text (inside a value filter, the sub-attribute's own
 * name). Mostly well-typed; sometimes not, which both sides must refuse alike.
 */
function attributeTest(rt: ResourceTypeDef, resources: readonly Json[], others: readonly string[], path: string, name: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const { leaf } = locate(rt, path);
  const pool = scalarsAt(rt, resources, path);
  const present = name.map((n) => `${n} pr`);
  const nullTest = fc.tuple(name, fc.constantFrom('eq', 'ne')).map(([n, op]) => `${n} ${op} null`);
  const compare = (ops: readonly string[], literal: fc.Arbitrary<string>) =>
    fc.tuple(name, fc.constantFrom(...ops).chain(opSpelling), literal).map(([n, op, v]) => `${n} ${op} ${v}`);
  if (leaf.type === 'complex') return fc.oneof(weighted(12, present), weighted(1, compare(['eq'], fc.constant('"x"'))));
  if (leaf.type === 'boolean') {
    return fc.oneof(weighted(12, compare(['eq', 'ne'], fc.constantFrom('true', 'false', 'True', 'FALSE'))), weighted(4, present), weighted(2, nullTest), weighted(1, compare(['gt', 'co'], fc.constantFrom('true', '"true"'))));
  }
  if (leaf.type === 'integer' || leaf.type === 'decimal') {
    const numbers = [...new Set(resources.flatMap((r) => elementsAt(rt, r, path)).flatMap((e) => { const { sub } = locate(rt, path); const v = sub ? (isObject(e) ? e[sub.name] : undefined) : e; return typeof v === 'number' ? [v] : []; }))];
    const literal = numbers.length > 0 ? fc.oneof(fc.constantFrom(...numbers), fc.integer({ min: -3, max: 25 })) : fc.integer({ min: -3, max: 25 });
    return fc.oneof(weighted(16, compare(['eq', 'ne', 'gt', 'ge', 'lt', 'le'], literal.map(String))), weighted(3, present), weighted(2, nullTest), weighted(1, compare(['co', 'eq'], fc.constantFrom('"5"', 'true'))));
  }
  if (leaf.type === 'dateTime') {
    return fc.oneof(
      weighted(16, compare(['eq', 'ne', 'gt', 'ge', 'lt', 'le'], pool.length > 0 ? dateLiteral(pool).chain(quoted) : fc.constant('"2026-01-01T00:00:00Z"'))),
      weighted(2, present),
      weighted(1, compare(['sw', 'eq'], fc.constantFrom('"yesterday"', '"2026"', '42'))),
    );
  }
  return fc.oneof(
    weighted(24, compare(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'], textLiteral(pool, others).chain(quoted))),
    weighted(4, present),
    weighted(2, nullTest),
    weighted(1, compare(['eq', 'co'], fc.constantFrom('42', 'true', 'bareWord'))),
  );
}

/** Boolean combinations of `leaf`, up to `depth` levels, with and without redundant parentheses. */
function combine(leaf: fc.Arbitrary<string>, depth: number): fc.Arbitrary<string> {
  if (depth === 0) return leaf;
  const sub = combine(leaf, depth - 1);
  return fc.oneof(
    weighted(3, leaf),
    weighted(2, fc.tuple(sub, fc.constantFrom('and', 'or', 'AND', 'Or'), sub, fc.boolean()).map(([l, k, r, paren]) => (paren ? `(${l}) ${k} (${r})` : `${l} ${k} ${r}`))),
    weighted(1, sub.map((f) => `not (${f})`)),
  );
}

export interface FilterSpace {
  /** Paths tested directly (`emails.value co "x"`). */
  readonly paths: readonly string[];
  /** Complex attributes tested with a value filter (`emails[type eq "work"]`). */
  readonly valuePaths: readonly string[];
  /** Filters both sides must refuse with 400 invalidFilter. */
  readonly refused: readonly string[];
  /** Literals beside those the resources hold, e.g. the ids and names of hidden users. */
  readonly literals?: readonly string[];
}

/** Random filter text over `space`, with literals from `resources` (full representations). */
export function filterText(rt: ResourceTypeDef, resources: readonly Json[], space: FilterSpace, depth = 3): fc.Arbitrary<string> {
  const others = [...new Set([...(space.literals ?? []), ...space.paths.flatMap((p) => scalarsAt(rt, resources, p))])];
  const direct = fc.constantFrom(...space.paths).chain((p) => attributeTest(rt, resources, others, p, fc.constantFrom(...spellings(rt, p))));
  const valuePath = fc.constantFrom(...space.valuePaths).chain((outer) => {
    const { attr } = locate(rt, outer);
    // Membership views offer value and display only (bind.ts refuses the rest, tested elsewhere).
    const membership = attr.storage?.kind === 'members' || attr.storage?.kind === 'groups';
    const subs = (attr.subAttributes ?? []).filter((s) => s.name !== '$ref' && (!membership || s.name === 'value' || s.name === 'display'));
    const inner = fc.constantFrom(...subs).chain((s) => attributeTest(rt, resources, others, `${outer}.${s.name}`, fc.constantFrom(s.name, s.name.toUpperCase())));
    const outerName = fc.constantFrom(...spellings(rt, outer));
    return fc.oneof(
      weighted(3, fc.tuple(outerName, combine(inner, 2)).map(([o, f]) => `${o}[${f}]`)),
      // Entra ID: emails[type eq "work"].value eq "x".
      weighted(1, fc.tuple(outerName, combine(inner, 1), fc.constantFrom(...subs)).chain(([o, f, s]) => attributeTest(rt, resources, others, `${outer}.${s.name}`, fc.constant(`${o}[${f}].${s.name}`)))),
    );
  });
  const leaf = fc.oneof(weighted(20, direct), weighted(8, valuePath), weighted(1, fc.constantFrom(...space.refused)));
  return combine(leaf, depth);
}
