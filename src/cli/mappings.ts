/**
 * `rollcall role map | unmap | mappings`: a team's groups mapped to roles and entitlements from
 * the command line, through the same operations as the admin API (src/access/mappings.ts). The
 * subcommands are added to the `role` command index.ts hands over (the catalog's own `role add |
 * list | remove` live beside them under the same command). Parses flags, calls one operation,
 * prints.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { listMappings, mapGroup, unmapGroup } from '../access/mappings.ts';
import type { MappingInput, MappingView } from '../access/mappings.ts';
import { AdminError, requireTeam } from '../admin.ts';
import { CLI_ACTOR } from '../audit/events.ts';
import type { CliHelpers, Common } from './helpers.ts';

interface TargetOptions extends Common {
  team: string;
  group: string;
  role?: string;
  entitlement?: { type: string; value: string };
}

/** `--entitlement TYPE:VALUE` (a type name holds no colon; the value may). */
const entitlementOption = (raw: string): { type: string; value: string } => {
  const at = raw.indexOf(':');
  if (at <= 0 || at === raw.length - 1) throw new InvalidArgumentError('--entitlement takes TYPE:VALUE, e.g. License:e5');
  return { type: raw.slice(0, at), value: raw.slice(at + 1) };
};

/** The mapping the flags name: exactly one of --role and --entitlement. */
function targetOf(options: TargetOptions): MappingInput {
  if ((options.role === undefined) === (options.entitlement === undefined)) throw new AdminError('give exactly one of --role VALUE and --entitlement TYPE:VALUE');
  return options.role !== undefined
    ? { group: options.group, kind: 'role', value: options.role }
    : { group: options.group, kind: 'entitlement', type: options.entitlement!.type, value: options.entitlement!.value };
}

/** `role admin` / `entitlement License:e5`, as the lines name a mapped entry. */
const entryName = (m: Pick<MappingView, 'kind' | 'type' | 'value'>): string => (m.kind === 'role' ? `role ${m.value}` : `entitlement ${m.type}:${m.value}`);

const line = (m: MappingView): string => `${m.group.id}  ${m.group.displayName}  ${entryName(m)}${m.display !== undefined ? ` (${m.display})` : ''}  mapped ${m.created}`;

/** Adds `map`, `unmap` and `mappings` to the given `role` command. */
export function registerMappingCommands(role: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const target = (command: Command): Command =>
    withCommon(command)
      .requiredOption('--team <name>', 'team name')
      .requiredOption('--group <id>', "the group's id")
      .option('--role <value>', 'a role of the team\'s catalog')
      .option('--entitlement <type:value>', 'an entitlement of the team\'s catalog, with its type (e.g. License:e5)', entitlementOption);

  target(role.command('map').description("map a group to a role or an entitlement of the team's catalog: the group's members hold it (their effective access, GET /v2/access/users/{id}); one audited event, whatever the group's size. Mapping again what is mapped changes nothing. Refused over the team's budget access.mappings"))
    .action(async (options: TargetOptions) => {
      const input = targetOf(options);
      const { mapping, created } = await withDatabase(options, async (deps) => mapGroup(deps, await requireTeam(deps, options.team), input, { actor: CLI_ACTOR }));
      print(options.json, { ...mapping, created }, `${created ? 'mapped' : 'already mapped:'} group ${mapping.group.displayName} (${mapping.group.id}) to ${entryName(mapping)} for team ${options.team}`);
    });

  target(role.command('unmap').description('remove the mapping of a group to a role or an entitlement (audited, one event)'))
    .action(async (options: TargetOptions) => {
      const input = targetOf(options);
      const removed = await withDatabase(options, async (deps) => unmapGroup(deps, await requireTeam(deps, options.team), input, { actor: CLI_ACTOR }));
      print(options.json, { removed }, `unmapped group ${removed.group.displayName} (${removed.group.id}) from ${entryName(removed)} for team ${options.team}`);
    });

  withCommon(role.command('mappings').description("list the team's groups mapped to roles and entitlements"))
    .requiredOption('--team <name>', 'team name')
    .option('--group <id>', "only this group's mappings")
    .action(async (options: Common & { team: string; group?: string }) => {
      const views = await withDatabase(options, async (deps) => listMappings(deps, await requireTeam(deps, options.team), options.group !== undefined ? { group: options.group } : {}));
      print(options.json, views, views.length === 0 ? 'no group mappings' : views.map(line).join('\n'));
    });
}
