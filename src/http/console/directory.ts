/**
 * The console's directory pages (DESIGN.md section 9, issue 30 item 2): the overview, the users
 * and groups lists, one user (with its effective access, console/access.ts) or group (the audit
 * log is console/audit.ts), and the directory's changes: create and edit a user, deactivate (after a confirmation) and
 * reactivate one, add and remove a group's members. A bad filter, sort or cursor is shown above
 * an empty list with status 400 (the SCIM error's own message); a refused change is shown on its
 * page with the SCIM error's message and status; a change that succeeds answers 303 to the page
 * that shows it (post/redirect/get). Handlers parse the request, call console/directory.ts or
 * console/directory-actions.ts, and render console/directory-views.ts or console/views.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OverBudget } from '../../budgets.ts';
import { userAccess } from '../../console/access.ts';
import { ConsoleInputError, firstUsersFound, groupDetail, overview, parseStatus, searchGroups, searchUsers, seeingDeactivated, userDetail } from '../../console/directory.ts';
import type { ListPage } from '../../console/directory.ts';
import { addMember, createUserFrom, deactivateUser, extensionFields, formFrom, formOf, reactivateUser, removeMember, updateUserFrom } from '../../console/directory-actions.ts';
import type { UserForm } from '../../console/directory-actions.ts';
import * as dirViews from '../../console/directory-views.ts';
import { hidesDeactivated, typesOf } from '../../scim/context.ts';
import { eventsHealth, signalsHealth } from '../../console/events.ts';
import type { ListForm } from '../../console/views.ts';
import * as views from '../../console/views.ts';
import { scimErrorOf } from '../../scim/errors.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

type Params = { Params: { id: string } };

const listForm = (query: unknown): ListForm & { cursor: string } => ({
  q: field(query, 'q'),
  filter: field(query, 'filter'),
  sortBy: field(query, 'sortBy'),
  descending: field(query, 'order') === 'desc',
  cursor: field(query, 'cursor'),
});

/** What a page shows above an error: no rows, the order as asked. */
const emptyPage = (form: ListForm): ListPage => ({ resources: [], total: undefined, next: undefined, previous: undefined, orderedBy: form.sortBy, first: 1 });

/** What the page says after a change it was redirected from (post/redirect/get). */
const DONE: Record<string, string> = {
  created: 'User created.',
  saved: 'Changes saved.',
  unchanged: 'Nothing to save: no value changed.',
  deactivated: 'User deactivated.',
  reactivated: 'User reactivated.',
  added: 'Member added.',
  removed: 'Member removed.',
};
const doneMessage = (query: unknown): string | undefined => DONE[field(query, 'done')];

/**
 * A change the team's rules may refuse: the SCIM error's own message and status (400, 404, 409,
 * 412), or a console input error's (400), for the page to show; anything else is thrown.
 */
async function refusal<T>(work: () => Promise<T>): Promise<{ value: T } | { error: string; status: number }> {
  try {
    return { value: await work() };
  } catch (error) {
    const known = scimErrorOf(error);
    if (known && known.status >= 400 && known.status < 500 && known.status !== 429) return { error: known.message, status: known.status };
    if (error instanceof ConsoleInputError) return { error: error.message, status: 400 };
    throw error;
  }
}

export function directoryRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { shell, signedIn, signed, show } = kit;
  const post = { preHandler: [app.csrfProtection, signedIn] };

  /** A bad filter or cursor is shown above an empty list (the SCIM error's own message). */
  async function listOrError<T>(work: () => Promise<T>, empty: T): Promise<{ value: T; error?: string }> {
    try {
      return { value: await work() };
    } catch (error) {
      if (error instanceof OverBudget && error.status === 400) kit.metrics?.budgetRefused(error.teamId, error.budget);
      const known = scimErrorOf(error);
      if (known?.status === 400) return { value: empty, error: known.message };
      if (error instanceof ConsoleInputError) return { value: empty, error: error.message };
      throw error;
    }
  }

  app.get('/console', { preHandler: signedIn }, async (request, reply) => {
    const [counts, events, signals] = await Promise.all([overview(signed(request).scim), eventsHealth(signed(request).scim), signalsHealth(signed(request).scim)]);
    return show(request, reply, 'overview', 'Overview', views.overviewBody(counts, events, signals));
  });

  app.get('/console/users', { preHandler: signedIn }, async (request, reply) => {
    const form = { ...listForm(request.query), status: field(request.query, 'status') };
    const now = kit.ctx.clock.now();
    const { value, error } = await listOrError(
      () => searchUsers(signed(request).scim, { ...form, status: parseStatus(form.status), ...(form.cursor ? { cursor: form.cursor, at: Number(field(request.query, 'at')) } : {}) }),
      emptyPage(form),
    );
    return show(request, reply, 'users', 'Users', dirViews.usersBody(form, value, now, error, doneMessage(request.query)), error ? 400 : 200);
  });

  /** The user form (create or edit), with the SCIM error that refused it when there is one. */
  const userForm = (request: FastifyRequest, reply: FastifyReply, form: UserForm, id: string | undefined, error?: string, status = 200) =>
    show(request, reply, 'users', id === undefined ? 'Create a user' : `Edit ${form.userName}`, dirViews.userFormBody(reply.generateCsrf(), form, extensionFields(typesOf(signed(request).scim).User), id, error), status);

  app.get('/console/users/new', { preHandler: signedIn }, async (request, reply) =>
    userForm(request, reply, formOf(typesOf(signed(request).scim).User, {}), undefined),
  );
  app.post('/console/users/new', post, async (request, reply) => {
    const s = signed(request);
    const form = formFrom(typesOf(s.scim).User, (name) => field(request.body, name));
    const refused = await refusal(() => createUserFrom(s.scim, form));
    if ('error' in refused) return userForm(request, reply, form, undefined, refused.error, refused.status);
    return shell.seeOther(reply, `/console/users/${encodeURIComponent(refused.value)}?done=created`);
  });

  app.get<Params>('/console/users/:id', { preHandler: signedIn }, async (request, reply) => {
    const s = signed(request);
    const [detail, access] = await Promise.all([userDetail(s.scim, request.params.id), userAccess(seeingDeactivated(s.scim), request.params.id)]);
    return show(request, reply, 'users', String(detail.resource.userName), dirViews.userBody(detail.type, detail.resource, detail.history, kit.ctx.clock.now(), reply.generateCsrf(), access, doneMessage(request.query)));
  });

  app.get<Params>('/console/users/:id/edit', { preHandler: signedIn }, async (request, reply) => {
    const s = signed(request);
    const detail = await userDetail(s.scim, request.params.id);
    return userForm(request, reply, formOf(detail.type, detail.resource), request.params.id);
  });
  app.post<Params>('/console/users/:id/edit', post, async (request, reply) => {
    const s = signed(request);
    const detail = await userDetail(s.scim, request.params.id);
    const form = formFrom(detail.type, (name) => field(request.body, name));
    const refused = await refusal(() => updateUserFrom(s.scim, request.params.id, detail.resource, form));
    if ('error' in refused) return userForm(request, reply, form, request.params.id, refused.error, refused.status);
    return shell.seeOther(reply, `/console/users/${encodeURIComponent(request.params.id)}?done=${refused.value === 0 ? 'unchanged' : 'saved'}`);
  });

  /** The confirmation page of a deactivation (also the answer to a POST that did not confirm). */
  const confirmDeactivate = async (request: FastifyRequest<Params>, reply: FastifyReply, error?: string, status = 200) => {
    const s = signed(request);
    const detail = await userDetail(s.scim, request.params.id);
    return show(request, reply, 'users', `Deactivate ${String(detail.resource.userName)}`, dirViews.deactivateBody(reply.generateCsrf(), detail.resource, hidesDeactivated(s.scim), error), status);
  };
  app.get<Params>('/console/users/:id/deactivate', { preHandler: signedIn }, async (request, reply) => confirmDeactivate(request, reply));
  app.post<Params>('/console/users/:id/deactivate', post, async (request, reply) => {
    const s = signed(request);
    if (field(request.body, 'confirm') !== 'yes') return confirmDeactivate(request, reply, 'Confirm the deactivation with the button below.', 400);
    const refused = await refusal(() => deactivateUser(s.scim, request.params.id, s.user.id));
    if ('error' in refused) return confirmDeactivate(request, reply, refused.error, refused.status);
    return shell.seeOther(reply, `/console/users/${encodeURIComponent(request.params.id)}?done=deactivated`);
  });
  app.post<Params>('/console/users/:id/reactivate', post, async (request, reply) => {
    const s = signed(request);
    const refused = await refusal(() => reactivateUser(s.scim, request.params.id));
    if ('error' in refused) {
      const [detail, access] = await Promise.all([userDetail(s.scim, request.params.id), userAccess(seeingDeactivated(s.scim), request.params.id)]);
      return show(request, reply, 'users', String(detail.resource.userName), dirViews.userBody(detail.type, detail.resource, detail.history, kit.ctx.clock.now(), reply.generateCsrf(), access, undefined, refused.error), refused.status);
    }
    return shell.seeOther(reply, `/console/users/${encodeURIComponent(request.params.id)}?done=reactivated`);
  });

  app.get('/console/groups', { preHandler: signedIn }, async (request, reply) => {
    const form = listForm(request.query);
    const { value, error } = await listOrError(() => searchGroups(signed(request).scim, { ...form, ...(form.cursor ? { cursor: form.cursor, at: Number(field(request.query, 'at')) } : {}) }), emptyPage(form));
    return show(request, reply, 'groups', 'Groups', dirViews.groupsBody(form, value, kit.ctx.clock.now(), error), error ? 400 : 200);
  });

  /** A group's page, with the users found to add when the admin searched for them. */
  const groupPage = async (request: FastifyRequest<Params>, reply: FastifyReply, query: unknown, message?: string, error?: string, status = 200) => {
    const s = signed(request);
    const detail = await groupDetail(s.scim, request.params.id, { search: field(query, 'mq'), page: field(query, 'page') });
    const add = field(query, 'add').trim();
    const candidates = add ? { query: add, users: await firstUsersFound(s.scim, add, 10) } : undefined;
    return show(request, reply, 'groups', String(detail.resource.displayName), dirViews.groupBody(detail, kit.ctx.clock.now(), reply.generateCsrf(), candidates, message, error), status);
  };
  app.get<Params>('/console/groups/:id', { preHandler: signedIn }, async (request, reply) => {
    try {
      return await groupPage(request, reply, request.query, doneMessage(request.query));
    } catch (error) {
      if (error instanceof ConsoleInputError) return groupPage(request, reply, {}, undefined, error.message, 400);
      throw error;
    }
  });
  for (const change of ['add', 'remove'] as const) {
    app.post<Params>(`/console/groups/:id/members/${change}`, post, async (request, reply) => {
      const s = signed(request);
      const user = field(request.body, 'user');
      const refused = await refusal(() => (change === 'add' ? addMember : removeMember)(s.scim, request.params.id, user));
      if ('error' in refused) return groupPage(request, reply, {}, undefined, refused.error, refused.status);
      return shell.seeOther(reply, `/console/groups/${encodeURIComponent(request.params.id)}?done=${change === 'add' ? 'added' : 'removed'}#members`);
    });
  }
}
