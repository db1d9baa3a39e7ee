/**
 * What the import's readers (columns.ts for CSV, records.ts for JSONL) make of each row of a
 * file, and the errors they raise: one row becomes a resource to write with its upsert key, or a
 * refusal in the SCIM error's terms (status, scimType, detail) that goes to the refused file
 * with the row's line. A file the import cannot read at all is an ImportFileError (exit 2); a
 * server failure no SCIM rule names is an ImportServerError (exit 3).
 */
import { badRequest } from '../scim/errors.ts';
import type { ScimType } from '../scim/errors.ts';

export type ImportKind = 'users' | 'groups';

/** The file cannot be imported at all (unreadable, a header naming no known column, ...). */
export class ImportFileError extends Error {}

/**
 * The server failed in a way no SCIM rule names (a database gone, a fault): the run stops at
 * once (exit 3) instead of refusing every row after it. `line` is the first line of the rows that
 * were not all imported: every row before it was.
 */
export class ImportServerError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.line = line;
  }
}

export interface Refusal {
  readonly status: number;
  readonly scimType?: string;
  readonly detail: string;
}

/** A member of a group as the file names it: by user id, or by userName (resolved to the id before writing). */
export type MemberRef = { readonly id: string } | { readonly userName: string };

export interface ImportRow {
  readonly line: number;
  /** The row as read, written to the refused file when it is refused. */
  readonly raw: unknown;
  /** The upsert key: a user's userName, a group's displayName. */
  readonly key?: string;
  /** The resource the row describes, without a group's members. */
  readonly resource?: Record<string, unknown>;
  /** A group's members, when the row gives them (they then replace the group's members). */
  readonly members?: readonly MemberRef[];
  readonly refusal?: Refusal;
}

/** A refusal found before anything is written: a 400 like the one the server would answer. */
export const refusal = (scimType: ScimType, detail: string): Refusal => {
  const error = badRequest(scimType, detail);
  return { status: error.status, scimType, detail };
};
