/**
 * The console's directory pages (DESIGN.md section 9): the overview, the users and groups lists
 * with one user (with its effective access, console/access.ts) or group (the audit log is console/audit.ts). A bad
 * filter, sort or cursor is shown above an empty list with status 400 (the SCIM error's own
 * message). Handlers parse the query, call console/directory.ts, and render console/views.ts.
 */
import type { FastifyInstance } from 'fastify';
import { OverBudget } from '../../budgets.ts';
import { userAccess } from '../../console/access.ts';
import { ConsoleInputError, groupDetail, overview, searchGroups, searchUsers, userDetail } from '../../console/directory.ts';
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
const emptyPage = (form: ListForm) => ({ resources: [], total: undefined, next: undefined, previous: undefined, orderedBy: form.sortBy });

export function directoryRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { signedIn, signed, show } = kit;

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
    const form = listForm(request.query);
    const { value, error } = await listOrError(() => searchUsers(signed(request).scim, { ...form, ...(form.cursor ? { cursor: form.cursor } : {}) }), emptyPage(form));
    return show(request, reply, 'users', 'Users', views.usersBody(form, value, error), error ? 400 : 200);
  });
  app.get<Params>('/console/users/:id', { preHandler: signedIn }, async (request, reply) => {
    const [detail, access] = await Promise.all([userDetail(signed(request).scim, request.params.id), userAccess(signed(request).scim, request.params.id)]);
    return show(request, reply, 'users', String(detail.resource.userName), views.userBody(detail.resource, detail.history, access));
  });

  app.get('/console/groups', { preHandler: signedIn }, async (request, reply) => {
    const form = listForm(request.query);
    const { value, error } = await listOrError(() => searchGroups(signed(request).scim, { ...form, ...(form.cursor ? { cursor: form.cursor } : {}) }), emptyPage(form));
    return show(request, reply, 'groups', 'Groups', views.groupsBody(form, value, error), error ? 400 : 200);
  });
  app.get<Params>('/console/groups/:id', { preHandler: signedIn }, async (request, reply) => {
    const detail = await groupDetail(signed(request).scim, request.params.id, field(request.query, 'after'));
    return show(request, reply, 'groups', String(detail.resource.displayName), views.groupBody(detail.resource, detail.members, detail.next, detail.history));
  });
}
