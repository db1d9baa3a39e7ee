/**
 * `rollcall connection create|list|rename|delete --team NAME`: a team's provisioning connections
 * (oauth/connections.ts), each a principal of its own that holds tokens and OAuth clients
 * (`token issue --connection`, `client create --connection`). Parses flags, calls one function
 * of admin-connections.ts, prints.
 */
import type { Command } from 'commander';
import { addConnection, connections, deleteConnectionNamed, renameConnectionNamed } from '../admin-connections.ts';
import type { CliHelpers, Common } from './helpers.ts';

export function registerConnectionCommands(program: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const connection = program.command('connection').description("a team's provisioning connections (an identity provider's own principal: its tokens and clients)");
  withCommon(connection.command('create').description('create a named connection (names are unique per team, whatever their case)'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--name <name>', 'the connection\'s name, e.g. "Entra ID production"')
    .option('--provider <provider>', 'entra, okta or generic')
    .action(async (options: Common & { team: string; name: string; provider?: string }) => {
      const created = await withDatabase(options, (deps) => addConnection(deps, options.team, options.name, options.provider));
      print(options.json, created, `connection "${created.name}" created (id ${created.id}); issue its token with: rollcall token issue --team "${options.team}" --connection "${created.name}"`);
    });
  withCommon(connection.command('list').description("list a team's connections with their live tokens and clients"))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: Common & { team: string }) => {
      const rows = await withDatabase(options, (deps) => connections(deps, options.team));
      const line = (c: (typeof rows)[number]) =>
        `${c.id}  ${c.name}${c.provider ? ` (${c.provider})` : ''}  ${c.liveTokens} live token${c.liveTokens === 1 ? '' : 's'}  ${c.clients} client${c.clients === 1 ? '' : 's'}  last used ${c.lastUsedAt ?? 'never'}`;
      print(options.json, rows, rows.length === 0 ? 'no connections' : rows.map(line).join('\n'));
    });
  withCommon(connection.command('rename').description('rename a connection (audited)'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--name <name>', 'its current name')
    .requiredOption('--new-name <name>', 'its new name')
    .action(async (options: Common & { team: string; name: string; newName: string }) => {
      const renamed = await withDatabase(options, (deps) => renameConnectionNamed(deps, options.team, options.name, options.newName));
      print(options.json, renamed, `connection ${renamed.id} is now "${renamed.name}"`);
    });
  withCommon(connection.command('delete').description('delete a connection: its tokens are revoked and its clients deleted'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--name <name>', 'the connection\'s name')
    .action(async (options: Common & { team: string; name: string }) => {
      const deleted = await withDatabase(options, (deps) => deleteConnectionNamed(deps, options.team, options.name));
      print(options.json, deleted, `connection "${deleted.name}" deleted: ${deleted.tokensRevoked} token(s) revoked, ${deleted.clientsDeleted} client(s) deleted`);
    });
}
