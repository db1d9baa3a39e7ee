/**
 * Rows for tests and benchmarks, built the way the services build them: a user's SCIM document
 * (`userBody`, addressed by a naming scheme so a caller can find user `n` without a lookup), its
 * users row as the Users service's create would store it (`userRowFor`: `validateResource`, then
 * the schema's column copies through `userRowOf`, the document through the dialect's `toJson`),
 * and a bulk load of many such users in multi-row INSERTs with the team's counters kept
 * (`loadUsers`). Only the per-row HTTP and transaction overhead is skipped. For tests that
 * write rows straight through a repository, `userRow` and `groupRow` give a complete row with
 * the columns a test does not care about at their defaults. The server never imports this
 * module; tests and `bench/` do, and tests never import `bench/`.
 */
import { newId } from '../../src/ids.ts';
import { searchFold } from '../../src/text.ts';
import { userRowOf } from '../../src/scim/users.ts';
import { userResourceType } from '../../src/scim/schema/registry.ts';
import { ENTERPRISE_USER_SCHEMA, USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { validateResource } from '../../src/scim/validate.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { addCounts } from '../../src/storage/repos/counters.ts';
import type { TeamRow } from '../../src/storage/repos/teams.ts';
import type { GroupRow } from '../../src/storage/repos/groups.ts';
import type { UserRow } from '../../src/storage/repos/users.ts';

/** A creation time before any test clock's start, so rows written with it are the oldest. */
export const ROW_TIME = '2026-01-01T00:00:00.000Z';

/**
 * A users row for `userName` (its keys folded), active, no password, its document holding only
 * userName and active; `extra` replaces any column. A row made inactive (`active: 0`) holds no
 * userName claim unless `extra` names one.
 */
export function userRow(teamId: string, userName: string, extra: Partial<UserRow> = {}): UserRow {
  const active = extra.active ?? 1;
  const key = userName.toLowerCase();
  return {
    id: newId(),
    team_id: teamId,
    user_name: userName,
    user_name_key: key,
    user_name_claim: active === 1 ? key : null,
    external_id: null,
    active,
    user_type: null,
    display_name: null,
    given_name: null,
    family_name: null,
    user_name_search: searchFold(userName),
    given_name_search: null,
    family_name_search: null,
    password_hash: null,
    data: JSON.stringify({ userName, active: active === 1 }),
    version: 1,
    created_at: ROW_TIME,
    updated_at: ROW_TIME,
    deleted_at: null,
    ...extra,
  };
}

/** A groups row for `displayName` (its key folded), no members; `extra` replaces any column. */
export function groupRow(teamId: string, displayName: string, extra: Partial<GroupRow> = {}): GroupRow {
  return {
    id: newId(),
    team_id: teamId,
    display_name: displayName,
    display_name_key: displayName.toLowerCase(),
    display_name_search: searchFold(displayName),
    external_id: null,
    active: 1,
    data: JSON.stringify({ displayName, active: true }),
    version: 1,
    created_at: ROW_TIME,
    updated_at: ROW_TIME,
    ...extra,
  };
}

/** Where a long load reports how far it got (the benchmarks pass their progress bar). */
export interface LoadProgress {
  update(done: number): void;
  done(): void;
}

/** Rows per multi-row INSERT: 15 columns x 500 rows stays under both engines' parameter limits. */
const ROWS_PER_INSERT = 500;
/** Rows per transaction. */
const ROWS_PER_TRANSACTION = 5_000;

const GIVEN = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Margaret', 'Dennis', 'Radia', 'Leslie', 'Niklaus', 'Shafi', 'Tim', 'Adele'];
const FAMILY = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Hamilton', 'Ritchie', 'Perlman', 'Lamport', 'Wirth', 'Goldwasser', 'Berners-Lee', 'Goldberg'];
const DEPARTMENTS = ['Engineering', 'Sales', 'Finance', 'Support', 'Research', 'Legal'];

/** The naming scheme of loaded users, so scenarios can address user `n` without a lookup. */
export interface UserNaming {
  /** A prefix that keeps several loads (pools) of one team apart, e.g. "read". */
  readonly prefix: string;
  readonly domain: string;
}

export const userNameOf = (naming: UserNaming, n: number): string => `${naming.prefix}${String(n).padStart(7, '0')}@${naming.domain}`;
export const externalIdOf = (naming: UserNaming, n: number): string => `${naming.prefix}ext-${String(n).padStart(7, '0')}`;

/** The SCIM document a provisioning client would send for user `n` (about 600 bytes stored). */
export function userBody(naming: UserNaming, n: number): Record<string, unknown> {
  const userName = userNameOf(naming, n);
  const given = GIVEN[n % GIVEN.length]!;
  const family = FAMILY[Math.floor(n / GIVEN.length) % FAMILY.length]!;
  return {
    schemas: [USER_SCHEMA, ENTERPRISE_USER_SCHEMA],
    userName,
    externalId: externalIdOf(naming, n),
    name: { formatted: `${given} ${family}`, givenName: given, familyName: family },
    displayName: `${given} ${family}`,
    emails: [{ value: userName, type: 'work', primary: true }],
    title: 'Engineer',
    locale: 'en-US',
    active: true,
    [ENTERPRISE_USER_SCHEMA]: { employeeNumber: String(n), department: DEPARTMENTS[n % DEPARTMENTS.length] },
  };
}

/** A users row for `body`, as the Users service's create would store it (no password). */
export function userRowFor(storage: Storage, teamId: string, body: unknown, createdAt: string): UserRow {
  const document = validateResource(userResourceType, body, 'create').document;
  return userRowOf(storage.hooks, { id: newId(), team_id: teamId, created_at: createdAt }, document, null, 1, createdAt);
}

export interface LoadedUser {
  readonly id: string;
  readonly userName: string;
}

export interface LoadOptions {
  readonly naming: UserNaming;
  readonly count: number;
  readonly progress?: LoadProgress;
  /** Keep id and userName of every user (memory: about 100 bytes a user). */
  readonly collect?: boolean;
}

/**
 * Inserts `count` users numbered 0..count-1. Creation times are one millisecond apart, starting
 * `count` ms before now, so index paging (by created_at, id) sees them in number order.
 */
export async function loadUsers(storage: Storage, team: TeamRow, options: LoadOptions): Promise<{ ids: string[]; users: LoadedUser[] }> {
  const start = Date.now() - options.count - 1000;
  const ids: string[] = [];
  const users: LoadedUser[] = [];
  for (let from = 0; from < options.count; from += ROWS_PER_TRANSACTION) {
    const to = Math.min(options.count, from + ROWS_PER_TRANSACTION);
    await storage.db.transaction().execute(async (trx) => {
      for (let i = from; i < to; i += ROWS_PER_INSERT) {
        const rows: UserRow[] = [];
        for (let n = i; n < Math.min(to, i + ROWS_PER_INSERT); n++) {
          const row = userRowFor(storage, team.id, userBody(options.naming, n), new Date(start + n).toISOString());
          rows.push(row);
          ids.push(row.id);
          if (options.collect) users.push({ id: row.id, userName: row.user_name });
        }
        await trx.insertInto('users').values(rows).execute();
      }
      // The team's counters, as the Users service keeps them (one bump per creation second here).
      const perSecond = new Map<string, number>();
      for (let n = from; n < to; n++) {
        const second = new Date(start + n).toISOString().slice(0, 19);
        perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
      }
      for (const [second, usersActive] of perSecond) await addCounts(trx, team.id, { usersActive }, second);
    });
    options.progress?.update(to);
  }
  options.progress?.done();
  return { ids, users };
}
