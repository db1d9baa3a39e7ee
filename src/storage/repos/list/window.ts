/**
 * What a list of Users or Groups asks for and what it answers (the list routine, repos/paging.ts
 * `listRows`): the window (filter, order, offset or seek position, page size) and the page (rows,
 * total, positions, whether more follow). Types only: every list module reads them, none of them
 * is read back here.
 */
import type { OrderKey, Predicate } from '../../predicate.ts';

/** A sort key's value as SQL computed it: folded text, a 1/0 boolean, or NULL when absent. */
export type SortKey = string | number | null;

/** Where a row stands in the order. `key` is present exactly when the list is sorted by a key. */
export interface Position {
  readonly key?: SortKey;
  readonly createdAt: string;
  readonly id: string;
}

/** Keyset paging: the rows after `from` (or before it), nearest first; from the start without `from`. */
export interface Seek {
  readonly direction: 'after' | 'before';
  readonly from?: Position;
}

export interface ListWindow {
  readonly where?: Predicate;
  /** Users only: deactivated users are left out (a team that hides them). */
  readonly onlyActive?: boolean;
  /**
   * Users only: each row also carries its groups, as `rc_groups` (dialect `jsonRows` of group id
   * and displayName, in the order of groupsOfUsers), read in the page's own statement.
   */
  readonly withGroups?: boolean;
  /** The sort key (RFC 7644 3.4.2.3); resources without one come last whatever the direction. */
  readonly sort?: OrderKey;
  readonly descending: boolean;
  readonly limit: number;
  /** Index paging: a 0-based offset. */
  readonly offset?: number;
  /**
   * Index paging in creation order (no sort key): the position of the row just before `offset`,
   * known to the caller from the slice it read before; the rows are then sought after it (an
   * index range) rather than counted off from the start. Ignored when the list is sorted.
   */
  readonly resumeAfter?: Position;
  /** Cursor paging: where to start (instead of an offset). */
  readonly seek?: Seek;
  /**
   * Index paging: false when the caller reads a page in several slices and counts the total
   * itself (scim/paging.ts budgetedPage); the repository then leaves `total` undefined.
   */
  readonly countTotal?: boolean;
}

export interface ListPage<R> {
  /** The page's rows in list order (also when seeking backwards). */
  readonly rows: R[];
  /**
   * Every row that matches, on every page: counted only when the page cannot tell it (see
   * list-order.ts totalOf), and for a limit of 0 (a request for the total alone). Undefined on
   * cursor pages otherwise: a keyset page must cost what the rows it returns cost, and counting
   * a team of a million takes hundreds of milliseconds.
   */
  readonly total: number | undefined;
  /** The position of each row of `rows` (cursor paging, and index pages in creation order). */
  readonly positions: Position[];
  /** Cursor paging: whether more rows lie beyond the page in the direction sought. */
  readonly more: boolean;
}

/** The columns every listed row has, which paging reads. */
export interface ListedRow {
  readonly id: string;
  readonly created_at: string;
}
