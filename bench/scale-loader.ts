/**
 * Bulk loading for the benchmarks beyond users (which `test/support/rows.ts` loads): a group
 * whose membership rows are inserted by the groups repository, and the bench extension's badges
 * with their expression index. It must not be used by the server: it exists to make a database
 * of a million users in minutes.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { CLI_ACTOR } from '../src/audit/events.ts';
import { iso, systemClock } from '../src/clock.ts';
import { PasswordHasher } from '../src/oauth/passwords.ts';
import { createGroup } from '../src/scim/groups.ts';
import { buildExtensionIndexes } from '../src/scim/index-builder.ts';
import { addSchema } from '../src/scim/team-schemas.ts';
import { GROUP_SCHEMA } from '../src/scim/schema/urns.ts';
import type { Storage } from '../src/storage/connect.ts';
import { extensionByKey } from '../src/storage/repos/extensions.ts';
import { addMembers } from '../src/storage/repos/groups.ts';
import { ensureSetting } from '../src/storage/repos/settings.ts';
import type { TeamRow } from '../src/storage/repos/teams.ts';
import type { UserNaming } from '../test/support/rows.ts';
import type { Progress } from './progress.ts';

/** Membership rows per transaction. */
const ROWS_PER_TRANSACTION = 5_000;

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

/** The extension the scale team registers: one `uniqueness: server` attribute. */
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
