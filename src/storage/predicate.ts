/**
 * The predicate language of storage: what a list or search query may ask of the rows of a
 * resource table, written in storage's own words (a column, a location in the JSON document,
 * the elements of a JSON array, the rows related through memberships, case folding). The SCIM
 * side lowers its bound filters and sorts into these (src/scim/filter/lower.ts), having made
 * every SCIM decision (case-exactness, multi-valued semantics, aliases, which members count);
 * storage alone compiles them to SQL (predicate-sql.ts) and owns the tables, aliases and joins.
 * Plain frozen data tagged by `kind`; no SQL, no SCIM attribute facts.
 *
 * Every test is two-valued: a scalar that is absent (NULL) fails it, never yields NULL, so that
 * `not` means the complement.
 */
import type { ResourceColumn } from './types.ts';

/** How a scalar is read: as text, as a JSON boolean (true/false), or as a JSON number. */
export type ReadAs = 'text' | 'flag' | 'number';

/** A scalar storage can read for the current row. */
export type Scalar =
  /** A column of the resource's table; `folded` names a column holding its case-folded copy. */
  | { readonly at: 'column'; readonly column: ResourceColumn; readonly folded?: ResourceColumn }
  /** The value at `keys` inside the resource's JSON document. */
  | { readonly at: 'document'; readonly keys: readonly string[] }
  /** The value at `keys` inside the current element of an `anyElement` / `firstElement` array. */
  | { readonly at: 'element'; readonly keys: readonly string[] }
  /** Inside `related`: the related row's id, or its name (a user's userName, a group's displayName). */
  | { readonly at: 'related'; readonly field: 'id' | 'name' };

/** Text comparisons; `ne` is `not` of `eq`. Ordering compares code points. */
export type TextOp = 'eq' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

/** Numeric comparisons. */
export type NumberOp = 'eq' | 'gt' | 'ge' | 'lt' | 'le';

/** Which users count as related rows of a group (hidden deactivated users, deleted users). */
export type RelatedUsers = 'active' | 'notDeleted';

export type Predicate =
  | { readonly kind: 'always' }
  | { readonly kind: 'and' | 'or'; readonly left: Predicate; readonly right: Predicate }
  | { readonly kind: 'not'; readonly predicate: Predicate }
  /** The scalar has a value. */
  | { readonly kind: 'known'; readonly scalar: Scalar; readonly as: ReadAs }
  /** Text comparison; `folded` compares both sides case-folded (JavaScript's toLowerCase). */
  | { readonly kind: 'text'; readonly scalar: Scalar; readonly op: TextOp; readonly value: string; readonly folded: boolean }
  /** The scalar is the JSON boolean `value`. */
  | { readonly kind: 'flag'; readonly scalar: Scalar; readonly value: boolean }
  /** The scalar is a JSON number and compares so with `value`. */
  | { readonly kind: 'number'; readonly scalar: Scalar; readonly op: NumberOp; readonly value: number }
  /** Some element of the JSON array at `array` in the document satisfies `where` (read with `element`). */
  | { readonly kind: 'anyElement'; readonly array: readonly string[]; readonly where: Predicate }
  /**
   * Some membership row of the current resource satisfies `where` (read with `related`): a
   * group's member users, counting only `users`; a user's groups.
   */
  | { readonly kind: 'related'; readonly users: RelatedUsers; readonly where: Predicate }
  /**
   * Users only: the user is active and holds an entry of its team's catalog (or outside it),
   * directly (`user_grants`: `grant` and `value`, its stored `type` `directType` when given,
   * any when absent) or through a group of it mapped to the entry (`access_mappings` through
   * `group_members`, of type key `mappedTypeKey` when given). Effective access (issue 31).
   */
  | { readonly kind: 'holds'; readonly grant: 'role' | 'entitlement'; readonly value: string; readonly directType?: string; readonly mappedTypeKey?: string }
  /**
   * True while the clock is before `deadline` (epoch ms); a statement that evaluates it for a row
   * after that is stopped (storage/deadline.ts, on an engine that cannot interrupt a statement).
   */
  | { readonly kind: 'deadline'; readonly deadline: number };

/** An ordering key. Absent values are NULL (paging puts them last). */
export type OrderKey =
  | { readonly kind: 'scalar'; readonly scalar: Scalar; readonly as: ReadAs; readonly folded: boolean }
  /**
   * The element of the array at `array` that `preferred` (a flag inside the element) marks,
   * else the first; its scalar `scalar` (read with `element`).
   */
  | {
      readonly kind: 'firstElement';
      readonly array: readonly string[];
      readonly scalar: Scalar;
      readonly as: ReadAs;
      readonly folded: boolean;
      readonly preferred?: readonly string[];
    };

export const ALWAYS: Predicate = Object.freeze({ kind: 'always' });

/**
 * `p` with each literal it compares with (a text or a number, which SQL receives as bound
 * parameters) replaced by `param(value)`, everything else kept: what decides the predicate's SQL
 * text, used as the key of its compiled form (statements.ts `Shaped`). A flag's value stays,
 * since its SQL computes on it.
 */
export function withParams(p: Predicate, param: (value: unknown) => string): Predicate {
  switch (p.kind) {
    case 'always':
    case 'known':
    case 'flag':
      return p;
    case 'and':
    case 'or':
      return { kind: p.kind, left: withParams(p.left, param), right: withParams(p.right, param) };
    case 'not':
      return { kind: 'not', predicate: withParams(p.predicate, param) };
    case 'text':
      return { ...p, value: param(p.value) };
    case 'number':
      // The stand-in only ever reaches SQL as a bound parameter, where the number takes its place.
      return { ...p, value: param(p.value) as unknown as number };
    case 'anyElement':
    case 'related':
      return { ...p, where: withParams(p.where, param) };
    case 'deadline':
      return { kind: 'deadline', deadline: param(p.deadline) as unknown as number };
    case 'holds':
      return {
        ...p,
        value: param(p.value),
        ...(p.directType !== undefined ? { directType: param(p.directType) } : {}),
        ...(p.mappedTypeKey !== undefined ? { mappedTypeKey: param(p.mappedTypeKey) } : {}),
      };
  }
}

/**
 * Whether every comparison in `p` is an equality: then the best plan of its SQL does not depend
 * on the values compared with (an index lookup by value), and PostgreSQL may plan it once for
 * any value (pg-statements.ts names such list shapes). Ranges and patterns (`sw`, `co`, `ew`,
 * `gt`...) are planned from their literal: a `LIKE` prefix range needs the pattern itself.
 */
export function comparesByEquality(p: Predicate): boolean {
  switch (p.kind) {
    case 'always':
    case 'known':
    case 'flag':
    case 'deadline':
    case 'holds':
      return true;
    case 'and':
    case 'or':
      return comparesByEquality(p.left) && comparesByEquality(p.right);
    case 'not':
      return comparesByEquality(p.predicate);
    case 'text':
    case 'number':
      return p.op === 'eq';
    case 'anyElement':
    case 'related':
      return comparesByEquality(p.where);
  }
}
