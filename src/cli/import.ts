/**
 * `rollcall import --team NAME FILE`: users or groups from a CSV or JSONL file into a team,
 * through the SCIM Bulk machinery in process, with the CLI as the actor (src/import/run.ts does
 * the work). Progress on stderr, the summary on stdout, refused rows to a file. Exit codes: 0
 * when every row was imported, 1 when some were refused (they are in the refused file), 2 when
 * the file or an option is unusable (the message says what was imported before it), 3 when the
 * server failed (a database gone): the run stops at once, saying which rows were imported.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { Command, CommanderError } from 'commander';
import { AdminError, contextFor, requireTeam } from '../admin.ts';
import { formatOfPath, importFile } from '../import/run.ts';
import type { ImportFormat, ImportSummary } from '../import/run.ts';
import { progressOn } from '../import/progress.ts';
import { ImportFileError, ImportServerError } from '../import/rows.ts';
import type { ImportKind } from '../import/rows.ts';
import { loadTeamTypes } from '../scim/team-schemas.ts';
import type { CliHelpers, Common } from './helpers.ts';

/** Exit code of an unusable file or option. */
const BAD_INPUT = 2;
/** Exit code of a server failure no SCIM rule names: the run stopped, a later run goes on from where it stopped. */
const SERVER_FAILED = 3;

const kindOption = (value: string): ImportKind => {
  const v = value.toLowerCase();
  if (v === 'users' || v === 'user') return 'users';
  if (v === 'groups' || v === 'group') return 'groups';
  throw new InvalidArgumentError('--kind is users or groups');
};

const formatOption = (value: string): ImportFormat => {
  const v = value.toLowerCase();
  if (v === 'csv' || v === 'jsonl') return v;
  throw new InvalidArgumentError('--format is csv or jsonl');
};

const HELP = `
CSV: a header line, then a row per resource (RFC 4180: quote a field holding commas, quotes or
line breaks, doubling its quotes). Users: userName (required), externalId, givenName, familyName,
displayName, email (the work e-mail, primary), phone (the work number), title, active (true or
false). Groups: displayName (required), externalId, members (userNames separated by ";").
Both: urn:...:attribute columns for the team's extension attributes. An empty field leaves the
attribute as it is.
JSONL: a SCIM User or Group resource per line; a group's members[].value are user ids, or
members may name a user by userName (or display).

A user whose userName the team has (a group: its displayName) is updated: the attributes the
row gives replace the stored ones, the others stay; a row that changes nothing is counted as
unchanged. Running the same file again, whole or after an interruption, creates no duplicates.

Exit status:
  0  every row imported
  1  some rows refused (see the refused file)
  2  the file or an option cannot be used (the message says which rows, if any, were imported
     before the bad line)
  3  the server failed (a database gone): the import stopped; the message says which rows were
     imported; run it again once the server is back`;

const summaryText = (s: ImportSummary): string =>
  [
    `created ${s.created}, updated ${s.updated}, unchanged ${s.unchanged}, refused ${s.refused}`,
    ...(s.refusedFile !== undefined ? [`refused rows and their errors: ${s.refusedFile}`] : []),
  ].join('\n');

export function registerImportCommand(program: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const command = withCommon(program.command('import').description("import users or groups from a CSV or JSONL file into a team, through SCIM Bulk requests of up to 1,000 operations; exits 1 when some rows were refused, 2 when the file or an option cannot be used, 3 when the server failed"))
    .requiredOption('--team <name>', 'team name')
    .option('--kind <kind>', 'users or groups (default: read from the CSV header or the first JSONL resource)', kindOption)
    .option('--format <format>', 'csv or jsonl (default: from the file name, .csv or .jsonl / .ndjson)', formatOption)
    .option('--refused <file>', 'where refused rows go, one JSON object per line: {line, row, status, scimType, detail} (default: FILE.refused.jsonl)')
    .argument('<file>', 'the CSV or JSONL file')
    .addHelpText('after', HELP);
  // Commander's own refusals (a missing --team, a bad --kind) exit 2 like a bad file.
  command.exitOverride((error: CommanderError) => {
    if (error.exitCode !== 0) error.exitCode = BAD_INPUT;
    throw error;
  });
  command.action(async (file: string, options: Common & { team: string; kind?: ImportKind; format?: ImportFormat; refused?: string }) => {
    try {
      const format = options.format ?? formatOfPath(file);
      if (!format) throw new ImportFileError(`cannot tell the format of ${file} from its name: give --format csv or --format jsonl`);
      const refusedPath = options.refused ?? `${file}.refused.jsonl`;
      if (resolve(refusedPath) === resolve(file)) throw new ImportFileError('--refused names the file being imported');
      const summary = await withDatabase(options, async (deps) => {
        const team = await requireTeam(deps, options.team);
        // The team's extensions, so extension columns and attributes are read and validated as its requests are;
        // one request id for the whole run, so its audit rows and events can be found together.
        const ctx = { ...(await contextFor(deps, team)), types: await loadTeamTypes(deps.storage.db, team.id), requestId: `import-${randomUUID()}` };
        return importFile(ctx, file, {
          format,
          refusedPath,
          ...(options.kind !== undefined ? { kind: options.kind } : {}),
          progress: (total) => progressOn(process.stderr, total),
        });
      });
      print(options.json, summary, summaryText(summary));
      if (summary.refused > 0) process.exitCode = 1;
    } catch (error) {
      if (error instanceof ImportServerError) {
        process.stderr.write(`rollcall: ${error.message}\n`);
        process.exitCode = SERVER_FAILED;
        return;
      }
      if (!(error instanceof ImportFileError) && !(error instanceof AdminError)) throw error;
      process.stderr.write(`rollcall: ${error.message}\n`);
      process.exitCode = BAD_INPUT;
    }
  });
}
