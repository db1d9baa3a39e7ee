/**
 * The console's Roles & entitlements routes (issue 31): the team's catalog with the forms that
 * add and remove roles, entitlement types and entitlements and set the discovery schemas, and the
 * group mappings with their add and remove forms. Each action is a CSRF-protected POST answered by
 * a redirect to the page that shows the result (post/redirect/get). A refused form (a bad value,
 * an unknown group, over a budget) shows the page again with the domain's message and its status;
 * removing an entry users hold or groups map to is refused with the counts (409) and the page
 * offers the same removal with force, which the admin confirms. Everything acts on the signed-in
 * admin's team only. Registered by console-pages.ts with the console kit (kit.ts), so the session,
 * CSRF, headers and error page are those of every console page. Handlers parse the form, call one
 * function of console/access.ts, and reply; no SQL here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OverBudget } from '../../budgets.ts';
import { mapFromConsole, teamCatalog, teamMappings, unmapFromConsole } from '../../console/access.ts';
import { catalogBody, mappingsBody } from '../../console/access-views.ts';
import type { Notice } from '../../console/access-views.ts';
import { ConsoleInputError } from '../../console/directory.ts';
import type { ScimContext } from '../../scim/context.ts';
import { scimErrorOf } from '../../scim/errors.ts';
import { getGroup } from '../../scim/groups.ts';
import type { Metrics } from '../metrics.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

/** What a redirect's `done` says on the page it lands on. */
const DONE: Record<string, string> = {
  mapped: 'Group mapped: its members hold it now.',
  'already-mapped': 'The group was mapped to it already: nothing changed.',
  unmapped: 'Group unmapped: its members no longer hold it through this group.',
};

interface Refusal {
  readonly status: number;
  readonly message: string;
}

/**
 * The refusals a form can meet, shown on the page (a budget's counted as the error hook would
 * count it); anything else goes to the console's error page.
 */
function refusal(error: unknown, metrics?: Pick<Metrics, 'budgetRefused'>): Refusal | undefined {
  if (error instanceof OverBudget) metrics?.budgetRefused(error.teamId, error.budget);
  if (error instanceof ConsoleInputError) return { status: 400, message: error.message };
  const known = scimErrorOf(error);
  if (known && [400, 404, 409].includes(known.status)) return { status: known.status, message: known.message };
  return undefined;
}

export function accessRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const post = { preHandler: [app.csrfProtection, kit.signedIn] };
  const seeOther = kit.shell.seeOther;
  const scim = (request: FastifyRequest): ScimContext => kit.signed(request).scim;
  const done = (request: FastifyRequest): Notice => {
    const message = DONE[field(request.query, 'done')];
    return message ? { message } : {};
  };

  const catalogPage = async (request: FastifyRequest, reply: FastifyReply, shown: Notice = done(request), status = 200) => {
    const catalog = await teamCatalog(scim(request));
    return kit.show(request, reply, 'access', 'Roles & entitlements', catalogBody(reply.generateCsrf(), catalog, shown), status);
  };

  /** The mappings page, all of the team's or one group's (`?group=ID`: an unknown one is a 404). */
  const mappingsPage = async (request: FastifyRequest, reply: FastifyReply, form = { group: '', entry: '' }, shown: Notice = done(request), status = 200) => {
    const ctx = scim(request);
    const only = field(request.query, 'group');
    const [catalog, mappings] = await Promise.all([teamCatalog(ctx), teamMappings(ctx, only)]);
    const group = only === '' ? undefined : { id: only, name: String((await getGroup(ctx, only)).resource.displayName) };
    return kit.show(request, reply, 'access', 'Group mappings', mappingsBody(reply.generateCsrf(), catalog, mappings, group, form, shown), status);
  };

  app.get('/console/access', { preHandler: kit.signedIn }, async (request, reply) => catalogPage(request, reply));
  app.get('/console/access/mappings', { preHandler: kit.signedIn }, async (request, reply) => mappingsPage(request, reply));

  app.post('/console/access/mappings', post, async (request, reply) => {
    const form = { group: field(request.body, 'group'), entry: field(request.body, 'entry') };
    let created: boolean;
    try {
      created = (await mapFromConsole(scim(request), form)).created;
    } catch (error) {
      const refused = refusal(error, kit.metrics);
      if (!refused) throw error;
      return mappingsPage(request, reply, form, { error: refused.message }, refused.status);
    }
    return seeOther(reply, `/console/access/mappings?done=${created ? 'mapped' : 'already-mapped'}`);
  });

  app.post('/console/access/mappings/remove', post, async (request, reply) => {
    try {
      await unmapFromConsole(scim(request), { group: field(request.body, 'group'), entry: field(request.body, 'entry') });
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      return mappingsPage(request, reply, undefined, { error: refused.message }, refused.status);
    }
    return seeOther(reply, '/console/access/mappings?done=unmapped');
  });
}
