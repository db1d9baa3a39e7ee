/**
 * The console's Events routes: the subscriptions page, one subscription with its
 * delivery log, and the actions (add, pause, resume, replay, delete), each a CSRF-protected POST
 * answered by a redirect to the page that shows the result (post/redirect/get). A refused form
 * (bad receiver URL, replay outside the feed) shows the page again with the error, status 400
 * (410 for events already pruned); another team's subscription is a 404. A new webhook's
 * secret goes to the redirected subscription page through handoff.ts (a signed, HttpOnly,
 * SameSite=Strict cookie scoped to that page, bound to the admin, 60 seconds), shown once: a
 * reload shows it no more and adds nothing. Registered by
 * console-pages.ts with the console kit (kit.ts), so the session, CSRF, headers and error page
 * are those of every console page.
 * Replay and delete ask first: their confirmation page says how many events are sent again or
 * lost, and only its form (with `confirmed`) acts.
 * Handlers parse the form, call one function of console/events.ts, and reply; no SQL here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleInputError } from '../../console/directory.ts';
import { createFromConsole, deleteFromConsole, eventSubscriptions, pauseFromConsole, replayFromConsole, replayPreview, resumeFromConsole, subscriptionDetail } from '../../console/events.ts';
import type { SubscriptionForm } from '../../console/events.ts';
import { deleteConfirmBody, eventsBody, replayConfirmBody, subscriptionBody } from '../../console/events-views.ts';
import type { ScimContext } from '../../scim/context.ts';
import { OverBudget } from '../../budgets.ts';
import { scimErrorOf } from '../../scim/errors.ts';
import type { Metrics } from '../metrics.ts';
import { handOnce, takeOnce } from './handoff.ts';
import { field as text } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

type Params = { Params: { id: string } };

const NEW_WEBHOOK_SECRET_COOKIE = 'rollcall_console_new_webhook_secret';

/** A form field that may repeat (checkboxes): its string values. */
const texts = (form: unknown, name: string): string[] => {
  const value = (form as Record<string, unknown> | undefined)?.[name];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
};

const DONE: Record<string, string> = {
  created: 'Subscription added: it receives every change from now on.',
  paused: 'Paused: nothing is sent until it is resumed; events keep accumulating.',
  resumed: 'Resumed: delivery starts again now.',
  replayed: 'Replay started: the events from that seq on are delivered again, in order.',
  'replayed-paused': 'Replay set: the events from that seq on are delivered again, in order, once the subscription is resumed.',
  deleted: 'Subscription deleted.',
};

/**
 * The refusals a form can meet, shown on the page (a budget's counted as the error hook would
 * count it); anything else goes to the console's error page.
 */
function refusal(error: unknown, metrics?: Pick<Metrics, 'budgetRefused'>): { status: number; message: string } | undefined {
  if (error instanceof OverBudget) metrics?.budgetRefused(error.teamId, error.budget);
  if (error instanceof ConsoleInputError) return { status: 400, message: error.message };
  const known = scimErrorOf(error);
  if (known && (known.status === 400 || known.status === 410)) return { status: known.status, message: known.message };
  return undefined;
}

export async function consoleEventRoutes(app: FastifyInstance, kit: ConsoleKit): Promise<void> {
  const post = { preHandler: [app.csrfProtection, kit.signedIn] };
  const csrf = (reply: FastifyReply) => reply.generateCsrf();
  const seeOther = kit.shell.seeOther;
  const scim = (request: FastifyRequest): ScimContext => kit.signed(request).scim;
  const show = (request: FastifyRequest, reply: FastifyReply, title: string, body: string, status?: number) => kit.show(request, reply, 'events', title, body, status);
  const detailPath = (id: string) => `/console/events/subscriptions/${encodeURIComponent(id)}`;
  const secure = kit.baseUrl.startsWith('https:');
  const userId = (request: FastifyRequest) => kit.signed(request).user.id;

  const list = async (request: FastifyRequest, reply: FastifyReply, form?: SubscriptionForm, error?: { status: number; message: string }) => {
    const { feed, subscriptions } = await eventSubscriptions(scim(request));
    const message = DONE[text(request.query, 'done')];
    return show(request, reply, 'Events', eventsBody(csrf(reply), feed, subscriptions, form, error ? undefined : message, error?.message), error?.status ?? 200);
  };

  const detail = async (request: FastifyRequest<Params>, reply: FastifyReply, error?: { status: number; message: string }) => {
    const id = request.params.id;
    const before = error ? '' : text(request.query, 'before');
    let shown;
    try {
      shown = await subscriptionDetail(scim(request), id, before);
    } catch (failure) {
      const refused = refusal(failure);
      if (!refused || before === '') throw failure;
      return detail(request, reply, refused);
    }
    const message = error ? undefined : DONE[text(request.query, 'done')];
    // The webhook secret the add handed to this page, shown this once (the take clears it).
    const handed = error ? undefined : takeOnce(request, reply, NEW_WEBHOOK_SECRET_COOKIE, detailPath(id), userId(request));
    const secret = handed?.s === undefined || handed.id !== shown.subscription.id || typeof handed.s !== 'string' ? undefined : handed.s;
    return show(request, reply, 'Event subscription', subscriptionBody(csrf(reply), shown, message, error?.message, secret), error?.status ?? 200);
  };

  /** Runs a subscription's action; a refusal is shown on its page, success redirects there. */
  const act = (done: string, run: (ctx: ScimContext, id: string, body: unknown) => Promise<{ state: string } | void>) => async (request: FastifyRequest<Params>, reply: FastifyReply) => {
    let shown = done;
    try {
      const after = await run(scim(request), request.params.id, request.body);
      // A replay of a paused subscription waits for the resume: say so.
      if (done === 'replayed' && after?.state === 'paused') shown = 'replayed-paused';
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      return detail(request, reply, refused);
    }
    return seeOther(reply, done === 'deleted' ? '/console/events?done=deleted' : `${detailPath(request.params.id)}?done=${shown}`);
  };

  app.get('/console/events', { preHandler: kit.signedIn }, async (request, reply) => list(request, reply));

  app.post('/console/events/subscriptions', post, async (request, reply) => {
    const form: SubscriptionForm = { url: text(request.body, 'url'), events: texts(request.body, 'events'), full: text(request.body, 'full') !== '', format: text(request.body, 'format') };
    let created;
    try {
      created = await createFromConsole(scim(request), form, kit.receivers, kit.webhookBox);
    } catch (error) {
      const refused = refusal(error, kit.metrics);
      if (!refused) throw error;
      return list(request, reply, form, refused);
    }
    // A webhook's secret rides to the redirected page in a one-time cookie (post/redirect/get).
    const path = detailPath(created.subscription.id);
    if (created.secret !== undefined) handOnce(reply, NEW_WEBHOOK_SECRET_COOKIE, path, userId(request), { id: created.subscription.id, s: created.secret }, secure);
    return seeOther(reply, `${detailPath(created.subscription.id)}?done=created`);
  });

  app.get<Params>('/console/events/subscriptions/:id', { preHandler: kit.signedIn }, async (request, reply) => detail(request, reply));
  app.post<Params>('/console/events/subscriptions/:id/pause', post, act('paused', (ctx, id, body) => pauseFromConsole(ctx, id, text(body, 'reason'))));
  app.post<Params>('/console/events/subscriptions/:id/resume', post, act('resumed', resumeFromConsole));

  // Replay and delete act only from their confirmation page (issue 30, item 5), which says how
  // many events are sent again or lost; a POST without the page's `confirmed` goes to that page.
  app.get<Params>('/console/events/subscriptions/:id/replay', { preHandler: kit.signedIn }, async (request, reply) => {
    let preview;
    try {
      preview = await replayPreview(scim(request), request.params.id, text(request.query, 'from'));
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      return detail(request, reply, refused);
    }
    return show(request, reply, 'Replay events', replayConfirmBody(csrf(reply), preview));
  });
  app.get<Params>('/console/events/subscriptions/:id/delete', { preHandler: kit.signedIn }, async (request, reply) => {
    const { subscription } = await subscriptionDetail(scim(request), request.params.id);
    return show(request, reply, 'Delete subscription', deleteConfirmBody(csrf(reply), subscription));
  });
  const confirmed = (request: FastifyRequest<Params>, reply: FastifyReply, page: string, then: (request: FastifyRequest<Params>, reply: FastifyReply) => Promise<FastifyReply>) =>
    text(request.body, 'confirmed') === '1' ? then(request, reply) : seeOther(reply, page);
  const replay = act('replayed', (ctx, id, body) => replayFromConsole(ctx, id, text(body, 'from')));
  const remove = act('deleted', deleteFromConsole);
  app.post<Params>('/console/events/subscriptions/:id/replay', post, async (request, reply) =>
    confirmed(request, reply, `${detailPath(request.params.id)}/replay?from=${encodeURIComponent(text(request.body, 'from'))}`, replay),
  );
  app.post<Params>('/console/events/subscriptions/:id/delete', post, async (request, reply) => confirmed(request, reply, `${detailPath(request.params.id)}/delete`, remove));
}
