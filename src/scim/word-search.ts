/**
 * The console's word search (console/directory.ts DirectoryQuery.q), ignoring case and accents:
 * "jose" finds José, "muller" Müller, "ANGSTROM" Ångström (text.ts searchFold). The words are
 * compared with the accent-folded columns of migration 032, which userRowOf and the group's row
 * write beside the case-folded keys; SCIM filters never read them, so a SCIM client's
 * `userName sw "jose"` keeps RFC 7644's meaning (case-insensitive, accent-sensitive). The
 * search is storage predicates built here, not a SCIM filter: a filter names attributes, and no
 * attribute compares without accents.
 *
 * A user search is listed by the accent-folded userName (`USER_SEARCH_ORDER`): the prefix of
 * that key is one range of its index, in the order the page is listed in, which is what lets the
 * list planner read a page of a common prefix from that range (repos/list/by-key-prefix.ts)
 * rather than sort every match.
 */
import type { OrderKey, Predicate } from '../storage/predicate.ts';
import type { ResourceColumn } from '../storage/types.ts';
import { searchFold } from '../text.ts';
import type { ListQuery } from './query.ts';

/** The accent-folded columns of a user's row (migration 032). */
export const searchColumnsOfUser = (userName: string, givenName: string | null, familyName: string | null) => ({
  user_name_search: searchFold(userName),
  given_name_search: givenName === null ? null : searchFold(givenName),
  family_name_search: familyName === null ? null : searchFold(familyName),
});

const startsWith = (column: ResourceColumn, folded: ResourceColumn, word: string): Predicate => ({
  kind: 'text',
  scalar: { at: 'column', column, folded },
  op: 'sw',
  value: word,
  folded: true,
});

const isExternalId = (q: string): Predicate => ({ kind: 'text', scalar: { at: 'column', column: 'external_id' }, op: 'eq', value: q, folded: false });

const or = (...ps: Predicate[]): Predicate => ps.reduce((left, right) => ({ kind: 'or', left, right }));

/** The order of a user word search: the accent-folded userName, indexed in code-point order (migration 032). */
export const USER_SEARCH_ORDER: OrderKey = { kind: 'scalar', scalar: { at: 'column', column: 'user_name', folded: 'user_name_search' }, as: 'text', folded: true };

/** Users whose userName, given name or family name starts with `q` (case and accents ignored), or whose externalId is `q`. */
export const userWordSearch = (q: string): Predicate => {
  const word = searchFold(q);
  return or(startsWith('user_name', 'user_name_search', word), startsWith('given_name', 'given_name_search', word), startsWith('family_name', 'family_name_search', word), isExternalId(q));
};

/** Groups whose displayName starts with `q` (case and accents ignored), or whose externalId is `q`. */
export const groupWordSearch = (q: string): Predicate => or(startsWith('display_name', 'display_name_search', searchFold(q)), isExternalId(q));

/**
 * `query` narrowed by a word search (ANDed with its filter; `sort` lists it when given), its
 * cursors bound to the words as to the filter (RFC 9865 section 2: later pages repeat the query).
 */
export const withWords = (query: ListQuery, q: string, where: Predicate, sort?: OrderKey): ListQuery => ({
  ...query,
  words: { where, ...(sort ? { sort } : {}) },
  cursorBinding: JSON.stringify([JSON.parse(query.cursorBinding), 'words', q, sort !== undefined]),
});
