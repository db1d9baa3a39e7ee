/**
 * `rollcall client key ...` and `rollcall client federation ...`: what a client trusts to
 * authenticate it by a JWT assertion (RFC 7523 2.2): its own public keys (private_key_jwt) and,
 * for a client bound to a team, federated credentials (Entra workload identity federation).
 * Registered under `client` by cli/index.ts with that file's helpers; every command calls one
 * function of oauth/client-trust.ts.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { AdminError } from '../admin.ts';
import { addClientKey, addFederation, listClientKeys, listFederations, removeClientKey, removeFederation } from '../oauth/client-trust.ts';
import type { ClientKeyView, FederationView } from '../oauth/client-trust.ts';
import type { CliHelpers, Common } from './helpers.ts';

const keyLine = (k: ClientKeyView): string =>
  [k.id, k.jwksUri !== null ? `jwks_uri ${k.jwksUri}` : `keys ${k.kids!.map((kid) => kid ?? '(no kid)').join(',')}`, `added ${k.createdAt}`].join('  ');

const federationLine = (f: FederationView): string =>
  [f.id, `issuer ${f.issuer}`, `subject ${f.subject}`, `audience ${f.audience}`, f.jwksUri !== null ? `jwks_uri ${f.jwksUri}` : 'keys from the issuer\'s OpenID configuration', `added ${f.createdAt}`].join('  ');

function readJwksFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new AdminError(`--jwks: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

type WithClient = Common & { client: string };

export function registerClientTrustCommands(client: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const key = client.command('key').description("a client's public keys for private_key_jwt (RFC 7523 2.2): assertions with iss = sub = the client id");

  withCommon(key.command('add').description('register a JWK Set (public RSA or EC P-256 keys) or the URL it is published at'))
    .requiredOption('--client <id>', 'the client')
    .option('--jwks <file>', 'a JWK Set file: public keys only, RS256, PS256 or ES256, at most 10 keys')
    .option('--jwks-uri <url>', 'the URL of the JWK Set (https, or http on loopback); fetched when an assertion needs it')
    .action(async (options: WithClient & { jwks?: string; jwksUri?: string }) => {
      const source = { ...(options.jwks !== undefined ? { jwks: readJwksFile(options.jwks) } : {}), ...(options.jwksUri !== undefined ? { jwksUri: options.jwksUri } : {}) };
      const added = await withDatabase(options, (deps) => addClientKey(deps, options.client, source));
      print(options.json, added, `key set ${added.id} registered for client ${added.clientId}\n${keyLine(added)}`);
    });

  withCommon(key.command('list').description("list a client's key sets"))
    .requiredOption('--client <id>', 'the client')
    .action(async (options: WithClient) => {
      const list = await withDatabase(options, (deps) => listClientKeys(deps, options.client));
      print(options.json, list, list.length === 0 ? '(no keys)' : list.map(keyLine).join('\n'));
    });

  withCommon(key.command('remove').description('remove a key set; assertions it signed stop authenticating'))
    .requiredOption('--client <id>', 'the client')
    .requiredOption('--id <id>', 'the key set (see: client key list)')
    .action(async (options: WithClient & { id: string }) => {
      await withDatabase(options, (deps) => removeClientKey(deps, options.client, options.id));
      print(options.json, { clientId: options.client, id: options.id, removed: true }, `key set ${options.id} removed from client ${options.client}`);
    });

  const federation = client.command('federation').description("a team-bound client's federated credentials: an external issuer's assertions authenticate it (Entra workload identity federation)");

  withCommon(federation.command('add').description('trust assertions of --issuer about --subject (for a client created with --team)'))
    .requiredOption('--client <id>', 'the client')
    .requiredOption('--issuer <url>', 'the issuer, exactly as its assertions\' "iss" (https, or http on loopback)')
    .requiredOption('--subject <sub>', 'the "sub" its assertions carry')
    .option('--audience <aud>', 'the "aud" its assertions carry (default: the client id)')
    .option('--jwks-uri <url>', "where the issuer's keys are (default: the jwks_uri of its /.well-known/openid-configuration)")
    .action(async (options: WithClient & { issuer: string; subject: string; audience?: string; jwksUri?: string }) => {
      const added = await withDatabase(options, (deps) =>
        addFederation(deps, options.client, {
          issuer: options.issuer,
          subject: options.subject,
          ...(options.audience !== undefined ? { audience: options.audience } : {}),
          ...(options.jwksUri !== undefined ? { jwksUri: options.jwksUri } : {}),
        }),
      );
      print(options.json, added, `federated credential ${added.id} added to client ${added.clientId}\n${federationLine(added)}`);
    });

  withCommon(federation.command('list').description("list a client's federated credentials"))
    .requiredOption('--client <id>', 'the client')
    .action(async (options: WithClient) => {
      const list = await withDatabase(options, (deps) => listFederations(deps, options.client));
      print(options.json, list, list.length === 0 ? '(no federated credentials)' : list.map(federationLine).join('\n'));
    });

  withCommon(federation.command('remove').description('remove a federated credential; its assertions stop authenticating'))
    .requiredOption('--client <id>', 'the client')
    .requiredOption('--id <id>', 'the federated credential (see: client federation list)')
    .action(async (options: WithClient & { id: string }) => {
      await withDatabase(options, (deps) => removeFederation(deps, options.client, options.id));
      print(options.json, { clientId: options.client, id: options.id, removed: true }, `federated credential ${options.id} removed from client ${options.client}`);
    });
}
