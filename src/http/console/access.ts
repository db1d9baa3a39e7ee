/**
 * The console's Roles & entitlements routes (issue 31): the team's catalog with the forms that
 * add and remove roles, entitlement types and entitlements and set the discovery schemas, who
 * holds each entry (in pages), and the group mappings with their add and remove forms. Each action is a CSRF-protected POST answered by
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
import {
  addEntitlementFromConsole,
  addRoleFromConsole,
  addTypeFromConsole,
  entryHolders,
  mapFromConsole,
  parseEntryChoice,
  removeEntitlementFromConsole,
  removeRoleFromConsole,
  removeTypeFromConsole,
  setSchemasFromConsole,
  teamCatalog,
  teamMappings,
  unmapFromConsole,
} from '../../console/access.ts';
import type { AddOutcome, EntryForm, Removal } from '../../console/access.ts';
import { catalogBody, holdersBody, mappingsBody } from '../../console/access-views.ts';
import type { AddForm, Confirm, Notice } from '../../console/access-views.ts';
import { ConsoleInputError } from '../../console/directory.ts';
import type { ScimContext } from '../../scim/context.ts';
import { scimErrorOf } from '../../scim/errors.ts';
import { getGroup } from '../../scim/groups.ts';
import type { Metrics } from '../metrics.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

/** What a redirect's `done` says on the page it lands on. */
const DONE: Record<string, string> = {
  'role-added': 'Role added.',
  'role-updated': 'Role changed.',
  'role-unchanged': 'The role was so already: nothing changed.',
  'role-removed': 'Role removed.',
  'type-added': 'Entitlement type added.',
  'type-updated': 'Entitlement type changed.',
  'type-unchanged': 'The entitlement type was so already: nothing changed.',
  'type-removed': 'Entitlement type removed, with its entitlements.',
  'entitlement-added': 'Entitlement added.',
  'entitlement-updated': 'Entitlement changed.',
  'entitlement-unchanged': 'The entitlement was so already: nothing changed.',
  'entitlement-removed': 'Entitlement removed.',
  'schemas-set': 'Discovery schemas saved.',
  'schemas-unchanged': 'The discovery schemas were so already: nothing changed.',
  mapped: 'Group mapped: its members hold it now.',
  'already-mapped': 'The group was mapped to it already: nothing changed.',
  unmapped: 'Group unmapped: its members no longer hold it through this group.',
};

type Form = 'role' | 'type' | 'entitlement';

/** The fields each add form sends, kept on the page when it is refused. */
const FIELDS: Record<Form, readonly string[]> = {
  role: ['value', 'displayName', 'description'],
  type: ['name', 'endpoint', 'required', 'multiValued', 'description'],
  entitlement: ['type', 'value', 'displayName', 'description'],
};

const entryForm = (body: unknown): EntryForm => ({ value: field(body, 'value'), displayName: field(body, 'displayName'), description: field(body, 'description') });

/** A forced removal's counts, carried by the redirect (digits only) and said on the page. */
function takenFrom(query: unknown): string {
  const users = field(query, 'users');
  const groups = field(query, 'groups');
  if (!/^\d{1,9}$/.test(users) || !/^\d{1,9}$/.test(groups)) return '';
  const parts = [
    users === '0' ? '' : `it was taken from ${users} user${users === '1' ? '' : 's'}`,
    groups === '0' ? '' : `${groups} group${groups === '1' ? ' no longer maps' : 's no longer map'} to it`,
  ].filter(Boolean);
  return parts.length === 0 ? '' : ` ${parts.join('; ').replace(/^./, (c) => c.toUpperCase())}.`;
}

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
    const key = field(request.query, 'done');
    const message = DONE[key];
    return message ? { message: key.endsWith('-removed') ? `${message}${takenFrom(request.query)}` : message } : {};
  };

  const catalogPage = async (request: FastifyRequest, reply: FastifyReply, shown: Notice = done(request), status = 200, kept: { form?: Form; values?: AddForm } = {}) => {
    const catalog = await teamCatalog(scim(request));
    return kit.show(request, reply, 'access', 'Roles & entitlements', catalogBody(reply.generateCsrf(), catalog, shown, kept), status);
  };

  /**
   * An add form's route: the outcome (added, changed, unchanged) said on the page it redirects
   * to; a refusal shown with the form as it was sent; a 409 (an entitlement moved away from the
   * type its holders have it under) offered again with force, as a removal is.
   */
  const add = (form: Form, action: string, run: (ctx: ScimContext, body: unknown, force: boolean) => Promise<AddOutcome>, confirm?: (body: unknown) => Pick<Confirm, 'title' | 'button'>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const force = field(request.body, 'force') === '1';
      let outcome: AddOutcome;
      try {
        outcome = await run(scim(request), request.body, force);
      } catch (error) {
        const refused = refusal(error, kit.metrics);
        if (!refused) throw error;
        const values = Object.fromEntries(FIELDS[form].map((name) => [name, field(request.body, name)]));
        if (refused.status === 409 && confirm && !force) {
          return catalogPage(request, reply, { confirm: { action, fields: values, message: refused.message, ...confirm(request.body) } }, 409);
        }
        return catalogPage(request, reply, { error: refused.message }, refused.status, { form, values });
      }
      return seeOther(reply, `/console/access?done=${form}-${outcome}`);
    };

  /**
   * A remove button's route: the removal, or its refusal with the counts (409) shown above a form
   * that repeats it with force; a forced removal's counts said on the page it redirects to.
   */
  const remove = (form: Form, action: string, run: (ctx: ScimContext, body: unknown, force: boolean) => Promise<Removal>, what: (body: unknown) => string) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const force = field(request.body, 'force') === '1';
      let removed: Removal;
      try {
        removed = await run(scim(request), request.body, force);
      } catch (error) {
        const refused = refusal(error, kit.metrics);
        if (!refused) throw error;
        if (refused.status === 409 && !force) {
          const fields = Object.fromEntries(FIELDS[form].filter((name) => name === 'value' || name === 'name' || name === 'type').map((name) => [name, field(request.body, name)]));
          const thing = what(request.body);
          return catalogPage(request, reply, { confirm: { action, fields, message: refused.message, title: `Remove ${thing} anyway?`, button: `Remove ${thing} from them` } }, 409);
        }
        return catalogPage(request, reply, { error: refused.message }, refused.status);
      }
      const counts = removed.users > 0 || removed.groups > 0 ? `&users=${removed.users}&groups=${removed.groups}` : '';
      return seeOther(reply, `/console/access?done=${form}-removed${counts}`);
    };

  /** The mappings page, all of the team's or one group's (`?group=ID`: an unknown one is a 404). */
  const mappingsPage = async (request: FastifyRequest, reply: FastifyReply, form = { group: '', entry: '' }, shown: Notice = done(request), status = 200) => {
    const ctx = scim(request);
    const only = field(request.query, 'group');
    const [catalog, mappings] = await Promise.all([teamCatalog(ctx), teamMappings(ctx, only)]);
    const group = only === '' ? undefined : { id: only, name: String((await getGroup(ctx, only)).resource.displayName) };
    return kit.show(request, reply, 'access', 'Group mappings', mappingsBody(reply.generateCsrf(), catalog, mappings, group, form, shown, kit.ctx.clock.now()), status);
  };

  app.get('/console/access', { preHandler: kit.signedIn }, async (request, reply) => catalogPage(request, reply));

  app.post('/console/access/roles', post, add('role', '/console/access/roles', (ctx, body) => addRoleFromConsole(ctx, entryForm(body))));
  app.post('/console/access/roles/remove', post, remove('role', '/console/access/roles/remove', (ctx, body, force) => removeRoleFromConsole(ctx, field(body, 'value'), force), (body) => `role "${field(body, 'value')}"`));
  app.post(
    '/console/access/types',
    post,
    add('type', '/console/access/types', (ctx, body) =>
      addTypeFromConsole(ctx, { name: field(body, 'name'), endpoint: field(body, 'endpoint'), required: field(body, 'required') !== '', multiValued: field(body, 'multiValued'), description: field(body, 'description') }),
    ),
  );
  app.post('/console/access/types/remove', post, remove('type', '/console/access/types/remove', (ctx, body, force) => removeTypeFromConsole(ctx, field(body, 'name'), force), (body) => `entitlement type ${field(body, 'name')} and its entitlements`));
  app.post(
    '/console/access/entitlements',
    post,
    add('entitlement', '/console/access/entitlements', (ctx, body, force) => addEntitlementFromConsole(ctx, field(body, 'type'), entryForm(body), force), (body) => ({
      title: `Move entitlement "${field(body, 'value')}" to type ${field(body, 'type')} anyway?`,
      button: `Move "${field(body, 'value')}" to ${field(body, 'type')}, taking it from them`,
    })),
  );
  app.post(
    '/console/access/entitlements/remove',
    post,
    remove('entitlement', '/console/access/entitlements/remove', (ctx, body, force) => removeEntitlementFromConsole(ctx, field(body, 'type'), field(body, 'value'), force), (body) => `entitlement "${field(body, 'value')}" of ${field(body, 'type')}`),
  );
  app.post('/console/access/schemas', post, async (request, reply) => {
    let changed: boolean;
    try {
      changed = await setSchemasFromConsole(scim(request), field(request.body, 'schemas'));
    } catch (error) {
      const refused = refusal(error, kit.metrics);
      if (!refused) throw error;
      return catalogPage(request, reply, { error: refused.message }, refused.status);
    }
    return seeOther(reply, `/console/access?done=${changed ? 'schemas-set' : 'schemas-unchanged'}`);
  });
  app.get('/console/access/mappings', { preHandler: kit.signedIn }, async (request, reply) => mappingsPage(request, reply));

  /** Who holds an entry (`?entry=role:V` or `entitlement:Type:V`), in pages; a bad cursor is shown above an empty page (400). */
  app.get('/console/access/holders', { preHandler: kit.signedIn }, async (request, reply) => {
    const ctx = scim(request);
    const entry = parseEntryChoice(field(request.query, 'entry'));
    const catalog = await teamCatalog(ctx);
    const display =
      entry.kind === 'role'
        ? catalog.roles.find((r) => r.value === entry.value)?.displayName
        : catalog.entitlementTypes.find((t) => t.name.toLowerCase() === entry.type.toLowerCase())?.entitlements.find((x) => x.value === entry.value)?.displayName;
    const title = `Holders of ${entry.value}`;
    try {
      const page = await entryHolders(ctx, entry, field(request.query, 'cursor'));
      return kit.show(request, reply, 'access', title, holdersBody(entry, display, page));
    } catch (error) {
      const refused = refusal(error);
      if (refused?.status !== 400) throw error;
      return kit.show(request, reply, 'access', title, holdersBody(entry, display, { users: [] }, refused.message), 400);
    }
  });

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
