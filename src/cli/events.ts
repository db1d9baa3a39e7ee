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
import { MAX_OVERLAP_SECONDS, rotateWebhookSecret, WEBHOOK_SECRETS } from '../events/webhook-secrets.ts';
import { masterKey } from '../keys/master.ts';
import { KeyStore } from '../keys/store.ts';
import type { SecretBox } from '../keys/sealed.ts';
import type { Config } from '../config.ts';

/**
 * The box webhook secrets are sealed in, under this database's master key (SECRET_KEY, or the
 * key file beside an SQLite database); opening the key store first proves it is the key the
 * servers use, so a secret sealed now is one they can open.
 */
async function webhookBox(deps: AdminDeps, config: Config): Promise<SecretBox> {
  const master = masterKey({ secretKey: config.secretKey, database: { engine: deps.storage.hooks.name, sqlitePath: deps.storage.sqlitePath } });
  return (await KeyStore.open(deps.storage.db, deps.clock, master)).box(WEBHOOK_SECRETS);
}

const formatArg = (v: string): 'set' | 'webhook' => {
  if (v !== 'set' && v !== 'webhook') throw new InvalidArgumentError('"set" (RFC 8935 SETs) or "webhook" (Standard Webhooks JSON)');
  return v;
};

const overlapArg = (v: string): number => {
  if (!/^\d{1,7}$/.test(v) || Number(v) > MAX_OVERLAP_SECONDS) throw new InvalidArgumentError(`a number of seconds from 0 to ${MAX_OVERLAP_SECONDS} (7 days)`);
  return Number(v);
};


const seqArg = (v: string): number => {
  if (!/^\d{1,15}$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('a sequence number (1 or more)');
  return Number(v);
};

const line = (s: SubscriptionView): string =>
  [
    s.id,
    s.method,
    ...(s.format === 'webhook' ? ['webhook'] : []),
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
    .option('--events <names...>', 'only these events: create, put, patch, delete, activate, deactivate, asyncresp (or their URIs)')
    .option('--full', 'the :full variants (the changed resource, never a password) instead of :notice')
    .option('--format <format>', 'what a push sends: set (RFC 8935 SETs, the default) or webhook (Standard Webhooks JSON signed with a whsec_ secret, printed once)', formatArg)
    .action(async (options: Common & { team: string; url?: string; poll?: boolean; events?: string[]; full?: boolean; format?: 'set' | 'webhook' }) => {
      const created = await withDatabase(options, async (deps, config) =>
        createSubscription({ ...deps, receivers: new ReceiverPolicy(config.allowReceivers), ...(options.format === 'webhook' && !options.poll ? { box: await webhookBox(deps, config) } : {}) }, await requireTeam(deps, options.team), {
          method: options.poll ? 'poll' : 'push',
          ...(options.url !== undefined ? { url: options.url } : {}),
          ...(options.events ? { events: options.events } : {}),
          full: options.full === true,
          ...(options.format ? { format: options.format } : {}),
        }),
      );
      print(
        options.json,
        created,
        [
          line(created.subscription),
          ...(created.pollToken ? [`poll token: ${created.pollToken}`, '(the token is shown only now)'] : []),
          ...(created.secret ? [`webhook secret: ${created.secret}`, '(the secret is shown only now: receivers verify webhook-signature with it)'] : []),
        ].join('\n'),
      );
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

  withCommon(events.command('rotate-secret').description("give a webhook subscription a new signing secret (printed once); the previous one keeps signing beside it for the overlap").argument('<id>'))
    .requiredOption('--team <name>', 'team name')
    .option('--overlap <seconds>', 'how long the previous secret keeps signing (default 86400, at most 604800)', overlapArg)
    .action(async (id: string, options: Common & { team: string; overlap?: number }) => {
      const rotated = await withDatabase(options, async (deps, config) =>
        rotateWebhookSecret({ ...deps, box: await webhookBox(deps, config) }, (await requireTeam(deps, options.team)).id, id, options.overlap),
      );
      print(
        options.json,
        rotated,
        [line(rotated.subscription), `webhook secret: ${rotated.secret}`, `(the secret is shown only now; the previous one also signs until ${rotated.previousValidUntil})`].join('\n'),
      );
    });

  withCommon(events.command('replay').description('deliver again every event from a sequence number on, in order').argument('<id>'))
    .requiredOption('--team <name>', 'team name')
    .requiredOption('--from <seq>', 'first sequence number to deliver again', seqArg)
    .action(async (id: string, options: Common & { team: string; from: number }) => {
      const view = await withDatabase(options, async (deps) => replaySubscription(deps, (await requireTeam(deps, options.team)).id, id, options.from));
      print(options.json, view, line(view));
    });
}
