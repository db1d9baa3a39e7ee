/**
 * The console's audit log and exports (issue 30 items 4 and 7): GET /console/audit (the log as
 * stories, filtered, newest first, paged), GET /console/audit.csv (the same filters) and
 * GET /console/users.csv, /console/groups.csv (the directory, the team's extensions included, a
 * list page's SCIM filter or words and its status applied, as the page applies them). A bad filter or date is the page's 400 with its
 * message, before any CSV byte is sent; the CSV itself is streamed page by page
 * (console/exports.ts). Handlers parse the query, call the domain, and render or stream.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { auditLog } from '../../console/audit.ts';
import type { AuditQuery } from '../../console/audit.ts';
import { auditBody, exportErrorBody } from '../../console/audit-views.ts';
import type { AuditFilters } from '../../console/audit-views.ts';
import { parseStatus } from '../../console/directory.ts';
import { auditCsv, directoryCsv } from '../../console/exports.ts';
import type { DirectoryExport } from '../../console/exports.ts';
import { ConsoleInputError } from '../../console/input-error.ts';
import { scimErrorOf } from '../../scim/errors.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

const filtersOf = (query: unknown): AuditFilters => ({
  actor: field(query, 'actor'),
  action: field(query, 'action'),
  resource: field(query, 'resource'),
  from: field(query, 'from'),
  to: field(query, 'to'),
});

const auditQuery = (f: AuditFilters): AuditQuery => ({ actor: f.actor, action: f.action, resourceId: f.resource, from: f.from, to: f.to });

/** What a list page's export applies: its SCIM filter, or else its words, and (users) its status, as the page reads them. */
function exportOptions(query: unknown, kind: 'users' | 'groups'): DirectoryExport {
  const filter = field(query, 'filter').trim();
  const words = field(query, 'q').trim();
  const status = kind === 'users' ? parseStatus(field(query, 'status')) : '';
  return { ...(filter !== '' ? { filter } : words !== '' ? { words } : {}), ...(status !== '' ? { status } : {}) };
}

/** A CSV download: streamed, never stored by a cache, named by what it holds and the day. */
function sendCsv(reply: FastifyReply, name: string, today: Date, csv: AsyncGenerator<string>): FastifyReply {
  return reply
    .code(200)
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}-${today.toISOString().slice(0, 10)}.csv"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(csv));
}

export function auditRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { signedIn, signed, show } = kit;

  app.get('/console/audit', { preHandler: signedIn }, async (request, reply) => {
    const filters = filtersOf(request.query);
    const before = field(request.query, 'before');
    const ctx = signed(request).scim;
    try {
      const page = await auditLog(ctx, { ...auditQuery(filters), before });
      return show(request, reply, 'audit', 'Audit log', auditBody(filters, page.entries, page.next, ctx.clock.now(), undefined, before !== ''));
    } catch (error) {
      if (!(error instanceof ConsoleInputError)) throw error;
      return show(request, reply, 'audit', 'Audit log', auditBody(filters, [], undefined, ctx.clock.now(), error.message), 400);
    }
  });

  app.get('/console/audit.csv', { preHandler: signedIn }, async (request, reply) => {
    const ctx = signed(request).scim;
    const filters = filtersOf(request.query);
    try {
      return sendCsv(reply, 'audit', ctx.clock.now(), await auditCsv(ctx, auditQuery(filters)));
    } catch (error) {
      if (!(error instanceof ConsoleInputError)) throw error;
      return show(request, reply, 'audit', 'Audit log', auditBody(filters, [], undefined, ctx.clock.now(), error.message), 400);
    }
  });

  for (const kind of ['users', 'groups'] as const) {
    app.get(`/console/${kind}.csv`, { preHandler: signedIn }, async (request, reply) => {
      const ctx = signed(request).scim;
      try {
        return sendCsv(reply, kind, ctx.clock.now(), await directoryCsv(ctx, kind, exportOptions(request.query, kind)));
      } catch (error) {
        const known = scimErrorOf(error);
        const message = known?.status === 400 ? known.message : error instanceof ConsoleInputError ? error.message : undefined;
        if (message === undefined) throw error;
        return show(request, reply, kind, kind === 'users' ? 'Users' : 'Groups', exportErrorBody(kind, message), 400);
      }
    });
  }
}
