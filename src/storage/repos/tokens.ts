/**
 * Access and refresh tokens, stored only as SHA-256 hashes (DESIGN.md section 5). The lookups
 * of every request (the bearer check with its team, a token by hash) are compiled once. Every
 * function here that takes an access token's access away announces it (revocations.ts), so
 * that no instance keeps serving it from its bearer cache, and pauses the event subscriptions
 * created with it (subscription-creators.ts) in the same transaction; retiring a refresh token
 * for its rotation does neither (refresh tokens are never cached, and create nothing).
 */
import { announceRevocation } from '../revocations.ts';
import { defineChain, runChain } from '../chain.ts';
import { defineLookup, defineStatement, defineWrite, hot } from '../statements.ts';
import type { Db, Executor, OAuthTokensTable, TeamsTable } from '../types.ts';
import { pauseSubscriptionsOfRevoked } from './subscription-creators.ts';
import type { UserRow } from './users.ts';

export type TokenRow = OAuthTokensTable;

const TOKEN_BY_HASH = defineStatement<{ hash: string }, TokenRow>('tokenByHash', ['hash'], (db, p) =>
  db.selectFrom('oauth_tokens').selectAll().where('hash', '=', p.hash),
);

/** A token with every column of its team but the id, each named `team_<column>`. */
type TokenTeamRow = TokenRow & { readonly [K in Exclude<keyof TeamsTable, 'id'> as `team_${K}`]-?: Required<TeamsTable>[K] };

const TOKEN_WITH_TEAM = defineLookup<{ hash: string }, TokenTeamRow>('tokenWithTeam', ['hash'], (db, p) =>
  db
    .selectFrom('oauth_tokens as t')
    .innerJoin('teams as tm', 'tm.id', 't.team_id')
    .selectAll('t')
    .select(['tm.name as team_name', 'tm.name_key as team_name_key', 'tm.deactivated_users as team_deactivated_users', 'tm.created_at as team_created_at', 'tm.schema_version as team_schema_version', 'tm.limits as team_limits'])
    .where('t.hash', '=', p.hash),
);

const TOKEN_COLUMNS = ['hash', 'kind', 'family_id', 'client_id', 'user_id', 'team_id', 'scope', 'created_at', 'expires_at', 'revoked_at', 'secret_id', 'connection_id'] as const;

const INSERT_TOKEN = defineWrite<TokenRow>('insertToken', TOKEN_COLUMNS, (db, row) => db.insertInto('oauth_tokens').values(row));

/** A grant's access and refresh token as one statement (one round trip on PostgreSQL). */
type TokenPair = { [K in keyof TokenRow as `a_${K}` | `r_${K}`]: TokenRow[K] };
const pick = (p: TokenPair, prefix: 'a_' | 'r_'): TokenRow =>
  Object.fromEntries(TOKEN_COLUMNS.map((c) => [c, p[`${prefix}${c}` as keyof TokenPair]])) as unknown as TokenRow;
const INSERT_TOKEN_PAIR = defineWrite<TokenPair>(
  'insertTokenPair',
  TOKEN_COLUMNS.flatMap((c) => [`a_${c}`, `r_${c}`] as (keyof TokenPair)[]),
  (db, p) => db.insertInto('oauth_tokens').values([pick(p, 'a_'), pick(p, 'r_')]),
);

export async function insertToken(ex: Executor, row: TokenRow): Promise<void> {
  await hot(ex).write(ex, INSERT_TOKEN, row);
}

/** Inserts an access token and its refresh token in one statement. */
export async function insertTokenPair(ex: Executor, access: TokenRow, refresh: TokenRow): Promise<void> {
  const pair = {} as Record<string, unknown>;
  for (const c of TOKEN_COLUMNS) {
    pair[`a_${c}`] = access[c];
    pair[`r_${c}`] = refresh[c];
  }
  await hot(ex).write(ex, INSERT_TOKEN_PAIR, pair as TokenPair);
}

export async function tokenByHash(ex: Executor, hash: string): Promise<TokenRow | undefined> {
  return hot(ex).first(ex, TOKEN_BY_HASH, { hash });
}

/** A token and its team in one statement (the bearer check of every SCIM request). */
export async function tokenWithTeam(ex: Executor, hash: string): Promise<{ token: TokenRow; team: TeamsTable } | undefined> {
  const row = await hot(ex).first(ex, TOKEN_WITH_TEAM, { hash });
  if (!row) return undefined;
  return {
    // The row itself, with the team_* fields beside the token's (no copy on every request).
    token: row,
    team: { id: row.team_id, name: row.team_name, name_key: row.team_name_key, deactivated_users: row.team_deactivated_users, created_at: row.team_created_at, schema_version: Number(row.team_schema_version), limits: row.team_limits },
  };
}

export async function revokeTokensOfUser(ex: Executor, userId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows);
  if (revoked > 0) await announceRevocation(ex, { kind: 'user', id: userId });
  // Also what the user made in the console, whose session ends with its tokens.
  await pauseSubscriptionsOfRevoked(ex, { kind: 'user', id: userId }, at);
  return revoked;
}

/** A refresh token marked revoked if it still is not. */
const retireQuery = (db: Db, p: { hash: string; at: string }) =>
  db.updateTable('oauth_tokens').set({ revoked_at: p.at }).where('hash', '=', p.hash).where('kind', '=', 'refresh').where('revoked_at', 'is', null);

/** What a rotation reads of the grant's user (oauth/accounts.ts maySignIn). */
export type GrantUser = Pick<UserRow, 'active' | 'user_type' | 'password_hash'>;

type RetiredWithUser = TokenRow & {
  readonly rc_user_id: string | null;
  readonly rc_user_active: number | null;
  readonly rc_user_type: string | null;
  readonly rc_user_password_hash: string | null;
};

/** The retirement, then the grant's user read beside the retired row (chain.ts: one statement on PostgreSQL). */
const RETIRE_REFRESH_TOKEN_WITH_USER = defineChain<{ hash: string; at: string }, RetiredWithUser>('retireRefreshTokenWithUser', ['hash', 'at'], [
  { name: 'retireRefreshToken', as: 'r', returns: TOKEN_COLUMNS, build: retireQuery },
  {
    name: 'grantUser',
    after: 'r',
    build: (db) =>
      db
        .withTables<{ r: TokenRow }>()
        .selectFrom('r')
        .leftJoin('users as u', (join) => join.onRef('u.id', '=', 'r.user_id').onRef('u.team_id', '=', 'r.team_id'))
        .selectAll('r')
        .select(['u.id as rc_user_id', 'u.active as rc_user_active', 'u.user_type as rc_user_type', 'u.password_hash as rc_user_password_hash']),
  },
]);

/**
 * Rotates a refresh token (RFC 9700 4.14.2): one conditional UPDATE ... RETURNING marks it
 * revoked if it still is not and answers its row, with the grant's user as it is now (undefined
 * when the grant has none or the user is gone); undefined when the token is unknown, not a
 * refresh token, or someone used it first (the caller tells these apart). Only refresh tokens:
 * no cache holds them, so nothing is announced. On PostgreSQL one statement, one round trip
 * fewer per refresh grant.
 */
export async function retireRefreshTokenWithUser(ex: Executor, hash: string, at: string): Promise<{ row: TokenRow; user: GrantUser | undefined } | undefined> {
  const found = await runChain(ex, RETIRE_REFRESH_TOKEN_WITH_USER, { hash, at });
  if (!found) return undefined;
  const { rc_user_id, rc_user_active, rc_user_type, rc_user_password_hash, ...row } = found;
  return { row, user: rc_user_id === null ? undefined : { active: Number(rc_user_active), user_type: rc_user_type, password_hash: rc_user_password_hash } };
}

/** Revokes one token (RFC 7009, a provisioning token's revocation). False when it already was. */
export async function revokeToken(ex: Executor, hash: string, at: string): Promise<boolean> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows) === 1;
  if (revoked) {
    await announceRevocation(ex, { kind: 'token', id: hash });
    await pauseSubscriptionsOfRevoked(ex, { kind: 'token', id: hash }, at);
  }
  return revoked;
}

/** Revokes every live token of a grant (a refresh family, or what one code issued). */
export async function revokeFamily(ex: Executor, familyId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows);
  if (revoked > 0) {
    await announceRevocation(ex, { kind: 'family', id: familyId });
    await pauseSubscriptionsOfRevoked(ex, { kind: 'family', id: familyId }, at);
  }
  return revoked;
}

export async function revokeTokensOfClient(ex: Executor, clientId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows);
  if (revoked > 0) {
    await announceRevocation(ex, { kind: 'client', id: clientId });
    await pauseSubscriptionsOfRevoked(ex, { kind: 'client', id: clientId }, at);
  }
  return revoked;
}
