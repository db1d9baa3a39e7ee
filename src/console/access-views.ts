/**
 * The console's Roles & entitlements pages as server-rendered HTML, in the look of views.ts: the
 * team's catalog (roles; entitlement types, required or not, multi- or single-valued, and their
 * entitlements) with the forms that add and remove each, the discovery schemas setting, the
 * confirmation that forces the removal of an entry users hold, who holds an entry, the group
 * mappings with their add and remove forms, and a user's effective access with where each grant
 * came from. Values, names
 * and descriptions come from admins, the admin API and identity providers: every one goes through
 * escape-html, every id in a URL through encodeURIComponent. Every action is a POST form with the
 * CSRF token; no inline script or style.
 */
import escapeHtml from 'escape-html';
import type { CatalogView, EntryView, TypeView } from '../access/catalog.ts';
import { entryChoice } from './access.ts';
import type { EntryRef, HoldersPage, MappingView, UserAccess } from './access.ts';
import { timeHtml } from './format.ts';
import { dataTable } from './table.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const csrfField = (csrf: string): string => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;
const hidden = (name: string, value: string): string => `<input type="hidden" name="${e(name)}" value="${e(value)}">`;
const groupHref = (id: string): string => `/console/groups/${encodeURIComponent(id)}`;

/** A removal the domain refused because users hold the entry or groups map to it, offered again with force. */
export interface Confirm {
  /** The form's action (the same removal). */
  readonly action: string;
  /** Its fields, besides the CSRF token and `force`. */
  readonly fields: Readonly<Record<string, string>>;
  /** The domain's refusal, naming the counts. */
  readonly message: string;
  /** The question (`Remove role "admin" anyway?`) and the button that says yes. */
  readonly title: string;
  readonly button: string;
}

/** What a page shows above its content: a success, an error, or a removal to confirm. */
export interface Notice {
  readonly message?: string;
  readonly error?: string;
  readonly confirm?: Confirm;
}

function confirmForm(csrf: string, c: Confirm): string {
  const fields = Object.entries(c.fields).map(([k, v]) => hidden(k, v)).join('');
  return `<form method="post" action="${e(c.action)}" class="card" aria-labelledby="confirm-title">
${csrfField(csrf)}${fields}${hidden('force', '1')}
<h2 id="confirm-title">${e(c.title)}</h2>
<div class="alert" role="alert">${e(c.message)}</div>
<p>Removing it takes it from every user who holds it (their SCIM <code>roles</code> or <code>entitlements</code> are rewritten, each change audited and sent as an event) and deletes the group mappings to it, in one transaction. The identity provider may assign it again if it is still in its own configuration.</p>
<p><button type="submit" class="danger">${e(c.button)}</button> <a href="/console/access">Cancel</a></p>
</form>`;
}

const notice = (csrf: string, n: Notice): string =>
  `${n.message ? `<p class="ok" role="status">${e(n.message)}</p>` : ''}${n.error ? `<div class="alert" role="alert">${e(n.error)}</div>` : ''}${n.confirm ? confirmForm(csrf, n.confirm) : ''}`;

/** The links between the two pages of the group. */
function subNav(current: 'catalog' | 'mappings'): string {
  const link = (id: typeof current, href: string, label: string) => `<a href="${href}"${id === current ? ' aria-current="page"' : ''}>${label}</a>`;
  return `<nav class="pager" aria-label="Roles and entitlements">${link('catalog', '/console/access', 'Catalog')}${link('mappings', '/console/access/mappings', 'Group mappings')}</nav>`;
}

/**
 * A one-button form (hidden fields naming what it acts on); `label`, its accessible name, tells it
 * apart from the others of the page and begins with the button's text (WCAG 2.5.3, label in name).
 */
function removeButton(csrf: string, action: string, fields: Record<string, string>, label: string, text = 'Remove'): string {
  return `<form method="post" action="${action}" class="inline">${csrfField(csrf)}${Object.entries(fields).map(([k, v]) => hidden(k, v)).join('')}<button type="submit" class="danger" aria-label="${e(label)}">${e(text)}</button></form>`;
}

const holdersHref = (entry: EntryRef): string => `/console/access/holders?entry=${encodeURIComponent(entryChoice(entry))}`;

function entryRows(entries: readonly EntryView[], ref: (entry: EntryView) => EntryRef, remove: (entry: EntryView) => string, empty: string): string {
  return dataTable({
    headers: ['Value (SCIM id)', 'Display name', 'Description', 'Actions'],
    rows: entries.map((r) => [
      `<code>${e(r.value)}</code>`,
      `<span class="wrap" dir="auto">${e(r.displayName)}</span>`,
      `<span class="wrap" dir="auto">${e(r.description)}</span>`,
      `<a href="${e(holdersHref(ref(r)))}" aria-label="${e(`Holders of ${r.value}`)}">Holders</a> ${remove(r)}`,
    ]),
    empty,
  });
}

function typeSection(csrf: string, t: TypeView, index: number): string {
  const facts = `${t.required ? 'required: every user holds at least one' : 'optional'}; ${t.multiValued ? 'multi-valued: a user may hold several' : 'single-valued: a user holds at most one'}`;
  return `<section class="card" aria-labelledby="type-${index}">
<h3 id="type-${index}"><span dir="auto">${e(t.name)}</span> <code>${e(t.endpoint)}</code></h3>
<p class="note">${e(facts)}.${t.description ? ` <span dir="auto">${e(t.description)}</span>` : ''}</p>
${entryRows(t.entitlements, (r) => ({ kind: 'entitlement', type: t.name, value: r.value }), (r) => removeButton(csrf, '/console/access/entitlements/remove', { type: t.name, value: r.value }, `Remove entitlement ${r.value} of ${t.name}`), 'No entitlements of this type yet.')}
<p>${removeButton(csrf, '/console/access/types/remove', { name: t.name }, `Remove this type and its entitlements: ${t.name}`, 'Remove this type and its entitlements')}</p>
</section>`;
}

/** The form values an add form keeps after a refusal. */
export type AddForm = Readonly<Record<string, string>>;

function addForms(csrf: string, catalog: CatalogView, kept: { form?: 'role' | 'type' | 'entitlement'; values?: AddForm }): string {
  const v = (form: 'role' | 'type' | 'entitlement', name: string): string => (kept.form === form ? (kept.values?.[name] ?? '') : '');
  const entryFields = (prefix: string, form: 'role' | 'entitlement') => `<label for="${prefix}-value">Value (its SCIM id, what users' <code>${form === 'role' ? 'roles' : 'entitlements'}[].value</code> hold; exact case)</label>
<input id="${prefix}-value" name="value" type="text" required maxlength="256" spellcheck="false" autocapitalize="none" value="${e(v(form, 'value'))}">
<label for="${prefix}-display">Display name</label>
<input id="${prefix}-display" name="displayName" type="text" required maxlength="256" dir="auto" value="${e(v(form, 'displayName'))}">
<label for="${prefix}-description">Description (optional)</label>
<input id="${prefix}-description" name="description" type="text" maxlength="1000" dir="auto" value="${e(v(form, 'description'))}">`;
  const typeOptions = catalog.entitlementTypes.map((t) => `<option value="${e(t.name)}"${v('entitlement', 'type') === t.name ? ' selected' : ''}>${e(t.name)}</option>`).join('');
  const multi = v('type', 'multiValued') !== 'single';
  return `<h2>Add a role</h2>
<form method="post" action="/console/access/roles" class="card">
${csrfField(csrf)}
${entryFields('role', 'role')}
<p><button type="submit" class="primary">Add role</button></p>
</form>
<h2>Add an entitlement type</h2>
<form method="post" action="/console/access/types" class="card">
${csrfField(csrf)}
<label for="type-name">Name (a SCIM resource type, e.g. License)</label>
<input id="type-name" name="name" type="text" required maxlength="64" pattern="[A-Za-z][A-Za-z0-9 _\\-]{0,63}" spellcheck="false" value="${e(v('type', 'name'))}">
<label for="type-endpoint">Endpoint (e.g. /Licenses)</label>
<input id="type-endpoint" name="endpoint" type="text" required maxlength="65" pattern="/[A-Za-z][A-Za-z0-9_\\-]{0,63}" spellcheck="false" autocapitalize="none" value="${e(v('type', 'endpoint'))}">
<label for="type-multi">How many a user may hold</label>
<select id="type-multi" name="multiValued"><option value="multi"${multi ? ' selected' : ''}>several (multi-valued)</option><option value="single"${multi ? '' : ' selected'}>at most one (single-valued)</option></select>
<label class="check"><input type="checkbox" name="required" value="1"${v('type', 'required') ? ' checked' : ''}> Required: every user must hold at least one entitlement of this type</label>
<label for="type-description">Description (optional)</label>
<input id="type-description" name="description" type="text" maxlength="1000" dir="auto" value="${e(v('type', 'description'))}">
<p><button type="submit" class="primary">Add entitlement type</button></p>
</form>
<h2>Add an entitlement</h2>
${
  catalog.entitlementTypes.length === 0
    ? '<p class="muted">Add an entitlement type first: every entitlement belongs to one.</p>'
    : `<form method="post" action="/console/access/entitlements" class="card">
${csrfField(csrf)}
<label for="entitlement-type">Type</label>
<select id="entitlement-type" name="type">${typeOptions}</select>
${entryFields('entitlement', 'entitlement')}
<p><button type="submit" class="primary">Add entitlement</button></p>
</form>`
}`;
}

function schemasForm(csrf: string, catalog: CatalogView): string {
  const option = (value: 'okta' | 'ietf', label: string) => `<option value="${value}"${catalog.schemas === value ? ' selected' : ''}>${label}</option>`;
  return `<h2>Discovery schemas</h2>
<form method="post" action="/console/access/schemas" class="card">
${csrfField(csrf)}
<label for="schemas">Schemas shown in <code>/ResourceTypes</code> and <code>/Schemas</code></label>
<select id="schemas" name="schemas" aria-describedby="schemas-note">${option('okta', 'Okta (urn:okta:scim:schemas:core:1.0:Role and :Entitlement)')}${option('ietf', 'IETF draft (draft-ietf-scim-roles-entitlements)')}</select>
<p class="note" id="schemas-note">Okta Identity Governance recognises only Okta's schemas; choose the IETF draft's for clients that follow it.</p>
<p><button type="submit" class="primary">Save schemas</button></p>
</form>`;
}

/** The catalog page: roles, entitlement types with their entitlements, the add forms, the schemas setting. */
export function catalogBody(csrf: string, catalog: CatalogView, shown: Notice = {}, kept: { form?: 'role' | 'type' | 'entitlement'; values?: AddForm } = {}): string {
  const empty = catalog.roles.length === 0 && catalog.entitlementTypes.length === 0;
  return `${subNav('catalog')}
${notice(csrf, shown)}
<p>The roles and entitlements users of this team may hold. With a catalog, identity providers (Okta Identity Governance, the IETF draft's clients) discover them at <code>/Roles</code> and each type's endpoint, and every user's <code>roles</code> and <code>entitlements</code> must name them. The same catalog is managed with <code>rollcall role ...</code>, <code>rollcall entitlement ...</code> and the admin API (<code>PUT /v2/admin/Catalog</code>); every change is audited and is an event.</p>
${empty ? '<p class="muted">This team has no catalog: users\' roles and entitlements are free text, and discovery shows none. Add a role or an entitlement type below.</p>' : ''}
<h2>Roles</h2>
${entryRows(catalog.roles, (r) => ({ kind: 'role', value: r.value }), (r) => removeButton(csrf, '/console/access/roles/remove', { value: r.value }, `Remove role ${r.value}`), 'No roles.')}
<h2>Entitlement types</h2>
${catalog.entitlementTypes.length === 0 ? '<p class="muted">No entitlement types.</p>' : catalog.entitlementTypes.map((t, i) => typeSection(csrf, t, i)).join('\n')}
${addForms(csrf, catalog, kept)}
${schemasForm(csrf, catalog)}`;
}

/** Every entry of the catalog, for the mapping form's choice. */
function entryOptions(catalog: CatalogView, selected: string): string {
  const option = (ref: EntryRef, label: string) => {
    const value = entryChoice(ref);
    return `<option value="${e(value)}"${value === selected ? ' selected' : ''}>${e(label)}</option>`;
  };
  const roles = catalog.roles.map((r) => option({ kind: 'role', value: r.value }, `${r.displayName} (${r.value})`)).join('');
  const types = catalog.entitlementTypes
    .filter((t) => t.entitlements.length > 0)
    .map((t) => `<optgroup label="${e(`Entitlements: ${t.name}`)}">${t.entitlements.map((x) => option({ kind: 'entitlement', type: t.name, value: x.value }, `${x.displayName} (${x.value})`)).join('')}</optgroup>`)
    .join('');
  return `${roles ? `<optgroup label="Roles">${roles}</optgroup>` : ''}${types}`;
}

const mappingRef = (m: MappingView): EntryRef => (m.kind === 'role' ? { kind: 'role', value: m.value } : { kind: 'entitlement', type: m.type ?? '', value: m.value });

/** The group mappings page: the list (all, or one group's), with remove buttons, and the add form. */
export function mappingsBody(csrf: string, catalog: CatalogView, mappings: readonly MappingView[], group: { id: string; name: string } | undefined, form: { group: string; entry: string }, shown: Notice = {}, now: Date = new Date()): string {
  const table = dataTable({
    headers: ['Group', 'Kind', 'Value', 'Display name', 'Mapped', 'Actions'],
    rows: mappings.map((m) => {
      const what = m.kind === 'role' ? 'role' : `entitlement (${m.type ?? ''})`;
      const label = `Unmap ${m.group.displayName} from ${m.kind} ${m.value}`;
      return [
        `<a href="${groupHref(m.group.id)}" class="wrap" dir="auto">${e(m.group.displayName)}</a>`,
        e(what),
        `<code>${e(m.value)}</code>`,
        `<span dir="auto">${e(m.display)}</span>`,
        timeHtml(m.created, now),
        removeButton(csrf, '/console/access/mappings/remove', { group: m.group.id, entry: entryChoice(mappingRef(m)) }, label, 'Unmap'),
      ];
    }),
    empty: 'No group is mapped to a role or an entitlement.',
  });
  const options = entryOptions(catalog, form.entry);
  const scope = group ? `<p>Only the mappings of group <a href="${groupHref(group.id)}" dir="auto">${e(group.name)}</a>. <a href="/console/access/mappings">All mappings</a></p>` : '';
  return `${subNav('mappings')}
${notice(csrf, shown)}
<p>The members of a mapped group hold what it is mapped to, besides what the identity provider assigned them directly: their effective access, which the application reads at <code>/v2/access</code> (a user's page shows it too). A user's SCIM <code>roles</code> and <code>entitlements</code> keep only what the identity provider wrote. Also managed with <code>rollcall role map</code> and the admin API (<code>/v2/admin/Catalog/mappings</code>).</p>
${scope}
${table}
<h2>Map a group</h2>
${
  options === ''
    ? '<p class="muted">The catalog has no role or entitlement to map a group to: add them on the <a href="/console/access">catalog</a> first.</p>'
    : `<form method="post" action="/console/access/mappings" class="card">
${csrfField(csrf)}
<label for="map-group">Group (its id or its displayName)</label>
<input id="map-group" name="group" type="text" required maxlength="256" spellcheck="false" dir="auto" value="${e(form.group || group?.id)}">
<label for="map-entry">Role or entitlement</label>
<select id="map-entry" name="entry" required>${options}</select>
<p><button type="submit" class="primary">Map group</button></p>
</form>`
}`;
}

function sourcesText(sources: UserAccess['roles'][number]['sources']): string {
  return sources.map((s) => (s.type === 'direct' ? 'direct' : `via group <a href="${groupHref(s.value)}" dir="auto">${e(s.display)}</a>`)).join(', ');
}

/** The user page's effective access: roles and entitlements, each with its sources. */
export function accessSection(access: UserAccess): string {
  if (!access.active) return '<h2>Access</h2><p class="muted">A deactivated user holds no roles and no entitlements.</p>';
  const roles = dataTable({
    headers: ['Role', 'Display name', 'Sources'],
    rows: access.roles.map((r) => [`<code>${e(r.value)}</code>`, `<span dir="auto">${e(r.display)}</span>`, sourcesText(r.sources)]),
    empty: 'No roles.',
  });
  const entitlements = dataTable({
    headers: ['Type', 'Entitlement', 'Display name', 'Sources'],
    rows: access.entitlements.map((x) => [`<span dir="auto">${e(x.type)}</span>`, `<code>${e(x.value)}</code>`, `<span dir="auto">${e(x.display)}</span>`, sourcesText(x.sources)]),
    empty: 'No entitlements.',
  });
  return `<h2>Access</h2>
<p class="muted">What the user may do: what the identity provider assigned directly, and what its groups are mapped to (<a href="/console/access/mappings">group mappings</a>), as <code>GET /v2/access/users/{id}</code> answers.</p>
<h3>Roles</h3>
${roles}
<h3>Entitlements</h3>
${entitlements}`;
}

/** Who holds an entry: one page of active users, each with its sources, and the link to the next. */
export function holdersBody(entry: EntryRef, display: string | undefined, page: HoldersPage, error?: string): string {
  const what = entry.kind === 'role' ? `role <code>${e(entry.value)}</code>` : `entitlement <code>${e(entry.value)}</code> of type <span dir="auto">${e(entry.type)}</span>`;
  const table = dataTable({
    headers: ['userName', 'Sources'],
    rows: page.users.map((u) => [`<a href="/console/users/${encodeURIComponent(u.id)}" class="wrap" dir="auto">${e(u.userName)}</a>`, sourcesText(u.sources)]),
    empty: 'Nobody holds it.',
  });
  const next = page.nextCursor ? `<nav class="pager" aria-label="Pages"><a href="${e(`${holdersHref(entry)}&cursor=${encodeURIComponent(page.nextCursor)}`)}" rel="next">Next holders</a></nav>` : '';
  return `<p><a href="/console/access">Catalog</a> · <a href="/console/access/mappings">Group mappings</a></p>
${error ? `<div class="alert" role="alert">${e(error)}</div>` : ''}
<p>The active users who hold the ${what}${display ? ` (<span dir="auto">${e(display)}</span>)` : ''}: assigned directly, or through a group mapped to it; by user id, as <code>GET /v2/access/${entry.kind === 'role' ? 'roles/{value}' : 'entitlements/{type}/{value}'}/users</code> answers.</p>
${table}
${next}`;
}
