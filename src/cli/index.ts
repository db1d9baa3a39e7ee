#!/usr/bin/env node
/**
 * The `rollcall` command line (DESIGN.md section 6): serve, migrate, team, user, client, audit,
 * token, keys, events (cli/events.ts), schema (schema.ts), role / entitlement / catalog
 * (catalog.ts). Every command takes --database and --json. Commands parse flags, call one
 * operation in admin.ts or server.ts, and print; a failure prints one line to stderr and exits 1.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { deactivateUser, resetUserFactors, setUserPassword, teamUsers } from '../admin-users.ts';
import { factorsText } from '../oauth/factors.ts';
import { BUDGET_NAMES, BudgetError, budgetsOf, budgetViews, parseLimit } from '../budgets.ts';
import { AdminError, auditEvents, clients, createClient, createTeam, createTeamUser, deleteClient, firstRun, firstRunPending, issueToken, parseDeactivatedUsers, rotateClientSecret, renameTeam, requireTeam, revokeToken, rotateKeysNow, teams, tokens, updateTeam, updateTeamLimits } from '../admin.ts';
import { REFRESH_SECONDS } from '../keys/store.ts';
import { registerClientTrustCommands } from './client-trust.ts';
import { registerEventCommands } from './events.ts';
import { registerSsfCommands } from './ssf.ts';
import { registerConnectionCommands } from './connections.ts';
import { issueConnectionToken } from '../admin-connections.ts';
import type { IssuedProvisioningToken } from '../oauth/provisioning.ts';
import type { Common } from './helpers.ts';
import { registerSchemaCommands } from './schema.ts';
import { registerMappingCommands } from './mappings.ts';
import { registerCatalogCommands } from './catalog.ts';
import { registerClientSecretCommands } from './client-secrets.ts';
import { registerImportCommand } from './import.ts';
import { parseTokenLifetime } from '../oauth/client-secret-admin.ts';
import type { FirstRunCredentials } from '../admin.ts';
import type { AdminDeps, ClientView } from '../admin.ts';
import { systemClock } from '../clock.ts';
import { ConfigError, DEFAULT_DATABASE_URL, loadConfig, loadServeConfig, passwordFromEnvironment } from '../config.ts';
import type { Config, ConfigOverrides } from '../config.ts';
import { applyServerHeapPolicy } from '../node-flags.ts';
import { scimErrorOf } from '../scim/errors.ts';
import { connect, explainDatabaseError, explainStorageError, StorageFileError } from '../storage/connect.ts';
import type { Storage } from '../storage/connect.ts';
import { CopyError, copyDatabase, NOT_COPIED } from '../storage/copy.ts';
import { buildExtensionIndexes } from '../scim/index-builder.ts';
import { LockedError, lockSqliteFile } from '../storage/lock.ts';
import { migrate } from '../storage/migrations/index.ts';
import { ALL_SCOPES } from '../oauth/tokens.ts';
import { parseLifetime } from '../oauth/provisioning.ts';
import type { Scope } from '../oauth/tokens.ts';

/** The version in package.json, read once per run (the CLI has no build step to stamp it). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

function overridesFrom(options: Common & { host?: string; port?: string; publicBaseUrl?: string }): ConfigOverrides {
  const overrides: ConfigOverrides = {};
  if (options.database !== undefined) overrides.databaseUrl = options.database;
  if (options.host !== undefined) overrides.host = options.host;
  if (options.port !== undefined) overrides.port = options.port;
  if (options.publicBaseUrl !== undefined) overrides.publicBaseUrl = options.publicBaseUrl;
  return overrides;
}

const configFrom = (options: Common & { host?: string; port?: string; publicBaseUrl?: string }): Config => loadConfig(overridesFrom(options));

/** --json output is camelCase everywhere (as SCIM resources, which `user create` prints as they are). */
const clientJson = (c: ClientView) => ({ clientId: c.client_id, name: c.name, redirectUris: c.redirect_uris, team: c.team, createdAt: c.created_at, tokenLifetime: c.token_lifetime });

function print(json: boolean | undefined, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

/** What the first start on an empty database prints, once. */
function firstRunText(c: FirstRunCredentials, baseUrl: string): string {
  return [
    `Rollcall first run: created the team "${c.team}", its admin and an OAuth client.`,
    'These credentials are shown only now; keep them somewhere safe.',
    '',
    `  admin user       ${c.userName}`,
    `  admin password   ${c.password}`,
    `  client_id        ${c.clientId}`,
    `  client_secret    ${c.clientSecret}`,
    `  redirect URI     ${c.redirectUri}`,
    '',
    'Get an access token with the password grant:',
    `  curl -s -u '${c.clientId}:${c.clientSecret}' -d grant_type=password -d 'username=${c.userName}' --data-urlencode 'password=${c.password}' ${baseUrl}/oauth/token`,
    '',
  ].join('\n');
}

/** A progress bar on stderr when it is a terminal; silent otherwise (stdout stays for the result). */
function progressBar(): ((table: string, done: number, total: number) => void) & { done(): void } {
  const tty = process.stderr.isTTY === true;
  const draw = (table: string, done: number, total: number) => {
    if (!tty) return;
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    process.stderr.write(`\r${table.padEnd(22)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
    if (done === total) process.stderr.write('\n');
  };
  return Object.assign(draw, { done: () => {} });
}

/**
 * Whether a missing directory of the SQLite file is made: when asked (`--create`), or for the
 * default path (./data/rollcall.db), so that `npm start` works on a fresh clone. A path somebody
 * typed must exist, so a typo is refused instead of starting an empty database.
 */
const createDirectory = (databaseUrl: string, create: boolean | undefined): boolean => create === true || databaseUrl === DEFAULT_DATABASE_URL;

const CREATE_HELP = "make the SQLite file's directory when it is missing (the default ./data is always made)";

/**
 * Holds a copied SQLite file's server lock (storage/lock.ts) while the copy runs, so a file that a
 * running server holds is refused (the copy must read what nobody writes meanwhile), and no server
 * starts on either file until the copy ends. Returns the release.
 */
function lockForCopy(storage: Storage, flag: '--from' | '--to'): () => void {
  if (storage.sqlitePath === undefined) return () => {};
  try {
    return lockSqliteFile(storage.sqlitePath);
  } catch (error) {
    if (!(error instanceof LockedError)) throw error;
    throw new CopyError(`${flag} ${storage.sqlitePath} is held by a running Rollcall server: stop it first (the copy needs a file nobody writes meanwhile)`);
  }
}

/** Runs `work` against a migrated database and closes it afterwards. */
async function withDatabase<T>(options: Common, work: (deps: AdminDeps, config: Config) => Promise<T>): Promise<T> {
  const config = configFrom(options);
  const storage = connect(config.databaseUrl, { createDirectory: createDirectory(config.databaseUrl, false) });
  try {
    await migrate(storage);
    return await work({ storage, clock: systemClock, baseUrl: config.publicBaseUrl }, config);
  } catch (error) {
    throw explainDatabaseError(error, config.databaseUrl, storage.sqlitePath);
  } finally {
    await storage.close();
  }
}

const withCommon = (command: Command): Command =>
  command.option('--database <url>', 'database URL (sqlite:<path> or postgres://...); default DATABASE_URL or sqlite:./data/rollcall.db').option('--json', 'print JSON');

function parseScope(value: string): Scope[] {
  const scopes = value.split(/\s+/).filter(Boolean);
  for (const s of scopes) {
    if (!(ALL_SCOPES as readonly string[]).includes(s)) throw new InvalidArgumentError(`unknown scope "${s}" (read, write, ssf)`);
  }
  return scopes as Scope[];
}

function parseExpiresIn(value: string): number {
  try {
    return parseLifetime(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

/** The spelling `token issue` had before --expires-in: refused with the new name, never a second spelling. */
function renamedTtl(): never {
  throw new InvalidArgumentError('--ttl is now --expires-in (seconds, or 30m, 12h, 90d; at most 366d)');
}

/** The commands serve and migrate. */
function serverCommands(program: Command): void {
  withCommon(program.command('serve').description('serve the SCIM API (migrations are applied first)'))
    .option('--host <host>', 'address to listen on (HOST, default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (PORT, default 8080)')
    .option('--public-base-url <url>', 'base URL in meta.location (PUBLIC_BASE_URL)')
    .option('--show-first-run-credentials', 'on an empty database, create the first admin and client and print their credentials even when stdout is not a terminal')
    .option('--create', CREATE_HELP)
    .action(async (options: Common & { host?: string; port?: string; publicBaseUrl?: string; showFirstRunCredentials?: boolean; create?: boolean }) => {
      applyServerHeapPolicy();
      // The server (Fastify and every route) is loaded by serve alone: the other commands start
      // in half the time without it.
      const { startServer, stopOnSignals } = await import('../server.ts');
      const config = loadServeConfig(overridesFrom(options));
      // The first run's password and secret are shown once, to a person: on a terminal, or where
      // the operator asked. Never as a log line (stdout of a service often feeds a log store);
      // when they cannot be shown, nothing is created, so nothing unusable or leaked is left.
      const mayShow = options.showFirstRunCredentials === true || process.stdout.isTTY === true;
      let created: FirstRunCredentials | undefined;
      let withheld = false;
      const server = await startServer(config, async (storage) => {
        const deps = { storage, clock: systemClock, baseUrl: config.publicBaseUrl };
        if (mayShow) created = await firstRun(deps);
        else withheld = await firstRunPending(deps);
      }, { createDirectory: createDirectory(config.databaseUrl, options.create) });
      stopOnSignals(server);
      if (created) process.stdout.write(`${firstRunText(created, config.publicBaseUrl)}\n`);
      if (withheld) {
        server.app.log.warn('first run: the database has no team, and stdout is not a terminal, so the credentials of a first admin and client cannot be shown; nothing was created. Start once in a terminal, or with --show-first-run-credentials, or create a team, an admin and a client with `rollcall team create`, `user create --admin` and `client create`');
      }
      print(options.json, { url: server.url, database: server.storage.hooks.name }, `Rollcall is serving on ${server.url} (${server.storage.hooks.name})`);
    });

  withCommon(program.command('migrate').description('apply pending database migrations')).option('--create', CREATE_HELP).action(async (options: Common & { create?: boolean }) => {
    const { databaseUrl } = configFrom(options);
    const storage = connect(databaseUrl, { createDirectory: createDirectory(databaseUrl, options.create) });
    try {
      const applied = await migrate(storage).catch((error: unknown) => {
        throw explainDatabaseError(error, databaseUrl, storage.sqlitePath);
      });
      print(options.json, { applied }, applied.length > 0 ? `applied: ${applied.join(', ')}` : 'database is up to date');
    } finally {
      await storage.close();
    }
  });
}

/** The commands team create, list, update, show, rename. */
function teamCommands(program: Command): void {
  const team = program.command('team').description('manage teams');
  withCommon(team.command('create').description('create a team'))
    .requiredOption('--name <name>', 'team name')
    .option('--deactivated-users <mode>', 'hidden (default: deactivated users vanish from reads) or visible', 'hidden')
    .action(async (options: Common & { name: string; deactivatedUsers: string }) => {
      const mode = parseDeactivatedUsers(options.deactivatedUsers);
      const row = await withDatabase(options, (deps) => createTeam(deps, options.name, mode));
      print(options.json, { id: row.id, name: row.name, deactivatedUsers: row.deactivated_users }, `team "${row.name}" created (id ${row.id}, deactivated users ${row.deactivated_users})`);
    });
  withCommon(team.command('list').description('list teams')).action(async (options: Common) => {
    const rows = await withDatabase(options, (deps) => teams(deps));
    const out = rows.map((r) => ({ id: r.id, name: r.name, deactivatedUsers: r.deactivated_users }));
    print(options.json, out, out.length === 0 ? 'no teams' : out.map((t) => `${t.id}  ${t.name}  (deactivated users ${t.deactivatedUsers})`).join('\n'));
  });
  withCommon(team.command('update').description("change a team's settings and budgets"))
    .requiredOption('--name <name>', 'team name')
    .option('--deactivated-users <mode>', 'hidden or visible')
    .option('--limit <NAME=VALUE>', `set a budget (NAME=default restores its default); repeat for several; names: ${BUDGET_NAMES.join(', ')}`, (v: string, all: string[]) => [...all, v], [] as string[])
    .action(async (options: Common & { name: string; deactivatedUsers?: string; limit: string[] }) => {
      if (options.deactivatedUsers === undefined && options.limit.length === 0) throw new AdminError('team update needs --deactivated-users or at least one --limit NAME=VALUE');
      const mode = options.deactivatedUsers === undefined ? undefined : parseDeactivatedUsers(options.deactivatedUsers);
      const changes = options.limit.map((l) => {
        try {
          return parseLimit(l);
        } catch (error) {
          throw error instanceof BudgetError ? new AdminError(error.message) : error;
        }
      });
      const row = await withDatabase(options, async (deps) => {
        const updated = mode === undefined ? await requireTeam(deps, options.name) : await updateTeam(deps, options.name, mode);
        return changes.length > 0 ? updateTeamLimits(deps, updated.name, changes) : updated;
      });
      const limits = budgetViews(row).filter((b) => b.overridden);
      print(
        options.json,
        { id: row.id, name: row.name, deactivatedUsers: row.deactivated_users, limits: Object.fromEntries(limits.map((b) => [b.name, b.value])) },
        [`team "${row.name}": deactivated users ${row.deactivated_users}`, ...changes.map((c) => `  ${c.name} = ${budgetsOf(row)[c.name]}${c.value === null ? ' (default)' : ''}`)].join('\n'),
      );
    });
  withCommon(team.command('show').description("show a team's settings and every budget (the operator's overrides marked)"))
    .requiredOption('--name <name>', 'team name')
    .action(async (options: Common & { name: string }) => {
      const row = await withDatabase(options, (deps) => requireTeam(deps, options.name));
      const budgets = budgetViews(row);
      const width = Math.max(...budgets.map((b) => b.name.length));
      print(
        options.json,
        {
          id: row.id,
          name: row.name,
          deactivatedUsers: row.deactivated_users,
          createdAt: row.created_at,
          limits: budgets.map((b) => ({ name: b.name, value: b.value, default: b.default, overridden: b.overridden, unit: b.unit, meaning: b.meaning })),
        },
        [
          `team "${row.name}" (id ${row.id}, created ${row.created_at}, deactivated users ${row.deactivated_users})`,
          'limits (* set for this team; `team update --limit NAME=VALUE` changes one):',
          ...budgets.map((b) => `  ${b.overridden ? '*' : ' '} ${b.name.padEnd(width)}  ${String(b.value).padStart(10)} ${b.unit}${b.overridden ? ` (default ${b.default})` : ''}`),
        ].join('\n'),
      );
    });

  withCommon(team.command('rename').description('rename a team (audited)'))
    .requiredOption('--name <name>', 'the current team name')
    .requiredOption('--to <name>', 'the new name')
    .action(async (options: Common & { name: string; to: string }) => {
      const row = await withDatabase(options, (deps) => renameTeam(deps, options.name, options.to));
      print(options.json, { id: row.id, name: row.name, deactivatedUsers: row.deactivated_users }, `team renamed to "${row.name}"`);
    });
}

/** The commands user create, list, deactivate, set-password, reset-factors. */
function userCommands(program: Command): void {
  const user = program.command('user').description('manage users');
  withCommon(user.command('create').description('create a user in a team'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--user-name <userName>', 'userName (e-mail shaped)')
    .option('--password <password>', 'password for signing in (with --admin: required, at least 12 characters; or ROLLCALL_PASSWORD)')
    .option('--admin', 'userType admin (may sign in to authorize clients; needs a password)')
    .action(async (options: Common & { team: string; userName: string; password?: string; admin?: boolean }) => {
      const password = options.password ?? passwordFromEnvironment();
      const resource = await withDatabase(options, (deps) =>
        createTeamUser(deps, options.team, options.userName, {
          ...(password !== undefined ? { password } : {}),
          ...(options.admin ? { admin: true } : {}),
        }),
      );
      print(options.json, resource, `user "${String(resource.userName)}" created (id ${String(resource.id)})`);
    });

  withCommon(user.command('list').description("list a team's users by userName"))
    .requiredOption('--team <name>', 'team name')
    .option('--filter <filter>', 'a SCIM filter, e.g. \'userName sw "a"\' or \'active eq false\'')
    .option('--count <n>', 'at most this many (default 100, at most 1000)', (v: string) => {
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 1000) throw new InvalidArgumentError('--count is a number from 1 to 1000');
      return Number(v);
    })
    .option('--start-index <n>', '1-based index of the first user (default 1)', (v: string) => {
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('--start-index is a number from 1');
      return Number(v);
    })
    .action(async (options: Common & { team: string; filter?: string; count?: number; startIndex?: number }) => {
      const page = await withDatabase(options, (deps) =>
        teamUsers(deps, options.team, { count: options.count ?? 100, startIndex: options.startIndex ?? 1, ...(options.filter !== undefined ? { filter: options.filter } : {}) }),
      );
      const line = (u: (typeof page.users)[number]) => `${u.id}  ${u.userName}  ${u.active ? 'active' : 'deactivated'}${u.userType ? `  ${u.userType}` : ''}`;
      print(options.json, page, page.users.length === 0 ? 'no users' : [...page.users.map(line), `(${page.users.length} of ${page.total})`].join('\n'));
    });
  withCommon(user.command('deactivate').description('deactivate a user (its tokens and sessions end)'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--user-name <userName>', 'the user')
    .action(async (options: Common & { team: string; userName: string }) => {
      const done = await withDatabase(options, (deps) => deactivateUser(deps, options.team, options.userName));
      print(options.json, done, `user "${done.userName}" deactivated`);
    });
  withCommon(user.command('set-password').description("set a user's password (read from ROLLCALL_PASSWORD or --password); ends its sessions"))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--user-name <userName>', 'the user')
    .option('--password <password>', 'the new password (prefer ROLLCALL_PASSWORD: a flag shows in the process list)')
    .action(async (options: Common & { team: string; userName: string; password?: string }) => {
      const password = options.password ?? passwordFromEnvironment();
      if (password === undefined) throw new AdminError('give the new password in ROLLCALL_PASSWORD or --password');
      const done = await withDatabase(options, (deps) => setUserPassword(deps, options.team, options.userName, password));
      print(options.json, done, `password of "${done.userName}" changed; its sessions ended`);
    });
  withCommon(user.command('reset-factors').description("remove an admin's passkeys, authenticator app and recovery codes and end their sessions (audited), when they lost them all"))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--user-name <userName>', 'the admin')
    .action(async (options: Common & { team: string; userName: string }) => {
      const done = await withDatabase(options, (deps) => resetUserFactors(deps, options.team, options.userName));
      print(
        options.json,
        done,
        `second factors of "${done.userName}" reset: removed ${factorsText(done)}; ${done.sessionsEnded} session(s) ended. They sign in with their password (and set up a factor first if team "${options.team}" requires one).`,
      );
    });
}

/** The commands client create, list, delete, rotate-secret, and client secret / update (client-secrets.ts). */
function clientCommands(program: Command): void {
  const client = program.command('client').description('manage OAuth clients');
  registerClientTrustCommands(client, { withCommon, withDatabase, print });
  withCommon(client.command('create').description('register an OAuth client; prints client_id and client_secret once'))
    .requiredOption('--name <name>', 'name shown on the consent page')
    .option('--redirect-uri <uri>', 'registered redirect URI (https, or http on loopback); repeat for several; not needed with --team for client_credentials only', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--team <name>', 'bind the client to one team (allows client_credentials; only that team may sign in)')
    .option('--connection <name>', "the team's connection the client belongs to (its tokens, secrets and federated credentials are the connection's); needs --team")
    .option('--token-lifetime <seconds>', "seconds every access token of the client lives, 300 to 86400 (default: the server's ACCESS_TOKEN_TTL)", (v: string) => {
      try {
        return parseTokenLifetime(v);
      } catch (error) {
        throw new InvalidArgumentError((error as Error).message);
      }
    })
    .action(async (options: Common & { name: string; redirectUri: string[]; team?: string; connection?: string; tokenLifetime?: number }) => {
      const created = await withDatabase(options, (deps) =>
        createClient(deps, {
          name: options.name,
          redirectUris: options.redirectUri,
          ...(options.team !== undefined ? { team: options.team } : {}),
          ...(options.connection !== undefined ? { connection: options.connection } : {}),
          ...(options.tokenLifetime !== undefined ? { tokenLifetime: options.tokenLifetime } : {}),
        }),
      );
      print(
        options.json,
        { ...clientJson(created), clientSecret: created.client_secret, secretId: created.secret_id, secretExpiresAt: created.secret_expires_at },
        `client "${created.name}" registered\nclient_id:     ${created.client_id}\nclient_secret: ${created.client_secret}\n(the secret is shown only now; it expires ${created.secret_expires_at}: add the next one with client secret add before then)`,
      );
    });
  withCommon(client.command('list').description('list OAuth clients')).action(async (options: Common) => {
    const rows = await withDatabase(options, (deps) => clients(deps));
    print(options.json, rows.map(clientJson), rows.length === 0 ? 'no clients' : rows.map((c) => `${c.client_id}  ${c.name}  ${c.redirect_uris.join(' ')}${c.team ? `  (team ${c.team})` : ''}${c.token_lifetime !== null ? `  (tokens live ${c.token_lifetime} s)` : ''}`).join('\n'));
  });
  withCommon(client.command('delete').description('delete an OAuth client and revoke its tokens'))
    .requiredOption('--client-id <id>', 'the client to delete')
    .action(async (options: Common & { clientId: string }) => {
      const deleted = await withDatabase(options, (deps) => deleteClient(deps, options.clientId));
      print(options.json, { clientId: deleted.client_id, tokensRevoked: deleted.revoked }, `client ${deleted.client_id} deleted; ${deleted.revoked} tokens revoked`);
    });
  withCommon(client.command('rotate-secret').description('issue a new client secret and revoke every other secret of the client, with every token issued to the client, at once (to replace a secret without downtime, use client secret add, then client secret revoke)'))
    .requiredOption('--client-id <id>', 'the client')
    .action(async (options: Common & { clientId: string }) => {
      const rotated = await withDatabase(options, (deps) => rotateClientSecret(deps, options.clientId));
      print(
        options.json,
        { clientId: rotated.client_id, clientSecret: rotated.client_secret, secretsRevoked: rotated.secrets_revoked, tokensRevoked: rotated.revoked },
        `client_secret: ${rotated.client_secret}\n(the secret is shown only now; ${rotated.secrets_revoked} other secret(s) and ${rotated.revoked} token(s) of the client revoked)`,
      );
    });
  registerClientSecretCommands(client, { withCommon, withDatabase, print });
}

/** The commands audit list. */
function auditCommands(program: Command): void {
  const audit = program.command('audit').description('the audit trail');
  withCommon(audit.command('list').description("list a team's audit events, newest first"))
    .requiredOption('--team <name>', 'team name')
    .option('--since <time>', 'only events at or after this ISO 8601 time')
    .option('--limit <n>', 'at most this many events, the latest (default 1000)', (v: string) => {
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 100_000) throw new InvalidArgumentError('--limit is a number from 1 to 100000');
      return Number(v);
    })
    .action(async (options: Common & { team: string; since?: string; limit?: number }) => {
      const events = await withDatabase(options, (deps) => auditEvents(deps, options.team, options.since, options.limit ?? 1000, 'newest'));
      const line = (e: (typeof events)[number]) => {
        const actor = e.actor as { via?: string; clientId?: string | null; userId?: string | null };
        const who = [actor.via, actor.clientId ? `client ${actor.clientId}` : '', actor.userId ? `user ${actor.userId}` : ''].filter(Boolean).join(' ');
        return `${e.at}  ${e.action.padEnd(14)} ${e.resourceType} ${e.resourceId ?? '-'}  by ${who}  ${JSON.stringify(e.detail)}`;
      };
      print(options.json, events, events.length === 0 ? 'no events' : events.map(line).join('\n'));
    });
}

/** The commands token issue, list, revoke. */
function tokenCommands(program: Command): void {
  const token = program.command('token').description('provisioning tokens: access tokens for an identity provider or a script');
  withCommon(token.command('issue').description("issue a named access token for a connection (an identity provider's), or for an admin's own script; prints it once"))
    .requiredOption('--team <name>', 'team name')
    .option('--connection <name>', 'the connection the token belongs to (see connection list); it outlives every person')
    .option('--user-name <userName>', "the admin the token acts for (an admin's own script token; it ends when the admin is deactivated)")
    .option('--name <name>', 'a name to recognise the token by in `token list` and the console')
    .option('--scope <scopes>', 'space-separated scopes', parseScope, ['read', 'write'] as Scope[])
    .option('--expires-in <time>', 'lifetime: seconds, or 30m, 12h, 90d (at most 366d; default ACCESS_TOKEN_TTL)', parseExpiresIn)
    .addOption(new Option('--ttl <seconds>').hideHelp().argParser(renamedTtl))
    .action(async (options: Common & { team: string; connection?: string; userName?: string; name?: string; scope: Scope[]; expiresIn?: number }) => {
      if ((options.connection === undefined) === (options.userName === undefined)) {
        throw new AdminError('token issue takes exactly one of --connection NAME (a connection\'s token) or --user-name USER (an admin\'s own token)');
      }
      const issued = await withDatabase(options, (deps, config): Promise<IssuedProvisioningToken> => {
        const request = { scope: options.scope, ttlSeconds: options.expiresIn ?? config.accessTokenTtl, ...(options.name !== undefined ? { name: options.name } : {}) };
        return options.connection !== undefined ? issueConnectionToken(deps, options.team, options.connection, request) : issueToken(deps, options.team, options.userName!, request);
      });
      print(options.json, { id: issued.id, name: issued.name, accessToken: issued.token, tokenType: 'bearer', expiresAt: issued.expiresAt, scope: issued.scope }, issued.token);
    });
  withCommon(token.command('list').description("list a team's provisioning tokens (never their secrets)"))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: Common & { team: string }) => {
      const rows = await withDatabase(options, (deps) => tokens(deps, options.team));
      const line = (t: (typeof rows)[number]) =>
        `${t.id}  ${t.name}  ${t.connectionId !== null ? `connection ${t.connectionName ?? t.connectionId}` : `user ${t.userName ?? t.userId}`}  created ${t.createdAt}  last used ${t.lastUsedAt ?? 'never'}  expires ${t.expiresAt}  ${t.state}`;
      print(options.json, rows, rows.length === 0 ? 'no tokens' : rows.map(line).join('\n'));
    });
  withCommon(token.command('revoke').description('revoke a provisioning token by its id (see token list)'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--id <id>', 'the token id')
    .action(async (options: Common & { team: string; id: string }) => {
      const revoked = await withDatabase(options, (deps) => revokeToken(deps, options.team, options.id));
      print(options.json, revoked, revoked.alreadyRevoked ? `token ${revoked.id} ("${revoked.name}") was already revoked` : `token ${revoked.id} ("${revoked.name}") revoked`);
    });
}

/** The commands copy. */
function copyCommand(program: Command): void {
  program
    .command('copy')
    .description('copy every table of one Rollcall database into a new, empty one (e.g. SQLite to PostgreSQL), verifying counts and checksums')
    .requiredOption('--from <url>', 'the source database (sqlite:<path> or postgres://...)')
    .requiredOption('--to <url>', 'the target database, which must be empty (it is migrated first)')
    .option('--batch-size <n>', 'rows per batch (default 1000)', (v: string) => {
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 50_000) throw new InvalidArgumentError('--batch-size is a number from 1 to 50000');
      return Number(v);
    })
    .option('--json', 'print JSON')
    .option('--create', "make the target SQLite file's directory when it is missing")
    .action(async (options: { from: string; to: string; batchSize?: number; json?: boolean; create?: boolean }) => {
      const from = connect(options.from);
      const to = connect(options.to, { createDirectory: options.create === true });
      const releases: (() => void)[] = [];
      try {
        releases.push(lockForCopy(from, '--from'));
        releases.push(lockForCopy(to, '--to'));
        await migrate(from).catch((error: unknown) => {
          throw explainDatabaseError(error, options.from, from.sqlitePath, '--from');
        });
        await migrate(to).catch((error: unknown) => {
          throw explainDatabaseError(error, options.to, to.sqlitePath, '--to');
        });
        const bar = progressBar();
        const copied = await copyDatabase(from, to, { batch: options.batchSize ?? 1000, progress: bar });
        bar.done();
        // The expression indexes of extension attributes are made from the copied schemas.
        await buildExtensionIndexes(to);
        const lines = copied.map((c) => `${c.table.padEnd(22)} ${String(c.rows).padStart(10)} rows  checksum ${c.checksum}  verified`);
        lines.push(`not copied: ${NOT_COPIED.join(', ')} (sessions end; the target's servers make new keys)`);
        print(options.json, { tables: copied, notCopied: NOT_COPIED }, lines.join('\n'));
      } catch (error) {
        throw explainStorageError(error, from.sqlitePath ?? to.sqlitePath);
      } finally {
        await from.close();
        await to.close();
        for (const release of releases) release();
      }
    });
}

/** The commands keys rotate. */
function keyCommands(program: Command): void {
  const keys = program.command('keys').description('keys Rollcall generates (kept encrypted under SECRET_KEY, or the key file beside an SQLite database)');
  withCommon(keys.command('rotate').description('make new keys; the previous cookie key is still accepted for one session lifetime (30 minutes), the previous events signing key stays published for the event retention')).action(async (options: Common) => {
    const rotated = await withDatabase(options, (deps, config) => rotateKeysNow(deps, config.secretKey, config.eventRetentionDays));
    const lines = rotated.map(
      (r) => `${r.purpose}: new key ${r.id}${r.previous.length > 0 ? `; previous ${r.previous.join(', ')} accepted until ${r.previousValidUntil}` : ''}`,
    );
    lines.push(`(running servers start signing with the new keys within ${REFRESH_SECONDS} seconds)`);
    print(options.json, { rotated, refreshSeconds: REFRESH_SECONDS }, lines.join('\n'));
  });
}

export function buildProgram(): Command {
  const program = new Command('rollcall')
    .description('Rollcall: SCIM 2.0 provisioning with its own OAuth 2.0 server')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();

  for (const register of [serverCommands, teamCommands, userCommands, clientCommands, auditCommands, tokenCommands, copyCommand, keyCommands]) register(program);
  registerSchemaCommands(program, { withCommon, withDatabase, print });
  registerEventCommands(program, { withCommon, withDatabase, print });
  registerSsfCommands(program, { withCommon, withDatabase, print });
  registerConnectionCommands(program, { withCommon, withDatabase, print });
  registerCatalogCommands(program, { withCommon, withDatabase, print });
  registerImportCommand(program, { withCommon, withDatabase, print });
  // `role map | unmap | mappings` join the catalog's `role` command when it is already registered.
  const role = program.commands.find((c) => c.name() === 'role') ?? program.command('role').description("a team's roles and the groups mapped to them");
  registerMappingCommands(role, { withCommon, withDatabase, print });
  return program;
}

/** Runs the CLI with `argv` (without node and script); exits non-zero with one line on failure. */
export async function runCli(argv: readonly string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof Error && 'exitCode' in error && 'code' in error && String(error.code).startsWith('commander.')) {
      process.exit(Number(error.exitCode));
    }
    const known = scimErrorOf(error);
    if (error instanceof AdminError || error instanceof ConfigError || error instanceof LockedError || error instanceof StorageFileError || error instanceof CopyError) {
      console.error(`rollcall: ${error.message}`);
    } else if (known) {
      console.error(`rollcall: ${known.message}${known.scimType ? ` (${known.scimType})` : ''}`);
    } else {
      console.error(`rollcall: ${error instanceof Error ? error.message : String(error)}`);
    }
    process.exit(1);
  }
}

if (import.meta.main) await runCli(process.argv.slice(2));
