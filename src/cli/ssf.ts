/**
 * `rollcall ssf streams --team NAME`: the team's SSF 1.0 streams as their receivers see them
 * (events/ssf/streams.ts, the same views as GET /v2/ssf/stream and /v2/ssf/status), with their
 * status. Streams are created and changed by their receivers through the SSF API; the operator
 * resumes, replays or deletes one as any subscription (`rollcall events ...`).
 */
import type { Command } from 'commander';
import { requireTeam } from '../admin.ts';
import { listStreams, readStatus } from '../events/ssf/streams.ts';
import type { CliHelpers, Common } from './helpers.ts';

export function registerSsfCommands(program: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const ssf = program.command('ssf').description("a team's Shared Signals (SSF 1.0) streams");
  withCommon(ssf.command('streams').description("list a team's SSF streams with their status"))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: Common & { team: string }) => {
      const streams = await withDatabase(options, async (deps) => {
        const team = await requireTeam(deps, options.team);
        const read = { storage: deps.storage, issuer: deps.baseUrl };
        const views = await listStreams(read, team.id);
        return Promise.all(views.map(async (view) => ({ ...view, status: await readStatus(read, team.id, view.stream_id) })));
      });
      const line = (s: (typeof streams)[number]) =>
        `${s.stream_id}  ${s.status.status}${s.status.reason ? ` (${s.status.reason})` : ''}  ${s.delivery.method === 'urn:ietf:rfc:8935' ? 'push' : 'poll'} ${s.delivery.endpoint_url}  ${s.events_delivered.length} event types${s.description ? `  "${s.description}"` : ''}`;
      print(options.json, streams, streams.length === 0 ? '(no streams)' : streams.map(line).join('\n'));
    });
}
