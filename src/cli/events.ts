/**
 * `rollcall events ...`: subscribe, list, show, pause, resume, delete and
 * replay a team's event subscriptions. Its own command group, wired into the program by
 * cli/index.ts with that file's helpers; every command calls one function of
 * events/subscriptions.ts, which the HTTP API shares.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { requireTeam } from '../admin.ts';
import type { AdminDeps } from '../admin.ts';
import type { CliHelpers, Common } from './helpers.ts';
import { createSubscription, getSubscription, listSubscriptions, pauseSubscription, removeSubscription, replaySubscription, resumeSubscription } from '../events/subscriptions.ts';
import type { SubscriptionView } from '../events/subscriptions.ts';
import { ReceiverPolicy } from '../events/receivers.ts';


const seqArg = (v: string): number => {
  if (!/^\d{1,15}$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('a sequence number (1 or more)');
  return Number(v);
};

const line = (s: SubscriptionView): string =>
  [
    s.id,
    s.method,
    s.url ?? '(poll)',
    s.state,
    `cursor ${s.cursor}`,
    s.events ? `events ${s.events.join(',')}` : 'all events',
    s.full ? 'full' : 'notice',
    ...(s.failures > 0 ? [`${s.failures} failures since ${s.failingSince}`, `next ${s.nextAttemptAt}`] : []),
    ...(s.pausedReason ? [`(${s.pausedReason})`] : []),
  ].join('  ');

export function registerEventCommands(program: Command, { withCommon, withDatabase, print }: CliHelpers): void {
  const events = program.command('events').description("a team's RFC 9967 event subscriptions (push to a receiver URL, or poll)");

  withCommon(events.command('subscribe').description('subscribe a receiver to the team\'s events, from now on'))
    .requiredOption('--team <name>', 'team name')
    .option('--url <url>', 'receiver URL (https, or http on loopback); SETs are POSTed to it (RFC 8935); loopback, private and link-local addresses only when ALLOW_RECEIVERS names them')
    .option('--poll', 'a poll subscription (RFC 8936) instead: prints the credential the receiver polls with, once')
    .option('--events <names...>', 'only these events: create, put, patch, delete, activate, deactivate (or their URIs)')
    .option('--full', 'the :full variants (the changed resource, never a password) instead of :notice')
    .action(async (options: Common & { team: string; url?: string; poll?: boolean; events?: string[]; full?: boolean }) => {
      const created = await withDatabase(options, async (deps, config) =>
        createSubscription({ ...deps, receivers: new ReceiverPolicy(config.allowReceivers) }, await requireTeam(deps, options.team), {
          method: options.poll ? 'poll' : 'push',
          ...(options.url !== undefined ? { url: options.url } : {}),
          ...(options.events ? { events: options.events } : {}),
          full: options.full === true,
        }),
      );
      print(options.json, created, [line(created.subscription), ...(created.pollToken ? [`poll token: ${created.pollToken}`, '(the token is shown only now)'] : [])].join('\n'));
    });

  withCommon(events.command('list').description("list a team's subscriptions"))
    .requiredOption('--team <name>', 'team name')
    .action(async (options: Common & { team: string }) => {
      const list = await withDatabase(options, async (deps) => listSubscriptions(deps, (await requireTeam(deps, options.team)).id));
      print(options.json, list, list.length === 0 ? '(no subscriptions)' : list.map(line).join('\n'));
    });

  withCommon(events.command('show').description('one subscription with its latest delivery attempts').argument('<id>'))
    .requiredOption('--team <name>', 'team name')
    .action(async (id: string, options: Common & { team: string }) => {
      const view = await withDatabase(options, async (deps) => getSubscription(deps, (await requireTeam(deps, options.team)).id, id));
      const attempts = (view.attempts ?? []).map((a) => `  ${a.at}  seq ${a.seq}  ${a.status ?? '-'}  ${a.latencyMs} ms${a.error ? `  ${a.error}` : ''}`);
      print(options.json, view, [line(view), ...attempts].join('\n'));
    });

  const simple = (name: string, description: string, run: (deps: AdminDeps, teamId: string, id: string) => Promise<SubscriptionView | undefined>) =>
    withCommon(events.command(name).description(description).argument('<id>'))
      .requiredOption('--team <name>', 'team name')
      .action(async (id: string, options: Common & { team: string }) => {
        const view = await withDatabase(options, async (deps) => run(deps, (await requireTeam(deps, options.team)).id, id));
        print(options.json, view ?? { deleted: id }, view ? line(view) : `deleted ${id}`);
      });
  simple('pause', 'stop delivering until resumed', (deps, team, id) => pauseSubscription(deps, team, id));
  simple('resume', 'deliver again, now, with a fresh retry budget', (deps, team, id) => resumeSubscription(deps, team, id));
  simple('delete', 'delete the subscription and its delivery log', async (deps, team, id) => {
    await removeSubscription(deps, team, id);
    return undefined;
  });

  withCommon(events.command('replay').description('deliver again every event from a sequence number on, in order').argument('<id>'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--from <seq>', 'first sequence number to deliver again', seqArg)
    .action(async (id: string, options: Common & { team: string; from: number }) => {
      const view = await withDatabase(options, async (deps) => replaySubscription(deps, (await requireTeam(deps, options.team)).id, id, options.from));
      print(options.json, view, line(view));
    });
}
