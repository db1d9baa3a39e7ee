/**
 * What bench:console's pages need on a scale database beyond bench:scale's users and its
 * 100,000-member group (issue 30 item 10): a connection with a token, an application with a live
 * grant and a secret, a second admin, a few deactivated users, 49 groups of 1,000 members, and
 * AUDIT_ROWS audit rows of the team spread over half a year (connections, admins, clients, the
 * CLI; one rare actor; one user with a long history). The users, groups and connection go through
 * the services; the audit rows are inserted at storage level, 1,000 a statement, as
 * scale-loader.ts does with memberships: they exist to make a large trail in seconds. Each part is
 * made once per database (found again on the next run).
 */
import { sql } from 'kysely';
import { deactivateUser } from '../src/admin-users.ts';
import { AdminError, createClient, createTeamUser } from '../src/admin.ts';
import { CLI_ACTOR } from '../src/audit/events.ts';
import type { Actor } from '../src/audit/events.ts';
import { systemClock } from '../src/clock.ts';
import { addClientSecret } from '../src/oauth/client-secret-admin.ts';
import { createConnection, connectionByName } from '../src/oauth/connections.ts';
import { issueProvisioningToken } from '../src/oauth/provisioning.ts';
import { ScimError } from '../src/scim/errors.ts';
import type { Storage } from '../src/storage/connect.ts';
import type { TeamRow } from '../src/storage/repos/teams.ts';
import { loadGroup } from './scale-loader.ts';

export const AUDIT_ROWS = 100_000;
const AUDIT_ID_PREFIX = 'CBAUDIT';
const CONNECTION = 'Entra ID production (bench)';
const SECOND_ADMIN = 'console-bench-2@scale.example';
const BENCH_GROUPS = 49;
const BENCH_GROUP_MEMBERS = 1_000;
/** Users (by their number in the scale naming) that are deactivated. */
const DEACTIVATED = [7, 70_007, 300_007, 600_007, 900_007];

export interface ConsoleSeed {
  readonly connectionId: string;
  readonly connectionName: string;
  readonly tokenId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly secretId: string;
  readonly secondAdminId: string;
  /** A user who acted 20 times in the whole trail: the actor filter's worst case. */
  readonly rareActorId: string;
  /** A user with 200 audit rows naming them. */
  readonly historyUserId: string;
  /** The `before` position of the row half-way down the trail (an older page). */
  readonly middle: string;
  /** An ISO day range in the middle of the trail. */
  readonly from: string;
  readonly to: string;
}

const userName = (n: number): string => `user${String(n).padStart(7, '0')}@scale.example`;

async function userIdOf(storage: Storage, teamId: string, name: string): Promise<string> {
  const row = await storage.db.selectFrom('users').select('id').where('team_id', '=', teamId).where('user_name_key', '=', name.toLowerCase()).executeTakeFirst();
  if (!row) throw new Error(`no user ${name} in the team (is this a bench:scale database?)`);
  return row.id;
}

async function ignoringConflict<T>(work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    // Made by an earlier run: the user exists, or is deactivated already (and hidden by the team's mode).
    if ((error instanceof ScimError && (error.status === 409 || error.status === 400)) || error instanceof AdminError) return undefined;
    throw error;
  }
}

export async function seedConsole(storage: Storage, team: TeamRow, admin: { id: string; userName: string; password: string }, log: (line: string) => void): Promise<ConsoleSeed> {
  const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
  const actor: Actor = { via: 'cli', clientId: null, userId: null };

  const connection =
    (await connectionByName(storage.db, team.id, CONNECTION)) ??
    (await createConnection(storage, systemClock, { teamId: team.id, name: CONNECTION, provider: 'entra', actor, requestId: null }));
  // A token per run (its revoke page needs a live one); a few accumulate over runs.
  const token = await issueProvisioningToken(storage, systemClock, { teamId: team.id, connectionId: connection.id, name: `bench ${Date.now()}`, scope: ['read', 'write'], ttlSeconds: 86_400, actor, requestId: null });

  // An application with a live grant (the admins page's revoke) and a secret (the client page's revoke).
  const client = await createClient(deps, { name: 'Console bench HR app', redirectUris: ['https://hr.scale.example/callback'], team: team.name });
  const secret = await addClientSecret({ storage, clock: systemClock, actor: CLI_ACTOR, requestId: null }, client.client_id, { name: 'bench 2027', days: 20 });

  await ignoringConflict(() => createTeamUser(deps, team.name, SECOND_ADMIN, { password: admin.password, admin: true }));
  const secondAdminId = await userIdOf(storage, team.id, SECOND_ADMIN);

  for (const n of DEACTIVATED) await ignoringConflict(() => deactivateUser(deps, team.name, userName(n), CLI_ACTOR));

  const benchGroups = await storage.db.selectFrom('groups').select((eb) => eb.fn.countAll<number | string>().as('n')).where('team_id', '=', team.id).where('display_name', 'like', 'Console bench %').executeTakeFirstOrThrow();
  if (Number(benchGroups.n) < BENCH_GROUPS) {
    const started = performance.now();
    for (let g = Number(benchGroups.n); g < BENCH_GROUPS; g++) {
      const memberIds = await storage.db
        .selectFrom('users')
        .select('id')
        .where('team_id', '=', team.id)
        .where('user_name_key', '>=', userName(g * 20_000 + 1))
        .orderBy('user_name_key')
        .limit(BENCH_GROUP_MEMBERS)
        .execute();
      await loadGroup(storage, team, `Console bench ${String(g + 1).padStart(2, '0')}`, memberIds.map((r) => r.id));
    }
    log(`seeded ${BENCH_GROUPS} groups of ${BENCH_GROUP_MEMBERS} members in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }

  const rareActorId = await userIdOf(storage, team.id, userName(424_242));
  const historyUserId = await userIdOf(storage, team.id, userName(123_456));
  const bigGroup = await storage.db.selectFrom('groups').select('id').where('team_id', '=', team.id).where('display_name', '=', 'big group').executeTakeFirst();
  const targets = await storage.db.selectFrom('users').select('id').where('team_id', '=', team.id).where('user_name_key', '>=', userName(500_000)).orderBy('user_name_key').limit(1_000).execute();

  // The trail: row i is 2.5 minutes older than row i-1, from an hour before the seeding on.
  const firstId = `${AUDIT_ID_PREFIX}${String(0).padStart(13, '0')}`;
  const seeded = await storage.db.selectFrom('audit_events').select(['id', 'at']).where('id', '=', firstId).executeTakeFirst();
  const newest = seeded ? Date.parse(seeded.at) : Date.now() - 3_600_000;
  const atOf = (i: number) => new Date(newest - i * 150_000).toISOString();
  const idOf = (i: number) => `${AUDIT_ID_PREFIX}${String(i).padStart(13, '0')}`;
  if (!seeded) {
    const started = performance.now();
    const viaConnection = JSON.stringify({ via: 'scim', clientId: null, userId: null, connectionId: connection.id });
    const viaConsole = JSON.stringify({ via: 'console', clientId: null, userId: admin.id });
    const viaClient = JSON.stringify({ via: 'oauth', clientId: client.client_id, userId: admin.id });
    const rare = JSON.stringify({ via: 'oauth', clientId: null, userId: rareActorId });
    const cli = JSON.stringify(CLI_ACTOR);
    const rowOf = (i: number) => {
      const target = i % 500 === 0 ? historyUserId : targets[i % targets.length]!.id;
      const base = { id: idOf(i), team_id: team.id, at: atOf(i), request_id: `bench-${i}`, actor_connection_id: null as string | null };
      if (i % 5_000 === 2_500) return { ...base, actor: rare, action: 'sign_in', resource_type: 'User', resource_id: rareActorId, detail: '{}' };
      switch (i % 10) {
        case 6: {
          const added = targets.slice(i % 900, (i % 900) + 100).map((t) => t.id);
          return { ...base, actor: viaConnection, actor_connection_id: connection.id, action: 'members', resource_type: 'Group', resource_id: bigGroup?.id ?? null, detail: JSON.stringify({ added, removed: [] }) };
        }
        case 7:
          return { ...base, actor: viaConsole, action: 'patch', resource_type: 'User', resource_id: target, detail: JSON.stringify({ attributes: ['title', 'name.familyName'] }) };
        case 8:
          return { ...base, actor: viaClient, action: 'token_issued', resource_type: 'Token', resource_id: `TOK${i}`, detail: JSON.stringify({ name: 'access token', scope: 'read' }) };
        case 9:
          return { ...base, actor: cli, action: 'team_updated', resource_type: 'Team', resource_id: team.id, detail: JSON.stringify({ mode: 'visible' }) };
        default:
          return { ...base, actor: viaConnection, actor_connection_id: connection.id, action: i % 3 === 0 ? 'create' : 'patch', resource_type: 'User', resource_id: target, detail: JSON.stringify({ attributes: ['active', 'emails'] }) };
      }
    };
    for (let from = 0; from < AUDIT_ROWS; from += 1_000) {
      const rows = Array.from({ length: Math.min(1_000, AUDIT_ROWS - from) }, (_, k) => rowOf(from + k));
      await storage.db.transaction().execute((trx) => trx.insertInto('audit_events').values(rows).execute());
    }
    if (storage.hooks.name === 'postgres') await sql`analyze audit_events`.execute(storage.db);
    log(`seeded ${AUDIT_ROWS.toLocaleString('en-US')} audit rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const middle = AUDIT_ROWS / 2;
  return {
    connectionId: connection.id,
    connectionName: CONNECTION,
    tokenId: token.id,
    clientId: client.client_id,
    clientSecret: client.client_secret,
    secretId: secret.id,
    secondAdminId,
    rareActorId,
    historyUserId,
    middle: `${atOf(middle)}_${idOf(middle)}`,
    from: atOf(middle + 20_000).slice(0, 10),
    to: atOf(middle).slice(0, 10),
  };
}
