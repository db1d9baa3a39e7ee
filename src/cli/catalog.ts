/**
 * `rollcall role | entitlement | catalog ...`: a team's catalog of roles and entitlements
 * (DESIGN.md section 12) from the command line, through the same operations as the admin API
 * (access/catalog.ts), which audit every change as the CLI's. `role add|list|remove`,
 * `entitlement type add|list|remove`, `entitlement add|list|remove`, `catalog show|put|schemas`.
 * Parses flags, calls one operation, prints. The `role` command is returned so that the
 * mapping commands (`role map|unmap|mappings`) can be added to it.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { addEntitlement, addEntitlementType, addRole, getCatalog, putCatalog, removeEntitlement, removeEntitlementType, removeRole, setCatalogSchemas } from '../access/catalog.ts';
import type { AddOutcome, CatalogView, EntryView } from '../access/catalog.ts';
import { AdminError, requireTeam } from '../admin.ts';
import { CLI_ACTOR } from '../audit/events.ts';
import type { CliHelpers, Common } from './helpers.ts';

const CHANGE = { actor: CLI_ACTOR };
const FORCE = { forceHint: 'run again with --force' };

type TeamOption = Common & { team: string };
type EntryOptions = TeamOption & { value: string; displayName: string; description?: string };

const entryInput = (o: EntryOptions) => ({ value: o.value, displayName: o.displayName, ...(o.description !== undefined ? { description: o.description } : {}) });
const entryLine = (e: EntryView): string => `${e.value}  ${e.displayName}${e.description ? `  (${e.description})` : ''}`;
const held = (r: { users: number; groups: number }): string => (r.users + r.groups > 0 ? `; taken from ${r.users} user(s), ${r.groups} group mapping(s) deleted` : '');
const outcomeWord = (o: AddOutcome): string => (o === 'unchanged' ? 'unchanged' : o);

function readCatalogFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new AdminError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AdminError(`${path} is not JSON: ${(error as Error).message}`);
  }
}

export function registerCatalogCommands(program: Command, { withCommon, withDatabase, print }: CliHelpers): { role: Command; entitlement: Command; catalog: Command } {
  const role = program.command('role').description("a team's roles (its catalog, DESIGN.md section 12): what users' SCIM roles may name");

  withCommon(role.command('add').description('add a role, or change the display name and description of the role with that value'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--value <value>', "the role's value (its SCIM id; compared exactly)")
    .requiredOption('--display-name <text>', 'its display name')
    .option('--description <text>', 'its description (at most 1,000 characters)')
    .action(async (options: EntryOptions) => {
      const added = await withDatabase(options, async (deps) => addRole(deps, await requireTeam(deps, options.team), entryInput(options), CHANGE));
      print(options.json, added, `role ${added.role.value} ${outcomeWord(added.outcome)} for team ${options.team}`);
    });

  withCommon(role.command('list').description("list a team's roles"))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: TeamOption) => {
      const catalog = await withDatabase(options, async (deps) => getCatalog(deps, await requireTeam(deps, options.team)));
      print(options.json, catalog.roles, catalog.roles.length === 0 ? 'no roles' : catalog.roles.map(entryLine).join('\n'));
    });

  withCommon(role.command('remove').description('remove a role; one users hold or groups map is refused with the counts unless --force, which takes it from them'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--value <value>', "the role's value")
    .option('--force', 'remove it from the users holding it and delete its group mappings')
    .action(async (options: TeamOption & { value: string; force?: boolean }) => {
      const removed = await withDatabase(options, async (deps) => removeRole(deps, await requireTeam(deps, options.team), options.value, CHANGE, { ...FORCE, force: options.force === true }));
      print(options.json, removed, `removed role ${removed.removed} from team ${options.team}${held(removed)}`);
    });

  const entitlement = program.command('entitlement').description("a team's entitlement types and entitlements (its catalog): what users' SCIM entitlements may name");
  const type = entitlement.command('type').description('entitlement types: License at /Licenses, ...');

  withCommon(type.command('add').description('add an entitlement type, or change the one with that name (compared case-insensitively)'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--name <name>', 'the SCIM resource type name, e.g. License')
    .requiredOption('--endpoint <path>', 'its SCIM endpoint, e.g. /Licenses')
    .option('--required', 'a user must hold at least one entitlement of the type')
    .option('--multi-valued', 'a user may hold several (the default)')
    .option('--single-valued', 'a user may hold at most one')
    .option('--description <text>', 'its description (at most 1,000 characters)')
    .action(async (options: TeamOption & { name: string; endpoint: string; required?: boolean; multiValued?: boolean; singleValued?: boolean; description?: string }) => {
      if (options.multiValued && options.singleValued) throw new AdminError('--multi-valued and --single-valued exclude each other');
      const input = { name: options.name, endpoint: options.endpoint, required: options.required === true, multiValued: options.singleValued !== true, ...(options.description !== undefined ? { description: options.description } : {}) };
      const added = await withDatabase(options, async (deps) => addEntitlementType(deps, await requireTeam(deps, options.team), input, CHANGE));
      print(options.json, added, `entitlement type ${added.type.name} at ${added.type.endpoint} ${outcomeWord(added.outcome)} for team ${options.team}`);
    });

  withCommon(type.command('list').description("list a team's entitlement types"))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: TeamOption) => {
      const catalog = await withDatabase(options, async (deps) => getCatalog(deps, await requireTeam(deps, options.team)));
      const types = catalog.entitlementTypes.map(({ entitlements, ...t }) => ({ ...t, entitlements: entitlements.length }));
      print(
        options.json,
        types,
        types.length === 0 ? 'no entitlement types' : types.map((t) => `${t.name}  ${t.endpoint}  ${t.required ? 'required' : 'optional'}  ${t.multiValued ? 'multi-valued' : 'single-valued'}  ${t.entitlements} entitlement(s)${t.description ? `  (${t.description})` : ''}`).join('\n'),
      );
    });

  withCommon(type.command('remove').description('remove an entitlement type and its entitlements; ones users hold or groups map are refused with the counts unless --force'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--name <name>', 'the type name')
    .option('--force', 'remove its entitlements from the users holding them and delete their group mappings')
    .action(async (options: TeamOption & { name: string; force?: boolean }) => {
      const removed = await withDatabase(options, async (deps) => removeEntitlementType(deps, await requireTeam(deps, options.team), options.name, CHANGE, { ...FORCE, force: options.force === true }));
      print(options.json, removed, `removed entitlement type ${removed.removed} and its ${removed.entitlements} entitlement(s) from team ${options.team}${held(removed)}`);
    });

  withCommon(entitlement.command('add').description('add an entitlement of a type, or change the display name and description of the one with that value; one of another type moves to this one (held or mapped: only with --force)'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--type <name>', 'its entitlement type')
    .requiredOption('--value <value>', "the entitlement's value (its SCIM id; unique across every type)")
    .requiredOption('--display-name <text>', 'its display name')
    .option('--description <text>', 'its description (at most 1,000 characters)')
    .option('--force', 'moving it from another type: remove it from the users holding it and delete its group mappings')
    .action(async (options: EntryOptions & { type: string; force?: boolean }) => {
      const added = await withDatabase(options, async (deps) => addEntitlement(deps, await requireTeam(deps, options.team), options.type, entryInput(options), CHANGE, { ...FORCE, force: options.force === true }));
      print(options.json, added, `entitlement ${added.entitlement.value} of type ${added.entitlement.type} ${outcomeWord(added.outcome)} for team ${options.team}`);
    });

  withCommon(entitlement.command('list').description("list a team's entitlements"))
    .requiredOption('--team <name>', 'team name')
    .option('--type <name>', 'only those of this type')
    .action(async (options: TeamOption & { type?: string }) => {
      const catalog = await withDatabase(options, async (deps) => getCatalog(deps, await requireTeam(deps, options.team)));
      const types = catalog.entitlementTypes.filter((t) => options.type === undefined || t.name.toLowerCase() === options.type.toLowerCase());
      if (options.type !== undefined && types.length === 0) throw new AdminError(`team ${options.team} has no entitlement type "${options.type}"`);
      const rows = types.flatMap((t) => t.entitlements.map((e) => ({ type: t.name, ...e })));
      print(options.json, rows, rows.length === 0 ? 'no entitlements' : rows.map((r) => `${r.type}  ${entryLine(r)}`).join('\n'));
    });

  withCommon(entitlement.command('remove').description('remove an entitlement; one users hold or groups map is refused with the counts unless --force, which takes it from them'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--type <name>', 'its entitlement type')
    .requiredOption('--value <value>', "the entitlement's value")
    .option('--force', 'remove it from the users holding it and delete its group mappings')
    .action(async (options: TeamOption & { type: string; value: string; force?: boolean }) => {
      const removed = await withDatabase(options, async (deps) => removeEntitlement(deps, await requireTeam(deps, options.team), options.type, options.value, CHANGE, { ...FORCE, force: options.force === true }));
      print(options.json, removed, `removed entitlement ${removed.removed} from team ${options.team}${held(removed)}`);
    });

  const catalog = program.command('catalog').description("a team's whole catalog of roles and entitlements, as the admin API's /v2/admin/Catalog shows and takes it");

  withCommon(catalog.command('show').description('print the catalog as JSON (what catalog put and PUT /v2/admin/Catalog take)'))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: TeamOption) => {
      const view: CatalogView = await withDatabase(options, async (deps) => getCatalog(deps, await requireTeam(deps, options.team)));
      print(true, view, '');
    });

  withCommon(catalog.command('put').description('replace the catalog with a JSON file: what it names is added or changed, what it omits removed (held ones only with --force); the same file again changes nothing'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--file <path>', 'the catalog as JSON: {"schemas"?, "roles", "entitlementTypes"}')
    .option('--force', 'remove entries users hold or groups map, from them')
    .action(async (options: TeamOption & { file: string; force?: boolean }) => {
      const body = readCatalogFile(options.file);
      const result = await withDatabase(options, async (deps) => putCatalog(deps, await requireTeam(deps, options.team), body, CHANGE, { ...FORCE, force: options.force === true }));
      print(options.json, result, `catalog of team ${options.team}: ${result.added} added, ${result.updated} updated, ${result.removed} removed`);
    });

  withCommon(catalog.command('schemas').description("which schemas the team's discovery shows for its catalog: okta (Okta's Role and Entitlement schemas, the default) or ietf (the IETF draft's)"))
    .requiredOption('--team <name>', 'team name')
    .argument('<schemas>', 'okta or ietf')
    .action(async (schemas: string, options: TeamOption) => {
      const set = await withDatabase(options, async (deps) => setCatalogSchemas(deps, await requireTeam(deps, options.team), schemas, CHANGE));
      print(options.json, set, `team ${options.team}'s catalog discovery shows the ${set.schemas} schemas${set.changed ? '' : ' (unchanged)'}`);
    });

  return { role, entitlement, catalog };
}
