/**
 * `rollcall client secret add | list | revoke` and `rollcall client update` (DESIGN.md section
 * 11): a client's secrets (up to five live at once, each expiring, shown once) and its settings
 * (name, access token lifetime). Parses flags, calls one operation of
 * oauth/client-secret-admin.ts, prints.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { AdminError } from '../admin.ts';
import { CLI_ACTOR } from '../audit/events.ts';
import type { ClientChanger } from '../oauth/client-secret-admin.ts';
import { addClientSecret, ClientSecretError, listClientSecrets, parseSecretDays, parseTokenLifetime, revokeClientSecret, updateClient } from '../oauth/client-secret-admin.ts';
import { DEFAULT_SECRET_DAYS, MAX_LIVE_SECRETS, MAX_SECRET_DAYS } from '../oauth/client-secrets.ts';
import type { AdminDeps } from '../admin.ts';
import type { CliHelpers, Common } from './helpers.ts';

/** A flag's value checked by `parse`, its refusal in commander's words. */
const checked = <T>(parse: (text: string) => T) => (text: string): T => {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof ClientSecretError) throw new InvalidArgumentError(error.message);
    throw error;
  }
};

/** Runs a client operation as the CLI, its refusals as the CLI's one-line errors. */
async function asCli<T>(deps: AdminDeps, work: (changer: ClientChanger) => Promise<T>): Promise<T> {
  try {
    return await work({ storage: deps.storage, clock: deps.clock, actor: CLI_ACTOR, requestId: null });
  } catch (error) {
    if (error instanceof ClientSecretError) throw new AdminError(error.message);
    throw error;
  }
}

export function registerClientSecretCommands(client: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const secret = client.command('secret').description(`a client's secrets: up to ${MAX_LIVE_SECRETS} live at once, any of them authenticates, so a secret can be replaced without downtime`);

  withCommon(secret.command('add').description('add a secret to a client; prints it once'))
    .requiredOption('--client <id>', 'the client id')
    .option('--name <name>', 'a name to tell the secrets apart (default: the date)')
    .option('--expires-in <days>', `days until the secret stops working, 1 to ${MAX_SECRET_DAYS} (default ${DEFAULT_SECRET_DAYS})`, checked(parseSecretDays))
    .action(async (options: Common & { client: string; name?: string; expiresIn?: number }) => {
      const added = await withDatabase(options, (deps) =>
        asCli(deps, (changer) => addClientSecret(changer, options.client, { ...(options.name !== undefined ? { name: options.name } : {}), ...(options.expiresIn !== undefined ? { days: options.expiresIn } : {}) })),
      );
      print(
        options.json,
        { id: added.id, name: added.name, clientSecret: added.clientSecret, createdAt: added.createdAt, expiresAt: added.expiresAt },
        `secret "${added.name}" added to client ${options.client}\nid:           ${added.id}\nclientSecret: ${added.clientSecret}\nexpiresAt:    ${added.expiresAt}\n(the secret is shown only now)`,
      );
    });

  withCommon(secret.command('list').description("list a client's secrets that are not revoked (never their values)"))
    .requiredOption('--client <id>', 'the client id')
    .action(async (options: Common & { client: string }) => {
      const rows = await withDatabase(options, (deps) => asCli(deps, (changer) => listClientSecrets(changer, options.client)));
      print(
        options.json,
        rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt, expiresAt: r.expiresAt, lastUsedAt: r.lastUsedAt, expired: !r.live })),
        rows.length === 0
          ? 'no secrets'
          : rows.map((r) => `${r.id}  ${r.name}  created ${r.createdAt}  expires ${r.expiresAt}${r.live ? '' : ' (EXPIRED)'}  last used ${r.lastUsedAt ?? 'never'}`).join('\n'),
      );
    });

  withCommon(secret.command('revoke').description('revoke one secret of a client and every token issued through it; the other secrets keep working'))
    .requiredOption('--client <id>', 'the client id')
    .requiredOption('--id <secretId>', 'the secret id (see: client secret list)')
    .action(async (options: Common & { client: string; id: string }) => {
      const revoked = await withDatabase(options, (deps) => asCli(deps, (changer) => revokeClientSecret(changer, options.client, options.id)));
      print(options.json, { id: revoked.id, tokensRevoked: revoked.tokensRevoked }, `secret ${revoked.id} revoked; ${revoked.tokensRevoked} token(s) issued through it revoked`);
    });

  withCommon(client.command('update').description("change a client's name or the lifetime of its access tokens"))
    .requiredOption('--client <id>', 'the client id')
    .option('--name <name>', 'the new name')
    .option('--token-lifetime <seconds>', 'seconds every access token of the client lives, 300 to 86400 (default: the server\'s ACCESS_TOKEN_TTL)', checked(parseTokenLifetime))
    .action(async (options: Common & { client: string; name?: string; tokenLifetime?: number }) => {
      if (options.name === undefined && options.tokenLifetime === undefined) throw new AdminError('nothing to change: give --name or --token-lifetime');
      const row = await withDatabase(options, (deps) =>
        asCli(deps, (changer) => updateClient(changer, options.client, { ...(options.name !== undefined ? { name: options.name } : {}), ...(options.tokenLifetime !== undefined ? { tokenLifetime: options.tokenLifetime } : {}) })),
      );
      print(options.json, { clientId: row.id, name: row.name, tokenLifetime: row.token_lifetime }, `client ${row.id} "${row.name}": access tokens live ${row.token_lifetime ?? 'the server default of'} ${row.token_lifetime === null ? 'ACCESS_TOKEN_TTL' : 'seconds'}`);
    });
}
