/**
 * The syntax trees of RFC 7644 section 3.4.2.2 (filters) and section 3.5.2 (PATCH paths):
 * frozen plain objects tagged by `kind`. Parsers build them, the schema binder checks them, and
 * the SQL compiler and the in-memory evaluator consume them. Names are kept as written; the
 * registry resolves them case-insensitively.
 */

/** `[URI ":"] ATTRNAME ["." subAttr]`. `uri` is everything before the last ':' of a URN path. */
export interface AttrPath {
  readonly kind: 'attrPath';
  readonly uri?: string;
  readonly attr: string;
  readonly sub?: string;
}

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

export type Literal = string | number | boolean | null;

export interface CompareNode {
  readonly kind: 'compare';
  readonly path: AttrPath;
  readonly op: CompareOp;
  readonly value: Literal;
}

export interface PresentNode {
  readonly kind: 'present';
  readonly path: AttrPath;
}

export interface AndNode {
  readonly kind: 'and';
  readonly left: Filter;
  readonly right: Filter;
}

export interface OrNode {
  readonly kind: 'or';
  readonly left: Filter;
  readonly right: Filter;
}

export interface NotNode {
  readonly kind: 'not';
  readonly filter: Filter;
}

/**
 * `attrPath "[" valFilter "]"`, e.g. `emails[type eq "work" and value co "@x"]`. Paths inside
 * `filter` are relative to the multi-valued attribute: their `attr` names a sub-attribute.
 */
export interface ValuePathNode {
  readonly kind: 'valuePath';
  readonly path: AttrPath;
  readonly filter: Filter;
}

export type Filter = CompareNode | PresentNode | AndNode | OrNode | NotNode | ValuePathNode;

/**
 * A PATCH path (RFC 7644 section 3.5.2): `attrPath`, or `valuePath ["." subAttr]`, e.g.
 * `members[value eq "2819c223"]` or `emails[type eq "work"].value`.
 */
export interface PatchPath {
  readonly kind: 'patchPath';
  readonly path: AttrPath;
  readonly filter?: Filter;
  /** The sub-attribute after a value filter: `value` in `emails[type eq "work"].value`. */
  readonly subAfterFilter?: string;
}
