/**
 * The console's CSV exports (issue 30 item 7): the team's users and groups (the team's schema
 * extensions included, one column per attribute, named by its schema attribute) and its audit
 * log (the page's filters applied), as async generators of CSV text. Each reads one page at a
 * time through the same services as the pages (SCIM cursor paging; the audit log's (at, id)
 * seek), so a table is never held whole, and yields to the event loop between pages, so a
 * million-user export never blocks other requests. Every export is audited before its first
 * byte (who exported what, with which filters). No SQL and no HTTP here.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { recordEvent } from '../audit/events.ts';
import type { ScimContext } from '../scim/context.ts';
import { typesOf } from '../scim/context.ts';
import { listGroups } from '../scim/groups.ts';
import { MAX_COUNT, parseListQuery } from '../scim/query.ts';
import type { Resource } from '../scim/representation.ts';
import { commonAttributes } from '../scim/schema/common.ts';
import { loadTeamTypes } from '../scim/team-schemas.ts';
import type { AttributeDef, ResourceTypeDef } from '../scim/schema/types.ts';
import { listUsers } from '../scim/users.ts';
import { groupWordSearch, USER_SEARCH_ORDER, userWordSearch, withWords } from '../scim/word-search.ts';
import type { ListQuery } from '../scim/query.ts';
import { withStatus } from './directory.ts';
import type { UserStatus } from './directory.ts';
import { auditLog } from './audit.ts';
import type { AuditQuery } from './audit.ts';
import { storyText } from './audit-story.ts';
import { csvRecord } from './csv.ts';
import { ConsoleInputError } from './input-error.ts';

/** One column: its header (the attribute's path) and how a resource's cell is read. */
interface Column {
  readonly header: string;
  cell(resource: Resource): string;
}

const text = (value: unknown): string => (value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

/** A multi-valued attribute's values in one cell: "work: a@x.example (primary); home: b@x.example". */
function elementsText(value: unknown): string {
  if (!Array.isArray(value)) return text(value);
  return value
    .map((element) => {
      if (element === null || typeof element !== 'object') return text(element);
      const el = element as Record<string, unknown>;
      const shown = el.value ?? el.formatted ?? el.display ?? el;
      return `${typeof el.type === 'string' ? `${el.type}: ` : ''}${text(shown)}${el.primary === true ? ' (primary)' : ''}`;
    })
    .join('; ');
}

/** The relationships (a user's groups, a group's members): listed on their own pages, never in a row. */
const isRelationship = (a: AttributeDef): boolean => a.storage?.kind === 'groups' || a.storage?.kind === 'members';

const exported = (a: AttributeDef): boolean => a.returned !== 'never' && !isRelationship(a);

/** The columns of one attribute, read from `holder(resource)` (the resource, or its extension's object). */
function columnsOf(a: AttributeDef, prefix: string, holder: (r: Resource) => Record<string, unknown> | undefined): Column[] {
  const header = `${prefix}${a.name}`;
  if (a.type === 'complex' && !a.multiValued) {
    return (a.subAttributes ?? [])
      .filter(exported)
      .map((sub) => ({ header: `${header}.${sub.name}`, cell: (r) => text((holder(r)?.[a.name] as Record<string, unknown> | undefined)?.[sub.name]) }));
  }
  if (a.multiValued) return [{ header, cell: (r) => elementsText(holder(r)?.[a.name]) }];
  return [{ header, cell: (r) => text(holder(r)?.[a.name]) }];
}

/**
 * A resource type's columns: the common attributes (id, externalId, meta.created,
 * meta.lastModified), the core schema's, then each extension's as `<urn>:<attribute>`.
 */
export function csvColumns(rt: ResourceTypeDef): Column[] {
  const self = (r: Resource) => r as Record<string, unknown>;
  const common = commonAttributes.filter(exported).flatMap((a) => columnsOf(a, '', self)).filter((c) => c.header !== 'meta.location' && c.header !== 'meta.resourceType' && c.header !== 'meta.version');
  const core = rt.schema.attributes.filter(exported).flatMap((a) => columnsOf(a, '', self));
  const extensions = rt.extensions.flatMap(({ schema }) => schema.attributes.filter(exported).flatMap((a) => columnsOf(a, `${schema.id}:`, (r) => r[schema.id] as Record<string, unknown> | undefined)));
  return [...common, ...core, ...extensions];
}

/** The attributes a list page must not load for an export (the relationships). */
const excludedOf = (rt: ResourceTypeDef): string => rt.schema.attributes.filter(isRelationship).map((a) => a.name).join(',');

export interface DirectoryExport {
  /** A SCIM filter (the list page's), or nothing: the whole directory. */
  readonly filter?: string;
  /**
   * The list page's plain words, when it has no filter: the same search as the page (case and
   * accents ignored, scim/word-search.ts), not a SCIM `sw` filter, which minds accents.
   */
  readonly words?: string;
  /** Users only: the list page's status filter (directory.ts UserStatus). */
  readonly status?: UserStatus;
}

async function audited(ctx: ScimContext, what: string, detail: Record<string, unknown>): Promise<void> {
  await recordEvent(ctx.storage.db, ctx.clock, { teamId: ctx.team.id, actor: ctx.actor, requestId: ctx.requestId, action: 'exported', resourceType: 'Team', resourceId: ctx.team.id, detail: { what, ...detail } });
}

/**
 * The directory as CSV, the list's SCIM filter or words and its status applied, as the page applies them. Its first page is read before anything is
 * sent, so a bad filter is the admin's 400, not a CSV cut short. Returns the generator to stream.
 */
export async function directoryCsv(ctx: ScimContext, kind: 'users' | 'groups', options: DirectoryExport): Promise<AsyncGenerator<string>> {
  const types = ctx.types ?? (await loadTeamTypes(ctx.storage.db, ctx.team.id));
  const given = options.filter?.trim() ?? '';
  if (given.length > 2000) throw new ConsoleInputError('the filter is at most 2,000 characters');
  const words = given === '' ? (options.words?.trim() ?? '') : '';
  if (words.length > 200) throw new ConsoleInputError('the search is at most 200 characters');
  const status = kind === 'users' ? (options.status ?? '') : '';
  // The users list's status as the page applies it: the deactivated ones are read as a team
  // that shows them reads them (directory.ts withStatus).
  const narrowed = withStatus({ ...ctx, types }, given === '' ? undefined : given, status);
  const scoped = narrowed.ctx;
  const filter = narrowed.filter ?? '';
  const rt = kind === 'users' ? typesOf(scoped).User : typesOf(scoped).Group;
  const params = { ...(filter !== '' ? { filter } : {}), count: String(MAX_COUNT), excludedAttributes: excludedOf(rt) };
  const list = kind === 'users' ? listUsers : listGroups;
  const query = (cursor: string): ListQuery => {
    const parsed = parseListQuery(rt, { ...params, cursor });
    if (words === '') return parsed;
    return kind === 'users' ? withWords(parsed, words, userWordSearch(words), USER_SEARCH_ORDER) : withWords(parsed, words, groupWordSearch(words));
  };
  // The first page is read before the audit row and the first byte: a bad or too costly filter is a 400 page, not a cut CSV.
  let page = await list(scoped, query(''));
  await audited(ctx, kind, { ...(given !== '' ? { filter: given } : {}), ...(words !== '' ? { search: words } : {}), ...(status !== '' ? { status } : {}) });
  return (async function* () {
    const columns = csvColumns(rt);
    yield csvRecord(columns.map((c) => c.header));
    for (;;) {
      yield page.resources.map((r) => csvRecord(columns.map((c) => c.cell(r)))).join('');
      if (page.nextCursor === undefined) return;
      await nextTurn();
      page = await list(scoped, query(page.nextCursor));
    }
  })();
}

/** Audit rows per page of the export: each page's names are read at once (repos/audit-names.ts bounds its ids). */
const AUDIT_CSV_PAGE = 200;

const AUDIT_HEADERS = ['at', 'event', 'action', 'actor', 'via', 'connection', 'resourceType', 'resourceId', 'resource', 'requestId', 'details', 'eventId'];

/** The audit log with the page's filters, newest first, in pages of 200 (each page's names read at once). */
export async function auditCsv(ctx: ScimContext, query: Omit<AuditQuery, 'before' | 'limit'>): Promise<AsyncGenerator<string>> {
  // The first page is read before the audit row: a bad filter is a 400 with nothing written.
  let page = await auditLog(ctx, { ...query, limit: AUDIT_CSV_PAGE });
  await audited(ctx, 'the audit log', Object.fromEntries(Object.entries(query).filter(([, v]) => typeof v === 'string' && v.trim() !== '')));
  return (async function* () {
    yield csvRecord(AUDIT_HEADERS);
    for (;;) {
      yield page.entries
        .map((a) =>
          csvRecord([
            a.at,
            storyText(a.story),
            a.action,
            a.actor.text,
            a.via,
            a.connection?.text ?? '',
            a.resourceType,
            a.resourceId ?? '',
            a.resource?.text ?? '',
            a.requestId ?? '',
            a.details.filter((d) => d.label !== 'Request id' && d.label !== 'Event id').map((d) => `${d.label}: ${storyText(d.parts)}`).join('; '),
            a.id,
          ]),
        )
        .join('');
      if (page.next === undefined) return;
      await nextTurn();
      page = await auditLog(ctx, { ...query, before: page.next, limit: AUDIT_CSV_PAGE });
    }
  })();
}
