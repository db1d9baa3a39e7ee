/**
 * Bulk loading for the benchmarks: users written straight through the storage layer in
 * multi-row INSERTs (a few thousand rows per transaction, one connection), and a group whose
 * membership rows are inserted by the groups repository. Rows are built the way the Users
 * service builds them (`validateResource`, then the schema's column copies through `columnsOf`,
 * the document through the dialect's `toJson`), so the server reads them as its own; only the
 * per-row HTTP and transaction overhead is skipped. It must not be used by the server: it exists
 * to make a database of a million users in minutes.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { CLI_ACTOR } from '../src/audit/events.ts';
import { iso, systemClock } from '../src/clock.ts';
import { newId } from '../src/ids.ts';
import { PasswordHasher } from '../src/oauth/passwords.ts';
import { createGroup } from '../src/scim/groups.ts';
import { buildExtensionIndexes } from '../src/scim/index-builder.ts';
import { addSchema } from '../src/scim/team-schemas.ts';
import { userRowOf } from '../src/scim/users.ts';
import { userResourceType } from '../src/scim/schema/registry.ts';
import { ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from '../src/scim/schema/urns.ts';
import { validateResource } from '../src/scim/validate.ts';
import type { Storage } from '../src/storage/connect.ts';
import { addCounts } from '../src/storage/repos/counters.ts';
import { extensionByKey } from '../src/storage/repos/extensions.ts';
import { addMembers } from '../src/storage/repos/groups.ts';
import { ensureSetting } from '../src/storage/repos/settings.ts';
import type { TeamRow } from '../src/storage/repos/teams.ts';
import type { UserRow } from '../src/storage/repos/users.ts';
import type { Progress } from './progress.ts';

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
  readonly progress?: Progress;
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

/**
 * Creates a group through the Groups service, then adds `memberIds` as membership rows through
 * the groups repository (500 rows a statement, a few thousand a transaction).
 */
export async function loadGroup(
  storage: Storage,
  team: TeamRow,
  displayName: string,
  memberIds: readonly string[],
  progress?: Progress,
): Promise<string> {
  // The same cursor secret the server will use (the first to start stores it).
  const cursorSecret = await ensureSetting(storage.db, 'cursor_secret', randomBytes(32).toString('base64url'));
  const ctx = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1', team, actor: CLI_ACTOR, requestId: null, cursorSecret, passwords: new PasswordHasher() };
  const created = await createGroup(ctx, { schemas: [GROUP_SCHEMA], displayName });
  const at = iso(systemClock);
  for (let from = 0; from < memberIds.length; from += ROWS_PER_TRANSACTION) {
    const chunk = memberIds.slice(from, from + ROWS_PER_TRANSACTION);
    await storage.db.transaction().execute((trx) => addMembers(trx, team.id, created.id, chunk, at));
    progress?.update(from + chunk.length);
  }
  progress?.done();
  return created.id;
}

/** The extension the scale team registers (issue 11 item 4): one `uniqueness: server` attribute. */
export const BENCH_EXTENSION = 'urn:rollcall:params:scim:schemas:extension:Bench:2.0:User';

/** User `n`'s badge: what the extension `eq` scenario looks up (folded: `b-...` finds `B-...`). */
export const badgeOf = (n: number): string => `B-${String(n).padStart(7, '0')}`;

/**
 * Gives every user of the team a badge under BENCH_EXTENSION (with its uniqueness claim, as the
 * Users service would), then registers the extension through the operation the CLI uses, which
 * builds the badge's expression index over the loaded values. Nothing when it is registered
 * already. Returns how long the registration (the index build) took, in seconds.
 */
export async function loadBadges(storage: Storage, team: TeamRow, naming: UserNaming): Promise<number | undefined> {
  if (await extensionByKey(storage.db, team.id, BENCH_EXTENSION.toLowerCase())) return undefined;
  // user_name is `${prefix}${7 digits}@${domain}`: the badge is B- and those digits.
  const digits = sql`substr(user_name, ${naming.prefix.length + 1}, 7)`;
  const attribute = `${BENCH_EXTENSION}:badge`.toLowerCase();
  await storage.db.transaction().execute(async (trx) => {
    if (storage.hooks.name === 'postgres') {
      await sql`update users set data = jsonb_set(data, ${sql.val([BENCH_EXTENSION])}::text[], jsonb_build_object('badge', 'B-' || ${digits})) where team_id = ${team.id}`.execute(trx);
    } else {
      await sql`update users set data = json_set(data, ${`$."${BENCH_EXTENSION}"`}, json_object('badge', 'B-' || ${digits})) where team_id = ${team.id}`.execute(trx);
    }
    await sql`insert into extension_unique_values (team_id, resource_type, attribute, value_key, resource_id)
      select team_id, 'User', ${attribute}, 'b-' || ${digits}, id from users where team_id = ${team.id}`.execute(trx);
  });
  const started = performance.now();
  const schema = { id: BENCH_EXTENSION, name: 'Bench', attributes: [{ name: 'badge', type: 'string', uniqueness: 'server' }] };
  await addSchema({ storage, clock: systemClock, baseUrl: 'https://bench.example' }, team, { resourceType: 'User', required: false, schema }, { actor: CLI_ACTOR });
  await buildExtensionIndexes(storage);
  return (performance.now() - started) / 1000;
}
