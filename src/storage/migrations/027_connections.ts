/**
 * Connections (issue 30, DESIGN.md section 9): a team's provisioning connection ("Entra ID
 * production") is a principal of its own, not a directory user and not the admin who made it.
 * Its access tokens, provisioning tokens and OAuth clients name it (`connection_id`, the
 * token's `user_id` null), audit rows name it (`actor_connection_id`), and so does the request
 * log. Names are unique per team whatever their case (`name_key` = lower(trim(name))).
 *
 * `provisioning_tokens.user_id` becomes nullable (SQLite: the table is rebuilt; it is small).
 *
 * Today's provisioning tokens become connections' tokens, each keeping its secret (only the rows
 * that name its owner change, so a token issued before keeps working):
 * - the live tokens of a user who does not sign in (the guides' "provisioning user", or a user
 *   since gone) become one connection per user, named after its userName; a user whose tokens
 *   are all revoked or expired gets no connection (those tokens stay as they were: dead);
 * - live tokens an admin issued in the console (which acted as that admin) become one connection
 *   each, named after the token;
 * - an admin's CLI tokens stay that admin's own script tokens.
 * The provisioning users themselves stay in the directory (deleting a user is a SCIM write with
 * its events and counters, not a migration's job); they hold no token any more.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { newId } from '../../ids.ts';

interface OldToken {
  id: string;
  team_id: string;
  token_hash: string;
  name: string;
  user_id: string | null;
  issued_by: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  user_name: string | null;
  user_type: string | null;
  password_hash: string | null;
}

const MAX_NAME = 100;

export function migration027(engine: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('connections')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('name_key', 'text', (c) => c.notNull())
        .addColumn('provider', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema.createIndex('connections_team_name').on('connections').columns(['team_id', 'name_key']).unique().execute();
      await db.schema.alterTable('oauth_tokens').addColumn('connection_id', 'varchar(20)').execute();
      await db.schema.createIndex('oauth_tokens_connection').on('oauth_tokens').columns(['connection_id']).execute();
      await db.schema.alterTable('oauth_clients').addColumn('connection_id', 'varchar(20)').execute();
      await db.schema.alterTable('request_log').addColumn('connection_id', 'varchar(20)').execute();
      await db.schema.alterTable('audit_events').addColumn('actor_connection_id', 'varchar(20)').execute();
      await provisioningTokensWithConnection(db, engine);
      await tokensIntoConnections(db);
    },
  };
}

/** Adds `connection_id` to provisioning_tokens and lets `user_id` be null. */
async function provisioningTokensWithConnection(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  if (engine === 'postgres') {
    await sql`alter table provisioning_tokens alter column user_id drop not null`.execute(db);
    await db.schema.alterTable('provisioning_tokens').addColumn('connection_id', 'varchar(20)').execute();
  } else {
    await db.schema
      .createTable('provisioning_tokens_rebuilt')
      .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
      .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
      .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('user_id', 'varchar(20)')
      .addColumn('issued_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('connection_id', 'varchar(20)')
      .execute();
    await sql`insert into provisioning_tokens_rebuilt (id, team_id, token_hash, name, user_id, issued_by, created_at, expires_at, last_used_at)
      select id, team_id, token_hash, name, user_id, issued_by, created_at, expires_at, last_used_at from provisioning_tokens`.execute(db);
    await db.schema.dropTable('provisioning_tokens').execute();
    await sql`alter table provisioning_tokens_rebuilt rename to provisioning_tokens`.execute(db);
    await db.schema.createIndex('provisioning_tokens_team').on('provisioning_tokens').columns(['team_id', 'created_at']).execute();
  }
  await db.schema.createIndex('provisioning_tokens_connection').on('provisioning_tokens').columns(['connection_id']).execute();
}

/** A name not yet taken in its team: `name`, else `name (2)`, `name (3)`, ... */
function freeName(taken: Set<string>, teamId: string, wanted: string): string {
  // Trimmed after the cut too: name_key is lower(trim(name)), as the domain computes it.
  const base = wanted.trim().slice(0, MAX_NAME - 8).trim() || 'provisioning connection';
  let name = base;
  for (let n = 2; taken.has(`${teamId} ${name.toLowerCase()}`); n++) name = `${base} (${n})`;
  taken.add(`${teamId} ${name.toLowerCase()}`);
  return name;
}

async function tokensIntoConnections(db: Kysely<unknown>): Promise<void> {
  const now = new Date().toISOString();
  const tokens = (
    await sql<OldToken>`select p.id, p.team_id, p.token_hash, p.name, p.user_id, p.issued_by, p.created_at, p.expires_at, p.last_used_at,
        t.revoked_at, u.user_name, u.user_type, u.password_hash
      from provisioning_tokens p
      left join oauth_tokens t on t.hash = p.token_hash
      left join users u on u.id = p.user_id and u.team_id = p.team_id
      order by p.team_id, p.created_at, p.id`.execute(db)
  ).rows;
  const taken = new Set<string>();
  /** The connection made for a provisioning user, by team and user id. */
  const ofUser = new Map<string, { id: string; lastUsed: string | null }>();
  const connections: { id: string; team_id: string; name: string; created_at: string; created_by: string; last_used_at: string | null }[] = [];
  const moves: { hash: string; connection: string }[] = [];
  for (const token of tokens) {
    const admin = token.user_name !== null && (token.user_type ?? '').toLowerCase() === 'admin' && token.password_hash !== null;
    // A dead token (revoked or expired) can never act again: it makes no connection.
    const live = token.revoked_at === null && token.expires_at > now;
    if (!live) continue;
    if (admin) {
      if (!token.issued_by.startsWith('console:')) continue;
      const id = newId();
      connections.push({ id, team_id: token.team_id, name: freeName(taken, token.team_id, token.name), created_at: token.created_at, created_by: token.issued_by, last_used_at: token.last_used_at });
      moves.push({ hash: token.token_hash, connection: id });
      continue;
    }
    const key = `${token.team_id} ${token.user_id ?? ''}`;
    let made = ofUser.get(key);
    if (!made) {
      made = { id: newId(), lastUsed: null };
      ofUser.set(key, made);
      connections.push({ id: made.id, team_id: token.team_id, name: freeName(taken, token.team_id, token.user_name ?? token.name), created_at: token.created_at, created_by: token.issued_by, last_used_at: null });
    }
    const connection = connections.find((c) => c.id === made.id)!;
    if (token.last_used_at !== null && (connection.last_used_at === null || token.last_used_at > connection.last_used_at)) connection.last_used_at = token.last_used_at;
    moves.push({ hash: token.token_hash, connection: made.id });
  }
  for (const c of connections) {
    await sql`insert into connections (id, team_id, name, name_key, provider, created_at, created_by, last_used_at)
      values (${c.id}, ${c.team_id}, ${c.name}, ${c.name.toLowerCase()}, null, ${c.created_at}, ${c.created_by}, ${c.last_used_at})`.execute(db);
  }
  for (const m of moves) {
    await sql`update oauth_tokens set user_id = null, connection_id = ${m.connection} where hash = ${m.hash}`.execute(db);
    await sql`update provisioning_tokens set user_id = null, connection_id = ${m.connection} where token_hash = ${m.hash}`.execute(db);
  }
  await sql`update request_log set connection_id = (select p.connection_id from provisioning_tokens p where p.token_hash = request_log.token_hash)
    where token_hash is not null`.execute(db);
}
