/**
 * The directory's pages (issue 30 item 2): the users and groups lists with their counts and
 * positions, a user and a group as a person reads them (names, emails, phone numbers, addresses,
 * the team's extensions under their schema's name, times relative with the exact time on hover),
 * and the forms that change them: create and edit a user, deactivate (after a confirmation) and
 * reactivate, add and remove a group's members. Attribute labels and value shapes come from the
 * resource type's attribute definitions, so a team's extension renders like a core schema.
 * Every value is escaped; every form carries the CSRF token; tables are dataTable (table.ts).
 */
import escapeHtml from 'escape-html';
import type { UserAccess } from './access.ts';
import { accessSection } from './access-views.ts';
import type { ExtensionField, UserForm } from './directory-actions.ts';
import type { AuditEntry, GroupDetail, ListPage, Total } from './directory.ts';
import { MAX_MEMBER_PAGE, PAGE_SIZE } from './directory.ts';
import { formatCount, positionText, timeHtml } from './format.ts';
import { dataTable } from './table.ts';
import type { ListForm } from './views.ts';
import { errorBody, historyTable } from './views.ts';
import { exportLink } from './audit-views.ts';
import type { Resource } from '../scim/representation.ts';
import type { AttributeDef, ResourceTypeDef } from '../scim/schema/types.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const q = (params: Record<string, string | undefined>): string => {
  const parts = Object.entries(params).filter((p): p is [string, string] => p[1] !== undefined && p[1] !== '');
  return parts.length === 0 ? '' : `?${parts.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
};
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const csrfField = (csrf: string): string => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;

/** "51-100 of 2,002", "1-50 of more than 10,000", or the range alone when the total is not known. */
export function totalText(first: number, shown: number, total: Total | undefined): string {
  if (total?.more) return shown === 0 ? `None of more than ${formatCount(total.n)}` : `${positionText(first, shown, undefined)} of more than ${formatCount(total.n)}`;
  return positionText(first, shown, total?.n);
}

const countText = (t: Total | undefined): string => (t === undefined ? '' : t.more ? `more than ${formatCount(t.n)}` : formatCount(t.n));

/** "userName" -> "User name": a core attribute's label. */
const label = (name: string): string => {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** A person's name as written: `formatted`, else its parts in order. */
function nameText(name: Record<string, unknown>): string {
  if (str(name.formatted)) return str(name.formatted);
  return ['honorificPrefix', 'givenName', 'middleName', 'familyName', 'honorificSuffix'].map((k) => str(name[k])).filter(Boolean).join(' ');
}

/** An address on one line: `formatted`, else its parts. */
function addressText(address: Record<string, unknown>): string {
  if (str(address.formatted)) return str(address.formatted);
  return ['streetAddress', 'locality', 'region', 'postalCode', 'country'].map((k) => str(address[k])).filter(Boolean).join(', ');
}

function scalarHtml(a: AttributeDef, v: unknown, now: Date): string {
  if (a.type === 'dateTime' && typeof v === 'string') return timeHtml(v, now);
  if (a.type === 'boolean') return v === true ? 'yes' : v === false ? 'no' : e(v);
  if (a.type === 'binary') return '<span class="muted">(binary value)</span>';
  return `<span dir="auto">${e(typeof v === 'object' ? JSON.stringify(v) : v)}</span>`;
}

/** One element of a multi-valued complex attribute (an email, a phone number, an address...). */
function elementHtml(a: AttributeDef, element: Record<string, unknown>, now: Date): string {
  const main = a.name === 'addresses' ? addressText(element) : element.display !== undefined && element.value === undefined ? str(element.display) : element.value;
  const tags = [str(element.type), element.primary === true ? 'primary' : ''].filter(Boolean);
  const others = (a.subAttributes ?? []).filter((s) => !['value', 'type', 'primary', 'display', '$ref', 'formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country'].includes(s.name) && element[s.name] !== undefined);
  const rest = others.map((s) => `${e(s.name)}: ${scalarHtml(s, element[s.name], now)}`).join('; ');
  const shown = a.name === 'addresses' || typeof main !== 'object' ? `<span dir="auto">${e(main)}</span>` : scalarHtml(a, main, now);
  return `${shown}${tags.length > 0 ? ` <span class="muted">(${e(tags.join(', '))})</span>` : ''}${rest ? ` <span class="muted">${rest}</span>` : ''}`;
}

/** A value as a person reads it, shaped by its attribute definition. */
export function valueHtml(a: AttributeDef, v: unknown, now: Date): string {
  if (a.multiValued && Array.isArray(v)) {
    const items = v.map((item) => (a.type === 'complex' ? elementHtml(a, record(item), now) : scalarHtml(a, item, now)));
    return items.length === 1 ? items[0]! : `<ul class="values">${items.map((i) => `<li>${i}</li>`).join('')}</ul>`;
  }
  if (a.type === 'complex') {
    const value = record(v);
    if (a.name === 'name') return `<span dir="auto">${e(nameText(value))}</span>`;
    const subs = (a.subAttributes ?? []).filter((s) => value[s.name] !== undefined);
    if (subs.length === 0) return '';
    return `<dl class="attrs sub">${subs.map((s) => `<dt>${e(s.name)}</dt><dd>${valueHtml(s, value[s.name], now)}</dd>`).join('')}</dl>`;
  }
  return scalarHtml(a, v, now);
}

/** Attributes the page shows elsewhere (the record, the groups, the members) or never (the password). */
const ELSEWHERE = new Set(['id', 'externalId', 'meta', 'schemas', 'groups', 'members', 'password', 'display']);

function attributeList(attributes: readonly AttributeDef[], values: Record<string, unknown>, now: Date, labelOf: (name: string) => string): string {
  const rows = attributes
    .filter((a) => !ELSEWHERE.has(a.name) && values[a.name] !== undefined && values[a.name] !== null)
    .map((a) => `<dt>${e(labelOf(a.name))}</dt><dd>${valueHtml(a, values[a.name], now)}</dd>`)
    .join('');
  return rows ? `<dl class="attrs">${rows}</dl>` : '<p class="muted">No values.</p>';
}

/**
 * A resource's attributes: the core schema's (labelled in words), then each extension it holds
 * under the schema's name with its attribute names, then the record (id, externalId, created,
 * last modified).
 */
export function resourceSections(rt: ResourceTypeDef, resource: Resource, now: Date): string {
  const core = `<div class="card">${attributeList(rt.schema.attributes, resource, now, label)}</div>`;
  const extensions = rt.extensions
    .filter(({ schema }) => resource[schema.id] !== undefined)
    .map(({ schema }) => `<section class="card" aria-labelledby="x-${e(encodeURIComponent(schema.id))}"><h3 id="x-${e(encodeURIComponent(schema.id))}">${e(schema.name || schema.id)}</h3><p class="muted"><code>${e(schema.id)}</code></p>${attributeList(schema.attributes, record(resource[schema.id]), now, (n) => n)}</section>`)
    .join('');
  const meta = record(resource.meta);
  const recordRows = [
    ['id', `<code>${e(resource.id)}</code>`],
    ...(resource.externalId !== undefined ? [['externalId', `<span dir="auto">${e(resource.externalId)}</span>`]] : []),
    ['Created', timeHtml(str(meta.created), now)],
    ['Last modified', timeHtml(str(meta.lastModified), now)],
  ];
  return `${core}${extensions}<h2>Record</h2><div class="card"><dl class="attrs">${recordRows.map(([k, v]) => `<dt>${e(k)}</dt><dd>${v}</dd>`).join('')}</dl></div>`;
}

const SORTS: Record<'users' | 'groups', readonly [string, string][]> = {
  users: [['created', 'created (fastest)'], ['userName', 'userName'], ['name.familyName', 'family name'], ['meta.lastModified', 'last modified']],
  groups: [['created', 'created (fastest)'], ['displayName', 'displayName'], ['meta.lastModified', 'last modified']],
};

/** The users list's form: a status besides the list's. */
export interface UsersForm extends ListForm {
  readonly status: string;
}

function searchForm(kind: 'users' | 'groups', form: ListForm & { status?: string }, orderedBy: string): string {
  const options = SORTS[kind].map(([v, l]) => `<option value="${e(v)}"${v === orderedBy ? ' selected' : ''}>${e(l)}</option>`).join('');
  const status =
    kind === 'users'
      ? `<div><label for="status">Status</label><select id="status" name="status">${[['', 'as SCIM reads them'], ['active', 'active'], ['deactivated', 'deactivated']]
          .map(([v, l]) => `<option value="${v}"${(form.status ?? '') === v ? ' selected' : ''}>${l}</option>`)
          .join('')}</select></div>`
      : '';
  return `<form method="get" action="/console/${kind}" class="filters" role="search">
<div><label for="q">Search</label><input id="q" name="q" type="search" value="${e(form.q)}" placeholder="${kind === 'users' ? 'start of userName or name, or externalId' : 'start of displayName, or externalId'}" aria-describedby="q-hint"><small id="q-hint">${kind === 'users' ? 'Finds users whose userName, given name or family name starts with the words (any case), or whose externalId is exactly them. Emails and other attributes: use a SCIM filter.' : 'Finds groups whose displayName starts with the words (any case), or whose externalId is exactly them.'}</small></div>
<div><label for="filter">SCIM filter</label><input id="filter" name="filter" type="text" value="${e(form.filter)}" placeholder='${kind === 'users' ? 'userName sw "a" and active eq true' : 'displayName eq "Admins"'}' spellcheck="false" aria-describedby="filter-hint"><small id="filter-hint">RFC 7644 filter; the team's extension attributes too (their full URN, then a colon and the name).</small></div>
${status}<div><label for="sortBy">Sort by</label><select id="sortBy" name="sortBy">${options}</select></div>
<div><label for="order">Order</label><select id="order" name="order"><option value="asc"${form.descending ? '' : ' selected'}>ascending</option><option value="desc"${form.descending ? ' selected' : ''}>descending</option></select></div>
<div><button type="submit" class="primary">Search</button></div>
</form>`;
}

/** How a word search's page is ordered, in words (the order the domain chose: directory.ts orderOf). */
function orderNote(kind: 'users' | 'groups', form: ListForm, result: ListPage): string {
  if (form.q.trim() === '' || form.filter.trim() !== '') return '';
  const l = SORTS[kind].find(([v]) => v === result.orderedBy)?.[1].replace(' (fastest)', '') ?? result.orderedBy;
  const by = result.orderedBy === 'created' ? 'creation' : l;
  return ` Ordered by ${e(by)}${result.orderedBy !== 'created' && form.descending ? ', descending' : ''}.`;
}

function pager(base: string, params: Record<string, string | undefined>, result: ListPage): string {
  const shown = result.resources.length;
  const links = [
    result.previous !== undefined ? `<a href="${e(`${base}${q({ ...params, cursor: result.previous, at: String(Math.max(1, result.first - PAGE_SIZE)) })}`)}" rel="prev">Previous page</a>` : '',
    result.next !== undefined ? `<a href="${e(`${base}${q({ ...params, cursor: result.next, at: String(result.first + shown) })}`)}" rel="next">Next page</a>` : '',
  ].join('');
  return links ? `<nav class="pager" aria-label="Pages">${links}</nav>` : '';
}

const notice = (message: string | undefined): string => (message ? `<p class="ok" role="status">${e(message)}</p>` : '');

export function usersBody(form: UsersForm, result: ListPage, now: Date, error?: string, message?: string): string {
  const rows = result.resources.map((r) => {
    const name = record(r.name);
    const emails = Array.isArray(r.emails) ? (r.emails as unknown[]).map((m) => str(record(m).value)).filter(Boolean).join(', ') : '';
    return [
      `<a href="/console/users/${encodeURIComponent(str(r.id))}" dir="auto">${e(r.userName)}</a>`,
      `<span dir="auto">${e(str(r.displayName) || nameText(name))}</span>`,
      e(emails),
      r.active === false ? '<span class="status-4">deactivated</span>' : 'active',
      timeHtml(str(record(r.meta).created), now),
    ];
  });
  const params = { q: form.q, filter: form.filter, status: form.status, sortBy: form.sortBy, order: form.descending ? 'desc' : undefined };
  return `${notice(message)}<p><a href="/console/users/new" class="button">Create a user</a></p>
${searchForm('users', form, result.orderedBy)}
${error ? errorBody(error) : ''}
<p class="muted" role="status">${e(totalText(result.first, result.resources.length, result.total))}${form.status === 'deactivated' ? ' deactivated users' : ''}.${orderNote('users', form, result)} ${exportLink('users', form)}</p>
${dataTable({ headers: ['userName', 'Name', 'Emails', 'Status', 'Created'], rows, empty: 'No users.', caption: 'Users' })}
${pager('/console/users', params, result)}`;
}

export function groupsBody(form: ListForm, result: ListPage, now: Date, error?: string): string {
  const rows = result.resources.map((r) => [
    `<a href="/console/groups/${encodeURIComponent(str(r.id))}" dir="auto">${e(r.displayName)}</a>`,
    e(countText(result.memberCounts?.get(str(r.id)))),
    `<span dir="auto">${e(r.externalId)}</span>`,
    timeHtml(str(record(r.meta).lastModified), now),
  ]);
  const params = { q: form.q, filter: form.filter, sortBy: form.sortBy, order: form.descending ? 'desc' : undefined };
  return `${searchForm('groups', form, result.orderedBy)}
${error ? errorBody(error) : ''}
<p class="muted" role="status">${e(totalText(result.first, result.resources.length, result.total))}.${orderNote('groups', form, result)} ${exportLink('groups', form)}</p>
${dataTable({ headers: ['displayName', 'Members', 'externalId', 'Last modified'], rows, empty: 'No groups.', caption: 'Groups' })}
${pager('/console/groups', params, result)}`;
}

export function userBody(rt: ResourceTypeDef, resource: Resource, history: readonly AuditEntry[], now: Date, csrf: string, access?: UserAccess, message?: string, error?: string): string {
  const id = encodeURIComponent(str(resource.id));
  const groups = Array.isArray(resource.groups) ? (resource.groups as Record<string, unknown>[]) : [];
  const groupList = groups.length === 0 ? '<p class="muted">In no group.</p>' : `<ul>${groups.map((g) => `<li><a href="/console/groups/${encodeURIComponent(str(g.value))}" dir="auto">${e(g.display ?? g.value)}</a></li>`).join('')}</ul>`;
  const deactivated = resource.active === false;
  const actions = deactivated
    ? `<form method="post" action="/console/users/${id}/reactivate" class="inline">${csrfField(csrf)}<button type="submit" class="primary">Reactivate</button></form>`
    : `<a href="/console/users/${id}/deactivate" class="button danger">Deactivate…</a>`;
  return `${notice(message)}${error ? errorBody(error) : ''}<p><a href="/console/users">All users</a></p>
${deactivated ? '<p class="alert" role="status">This user is deactivated.</p>' : ''}
<div class="actions"><a href="/console/users/${id}/edit" class="button">Edit</a> ${actions}</div>
<h2>Attributes</h2>${resourceSections(rt, resource, now)}
<h2>Groups</h2>${groupList}
${access ? accessSection(access) : ''}
<h2>History</h2>${historyTable(history)}`;
}

function input(name: string, labelText: string, value: string, extra = ''): string {
  const id = `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  return `<label for="${e(id)}">${e(labelText)}</label><input id="${e(id)}" name="${e(name)}" type="text" value="${e(value)}"${extra}>`;
}

function extensionInput(f: ExtensionField, value: string): string {
  const id = `f-${f.name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const labelText = `${f.attribute.name}${f.attribute.required ? ' (required)' : ''}`;
  if (f.attribute.type === 'boolean') {
    const option = (v: string, l: string) => `<option value="${v}"${value === v ? ' selected' : ''}>${l}</option>`;
    return `<label for="${e(id)}">${e(labelText)}</label><select id="${e(id)}" name="${e(f.name)}">${option('', '(none)')}${option('true', 'yes')}${option('false', 'no')}</select>`;
  }
  if (f.attribute.canonicalValues && f.attribute.canonicalValues.length > 0) {
    const values = ['', ...f.attribute.canonicalValues];
    if (value !== '' && !values.includes(value)) values.push(value);
    return `<label for="${e(id)}">${e(labelText)}</label><select id="${e(id)}" name="${e(f.name)}">${values.map((v) => `<option value="${e(v)}"${v === value ? ' selected' : ''}>${e(v || '(none)')}</option>`).join('')}</select>`;
  }
  const hint = f.attribute.type === 'string' || f.attribute.type === 'reference' ? '' : ` placeholder="${e(f.attribute.type)}"`;
  return input(f.name, labelText, value, hint);
}

/** The create and edit form of a user (`id` undefined: create). */
export function userFormBody(csrf: string, form: UserForm, fields: readonly ExtensionField[], id?: string, error?: string): string {
  const action = id === undefined ? '/console/users/new' : `/console/users/${encodeURIComponent(id)}/edit`;
  const bySchema = new Map<string, ExtensionField[]>();
  for (const f of fields) bySchema.set(f.schemaId, [...(bySchema.get(f.schemaId) ?? []), f]);
  const extensions = [...bySchema.values()]
    .map((group) => `<fieldset class="group"><legend>${e(group[0]!.schemaName)}</legend><p class="muted"><code>${e(group[0]!.schemaId)}</code></p>${group.map((f) => extensionInput(f, form.extensions[f.name] ?? '')).join('')}</fieldset>`)
    .join('');
  return `${error ? errorBody(error) : ''}<p><a href="${id === undefined ? '/console/users' : `/console/users/${encodeURIComponent(id)}`}">${id === undefined ? 'All users' : 'Back to the user'}</a></p>
<form method="post" action="${e(action)}" class="card">
${csrfField(csrf)}
${input('userName', 'User name (required)', form.userName, ' required autocapitalize="none" spellcheck="false" autocomplete="off"')}
${input('givenName', 'Given name', form.givenName, ' autocomplete="off"')}
${input('familyName', 'Family name', form.familyName, ' autocomplete="off"')}
${input('displayName', 'Display name', form.displayName, ' autocomplete="off"')}
${input('title', 'Title', form.title, ' autocomplete="off"')}
${input('email', 'Email', form.email, ' inputmode="email" autocapitalize="none" spellcheck="false" autocomplete="off"')}
${input('phone', 'Phone number', form.phone, ' inputmode="tel" autocomplete="off"')}
${extensions}
<p><button type="submit" class="primary">${id === undefined ? 'Create user' : 'Save changes'}</button></p>
<p class="note">Saved through SCIM like an identity provider's change: validated by the team's rules, audited, and sent to the team's event subscribers.</p>
</form>`;
}

/** The confirmation before a deactivation: who, and what it does in this team. */
export function deactivateBody(csrf: string, resource: Resource, hides: boolean, error?: string): string {
  const id = encodeURIComponent(str(resource.id));
  const effect = hides
    ? 'This team hides deactivated users: the user leaves every SCIM read and every group\'s member list (the memberships are kept), cannot sign in, and their tokens and sessions end. Their userName becomes free for a new user. You can reactivate them from the Deactivated filter of the users list.'
    : 'The user reads active: false in SCIM, cannot sign in, and their tokens and sessions end. You can reactivate them later.';
  return `${error ? errorBody(error) : ''}<div class="card" role="alertdialog" aria-labelledby="confirm-title" aria-describedby="confirm-effect">
<h2 id="confirm-title">Deactivate <span dir="auto">${e(resource.userName)}</span>?</h2>
<p id="confirm-effect">${e(effect)}</p>
<form method="post" action="/console/users/${id}/deactivate">${csrfField(csrf)}<input type="hidden" name="confirm" value="yes">
<p><button type="submit" class="danger">Deactivate</button> <a href="/console/users/${id}">Cancel</a></p></form>
</div>`;
}

function memberPager(groupId: string, detail: GroupDetail): string {
  const pages = Math.min(Math.ceil(detail.total.n / PAGE_SIZE), MAX_MEMBER_PAGE);
  if (pages <= 1) return '';
  const at = detail.page;
  const wanted = new Set([1, at - 2, at - 1, at, at + 1, at + 2, pages].filter((n) => n >= 1 && n <= pages));
  const numbers = [...wanted].sort((a, b) => a - b);
  const link = (n: number, text: string, rel?: string) =>
    `<a href="/console/groups/${encodeURIComponent(groupId)}${e(q({ mq: detail.memberSearch, page: String(n) }))}#members"${rel ? ` rel="${rel}"` : ''}${n === at ? ' aria-current="page"' : ''}>${e(text)}</a>`;
  const parts: string[] = [];
  if (at > 1) parts.push(link(at - 1, 'Previous', 'prev'));
  let last = 0;
  for (const n of numbers) {
    if (n > last + 1) parts.push('<span aria-hidden="true">…</span>');
    parts.push(link(n, String(n)));
    last = n;
  }
  if (at < pages) parts.push(link(at + 1, 'Next', 'next'));
  return `<nav class="pager" aria-label="Member pages">${parts.join(' ')}</nav>`;
}

/** A group: its attributes, its members (searched, numbered pages, add and remove), its history. */
export function groupBody(detail: GroupDetail, now: Date, csrf: string, candidates?: { query: string; users: readonly Resource[] }, message?: string, error?: string): string {
  const groupId = str(detail.resource.id);
  const gid = encodeURIComponent(groupId);
  const rows = detail.members.map((m) => [
    `<a href="/console/users/${encodeURIComponent(m.id)}" dir="auto">${e(m.userName)}</a>`,
    timeHtml(m.joined, now),
    `<form method="post" action="/console/groups/${gid}/members/remove" class="inline">${csrfField(csrf)}<input type="hidden" name="user" value="${e(m.id)}"><button type="submit" class="link" aria-label="Remove ${e(m.userName)}">Remove</button></form>`,
  ]);
  const first = (detail.page - 1) * PAGE_SIZE + 1;
  const found = candidates
    ? candidates.users.length === 0
      ? '<p class="muted">No user matches.</p>'
      : dataTable({
          headers: ['userName', 'Name', 'Add'],
          caption: 'Users to add',
          rows: candidates.users.map((u) => [
            `<span dir="auto">${e(u.userName)}</span>`,
            `<span dir="auto">${e(str(u.displayName) || nameText(record(u.name)))}</span>`,
            `<form method="post" action="/console/groups/${gid}/members/add" class="inline">${csrfField(csrf)}<input type="hidden" name="user" value="${e(u.id)}"><button type="submit" class="secondary" aria-label="Add ${e(u.userName)}">Add</button></form>`,
          ]),
        })
    : '';
  return `${notice(message)}${error ? errorBody(error) : ''}<p><a href="/console/groups">All groups</a> · <a href="/console/access/mappings${e(q({ group: groupId }))}">Roles and entitlements mapped from this group</a></p>
<h2>Attributes</h2>${resourceSections(detail.type, detail.resource, now)}
<h2 id="members">Members</h2>
<form method="get" action="/console/groups/${gid}#members" class="filters" role="search" aria-label="Group members">
<div><label for="mq">Search members</label><input id="mq" name="mq" type="search" value="${e(detail.memberSearch)}" placeholder="start of userName"></div>
<div><button type="submit" class="secondary">Search</button></div>
</form>
<p class="muted" role="status">${e(totalText(first, detail.members.length, detail.total))}${detail.memberSearch ? ` members whose userName starts with "${e(detail.memberSearch)}"` : ' members'}.</p>
${dataTable({ headers: ['userName', 'Joined', 'Remove'], rows, empty: 'No members.', caption: 'Members' })}
${memberPager(groupId, detail)}
<h3>Add members</h3>
<form method="get" action="/console/groups/${gid}" class="filters" role="search" aria-label="Users to add">
<div><label for="add">Find users to add</label><input id="add" name="add" type="search" value="${e(candidates?.query)}" placeholder="start of userName or name" aria-describedby="add-hint"><small id="add-hint">Search by userName, given or family name, then choose Add.</small></div>
<div><button type="submit" class="secondary">Find</button></div>
</form>
${found}
<h2>History</h2>${historyTable(detail.history)}`;
}
