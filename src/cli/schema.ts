/**
 * `rollcall schema add | list | show | remove`: a team's schema extensions from the
 * command line, through the same operations as the admin API (scim/team-schemas.ts). FILE.json
 * holds an RFC 7643 section 7 schema (or `{"resourceType", "required", "schema"}` as the admin
 * API takes it). Parses flags, calls one operation, prints.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { AdminError, requireTeam } from '../admin.ts';
import { CLI_ACTOR } from '../audit/events.ts';
import type { CliHelpers, Common } from './helpers.ts';
import { buildExtensionIndexes } from '../scim/index-builder.ts';
import { addSchema, listSchemas, removeSchema, showSchema } from '../scim/team-schemas.ts';


function readSchemaFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new AdminError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new AdminError(`${path} is not a JSON object: ${(error as Error).message}`);
  }
}

const resourceTypeOption = (value: string): 'User' | 'Group' => {
  const v = value.toLowerCase();
  if (v === 'user' || v === 'users') return 'User';
  if (v === 'group' || v === 'groups') return 'Group';
  throw new InvalidArgumentError('--resource-type is User or Group');
};

export function registerSchemaCommands(program: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const schema = program.command('schema').description("a team's schema extensions (RFC 7643 section 7): custom attributes of Users and Groups");

  withCommon(schema.command('add').description('register an extension schema, or a new definition of one (attributes may be added or left out, never change type); single-valued string attributes declared "uniqueness": "server" get an index that makes an eq filter on them fast at any size (built after the schema is saved, before the command ends: seconds per million resources, without blocking writes; removed with the attribute). Refused over the team\'s budgets extensions, extension.attributes, extension.bytes, indexed.attributes and discovery.bytes'))
    .requiredOption('--team <name>', 'team name')
    .option('--resource-type <type>', 'User (default) or Group', resourceTypeOption)
    .option('--required', 'resources of the type must carry the extension')
    .argument('<file>', 'the schema as JSON (RFC 7643 section 7)')
    .action(async (file: string, options: Common & { team: string; resourceType?: 'User' | 'Group'; required?: boolean }) => {
      const doc = readSchemaFile(file);
      const wrapped = doc.schema !== undefined && typeof doc.schema === 'object';
      const input = wrapped
        ? { resourceType: options.resourceType ?? doc.resourceType ?? 'User', required: options.required ?? doc.required, schema: doc.schema }
        : { resourceType: options.resourceType ?? 'User', required: options.required === true, schema: doc };
      // The CLI builds the indexes the change wants itself (a server builds them too, at its next
      // start or schema change): the command ends when the attribute's filters are fast.
      const view = await withDatabase(options, async (deps) => {
        const team = await requireTeam(deps, options.team);
        const added = await addSchema(deps, team, input, { actor: CLI_ACTOR });
        await buildExtensionIndexes(deps.storage);
        return (await listSchemas(deps, team)).find((v) => v.id === added.id) ?? added;
      });
      print(options.json, view, `${view.id}: ${view.attributes} attribute(s) on ${view.resourceType}${view.required ? ' (required)' : ''} for team ${options.team}${view.indexed.length > 0 ? `; indexed for eq filters: ${view.indexed.join(', ')}` : ''}`);
    });

  withCommon(schema.command('list').description("list a team's extension schemas"))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: Common & { team: string }) => {
      const views = await withDatabase(options, async (deps) => listSchemas(deps, await requireTeam(deps, options.team)));
      print(options.json, views, views.length === 0 ? 'no extension schemas' : views.map((v) => `${v.id}  ${v.resourceType}${v.required ? ' required' : ''}  ${v.attributes} attribute(s)  updated ${v.updated}`).join('\n'));
    });

  withCommon(schema.command('show').description('print an extension schema as /Schemas shows it to the team'))
    .requiredOption('--team <name>', 'team name')
    .argument('<id>', 'the schema URN')
    .action(async (id: string, options: Common & { team: string }) => {
      const doc = await withDatabase(options, async (deps) => showSchema(deps, await requireTeam(deps, options.team), id, deps.baseUrl));
      print(true, doc, '');
    });

  withCommon(schema.command('remove').description("remove an extension schema: its values stay stored, hidden, and return if it is added again; its attributes' indexes are dropped"))
    .requiredOption('--team <name>', 'team name')
    .argument('<id>', 'the schema URN')
    .action(async (id: string, options: Common & { team: string }) => {
      await withDatabase(options, async (deps) => {
        await removeSchema(deps, await requireTeam(deps, options.team), id, { actor: CLI_ACTOR });
        await buildExtensionIndexes(deps.storage);
      });
      print(options.json, { removed: id }, `removed ${id} from team ${options.team} (its values stay stored, hidden)`);
    });
}
