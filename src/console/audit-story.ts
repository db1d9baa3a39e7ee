/**
 * The audit log as a story (issue 30 item 4): one audit row turned into a sentence a person reads
 * ("admin@acme.example added 500 members to Engineering through Entra ID production") with the
 * actor and the resource named and linked to their console pages, and its details as short
 * labelled lines (a large member change gives its counts and the first few names, never its ids).
 * Pure: the names come resolved (audit.ts reads them for a whole page at once); no SQL, no HTML.
 */

/** A named thing in a story: its name, and its console page when it has one. */
export interface Named {
  readonly text: string;
  readonly href?: string;
}

/** Text, or a named (linked) thing. */
export type StoryPart = string | Named;

/** One line of an event's details: a label and what it says. */
export interface DetailLine {
  readonly label: string;
  readonly parts: readonly StoryPart[];
}

export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string | null;
  readonly requestId: string | null;
  /** How the actor came in: scim, oauth, cli or console. */
  readonly via: string;
  /** Who acted, named. */
  readonly actor: Named;
  /** The connection the actor acted through, when the row records one. */
  readonly connection?: Named;
  /** The resource acted on, named (absent for team-wide events). */
  readonly resource?: Named;
  /** The whole sentence, the actor first. */
  readonly story: readonly StoryPart[];
  /** Set when the action has no sentence of its own and is told by its raw name (every known action has one). */
  readonly raw?: true;
  readonly details: readonly DetailLine[];
}

/** The names a page's rows point at, by id, each map read in one query (audit.ts). */
export interface PageNames {
  readonly users: ReadonlyMap<string, string>;
  readonly groups: ReadonlyMap<string, string>;
  readonly clients: ReadonlyMap<string, { name: string; ownTeam: boolean }>;
  readonly tokens: ReadonlyMap<string, string>;
  readonly connections: ReadonlyMap<string, string>;
  /** Setup links by id: to whom each was sent. */
  readonly setupLinks?: ReadonlyMap<string, string>;
}

/** The stored row, as audit.ts hands it over (actor and detail still JSON text). */
export interface RawAudit {
  readonly id: string;
  readonly at: string;
  readonly actor: string;
  readonly request_id: string | null;
  readonly action: string;
  readonly resource_type: string;
  readonly resource_id: string | null;
  readonly detail: string;
  readonly actor_connection_id?: string | null;
}

export interface ActorJson {
  readonly via?: string;
  readonly clientId?: string | null;
  readonly userId?: string | null;
  readonly connectionId?: string | null;
  readonly setupLinkId?: string;
}

/** How many members of a change are named in its details; the rest are counted. */
export const FIRST_NAMES = 5;

export const parseJson = <T>(text: string, fallback: T): T => {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? (value as T) : fallback;
  } catch {
    return fallback;
  }
};

/** A member list as a summary holds it: an array of ids, or the first hundred and the count (scim/groups.ts idList). */
export function memberIds(value: unknown): { ids: readonly string[]; count: number } | undefined {
  if (Array.isArray(value)) return { ids: value.filter((v): v is string => typeof v === 'string'), count: value.length };
  if (value !== null && typeof value === 'object') {
    const { first, count } = value as { first?: unknown; count?: unknown };
    if (Array.isArray(first) && typeof count === 'number') return { ids: first.filter((v): v is string => typeof v === 'string'), count };
  }
  return undefined;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** "a, b and c" (at most `max` items, then "and N more"). */
export function listText(items: readonly string[], max = 3): string {
  const shown = items.slice(0, max);
  const rest = items.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`;
  return shown.length <= 1 ? shown.join('') : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}

export const storyText = (parts: readonly StoryPart[]): string => parts.map((p) => (typeof p === 'string' ? p : p.text)).join('');

const userNamed = (names: PageNames, id: string, fallback?: string): Named => {
  const name = names.users.get(id);
  return name !== undefined ? { text: name, href: `/console/users/${encodeURIComponent(id)}` } : { text: fallback ?? `user ${id}` };
};

const connectionNamed = (names: PageNames, id: string): Named => ({ text: names.connections.get(id) ?? `connection ${id}`, href: `/console/connections/${encodeURIComponent(id)}` });

/** A setup link, by whom it was sent to; its list is on the wizard's page. */
const setupLinkNamed = (names: PageNames, id: string, recipient?: string): Named => {
  const to = names.setupLinks?.get(id) ?? recipient;
  return { text: to !== undefined ? `the setup link for ${to}` : 'a setup link', href: '/console/connect' };
};

const clientNamed = (names: PageNames, id: string): Named => {
  const client = names.clients.get(id);
  if (!client) return { text: `client ${id}` };
  return client.ownTeam ? { text: client.name, href: `/console/connections/clients/${encodeURIComponent(id)}` } : { text: client.name };
};

const groupNamed = (names: PageNames, id: string): Named => {
  const name = names.groups.get(id);
  return name !== undefined ? { text: name, href: `/console/groups/${encodeURIComponent(id)}` } : { text: `group ${id}` };
};

/** The resource of a row, named from the page's names or, for one gone since, from the row's own detail. */
function resourceNamed(row: RawAudit, detail: Record<string, unknown>, names: PageNames): Named | undefined {
  const id = row.resource_id;
  if (id === null) return undefined;
  switch (row.resource_type) {
    case 'User':
      return userNamed(names, id, str(detail.userName) ?? `user ${id}`);
    case 'Group': {
      const name = names.groups.get(id);
      return name !== undefined ? { text: name, href: `/console/groups/${encodeURIComponent(id)}` } : { text: str(detail.displayName) ?? `group ${id}` };
    }
    case 'Token': {
      const name = names.tokens.get(id) ?? str(detail.name);
      // A connection's token is listed on that connection's page; the others on the Connections page.
      const href = str(detail.connectionId) !== undefined ? `/console/connections/${encodeURIComponent(detail.connectionId as string)}` : '/console/connections';
      return name !== undefined ? { text: `token “${name}”`, href } : { text: 'a token' };
    }
    case 'Client':
      return clientNamed(names, id);
    case 'Connection':
      return connectionNamed(names, id);
    case 'Subscription':
      return { text: `subscription ${id}`, href: `/console/events/subscriptions/${encodeURIComponent(id)}` };
    case 'Team':
      return { text: 'the team' };
    case 'SetupLink':
      return setupLinkNamed(names, id, str(detail.recipient));
    case 'Role':
      return { text: `role ${id}` };
    case 'Entitlement':
      return { text: `entitlement ${str(detail.type) !== undefined ? `${detail.type as string} ` : ''}${id}` };
    case 'ResourceType':
      return { text: `entitlement type ${id}` };
    default:
      return { text: `${row.resource_type.toLowerCase()} ${id}` };
  }
}

/** Who acted, and through what (a connection, a client, the console or the CLI). */
function actorOf(actor: ActorJson, connectionId: string | null, names: PageNames): { who: Named; through: StoryPart[]; connection?: Named } {
  // A colleague without an account, in the restricted wizard a one-time setup link opened.
  if (str(actor.setupLinkId) !== undefined) return { who: { text: 'A colleague' }, through: [' through ', setupLinkNamed(names, actor.setupLinkId!)] };
  const connection = connectionId !== null ? connectionNamed(names, connectionId) : undefined;
  const client = str(actor.clientId) !== undefined ? clientNamed(names, actor.clientId!) : undefined;
  const userId = str(actor.userId);
  if (userId !== undefined) {
    const who = userNamed(names, userId);
    if (connection) return { who, through: [' through ', connection], connection };
    if (client) return { who, through: [' through ', client] };
    if (actor.via === 'console') return { who, through: [' in the console'] };
    if (actor.via === 'cli') return { who, through: [' with the CLI'] };
    if (actor.via === 'scim') return { who, through: [' through the SCIM API'] };
    return { who, through: [] };
  }
  if (connection) return { who: connection, through: client ? [' through ', client] : [], connection };
  if (client) return { who: client, through: [] };
  const who: Named = { text: actor.via === 'cli' ? 'The operator (CLI)' : actor.via === 'scim' ? 'A provisioning token' : actor.via === 'console' ? 'An admin' : 'Rollcall' };
  return { who, through: [] };
}

/** Plain verbs of actions whose sentence is "<actor> <verb> <resource>". */
const VERBS: Readonly<Record<string, string>> = {
  replace: 'replaced',
  deactivate: 'deactivated',
  activate: 'reactivated',
  delete: 'deleted',
  token_revoked: 'revoked',
  client_created: 'created OAuth client',
  client_secret_rotated: 'rotated the secret of',
  client_secret_added: 'added a secret to',
  client_secret_revoked: 'revoked a secret of',
  client_updated: 'changed OAuth client',
  client_deleted: 'deleted OAuth client',
  client_key_added: 'added a signing key to',
  client_key_removed: 'removed a signing key of',
  client_federation_added: 'added a federated credential to',
  client_federation_removed: 'removed a federated credential of',
  password_changed: 'changed the password of',
  subscription_created: 'created',
  subscription_paused: 'paused',
  subscription_resumed: 'resumed',
  subscription_replayed: 'replayed',
  subscription_deleted: 'deleted',
  subscription_secret_rotated: 'rotated the secret of',
  stream_created: 'created SSF stream',
  stream_updated: 'updated SSF stream',
  stream_replaced: 'replaced SSF stream',
  stream_deleted: 'deleted SSF stream',
  stream_status_changed: 'changed the status of SSF stream',
  stream_subject_added: 'added a subject to SSF stream',
  stream_subject_removed: 'removed a subject from SSF stream',
  stream_verification_requested: 'asked for verification of SSF stream',
  schema_added: 'added schema extension',
  schema_removed: 'removed schema extension',
  connection_created: 'created connection',
  connection_renamed: 'renamed connection',
  connection_deleted: 'deleted connection',
  role_added: 'added',
  role_updated: 'changed',
  role_removed: 'removed',
  entitlement_type_added: 'added',
  entitlement_type_updated: 'changed',
  entitlement_type_removed: 'removed',
  entitlement_added: 'added',
  entitlement_updated: 'changed',
  entitlement_removed: 'removed',
  admin_password_link_issued: 'made a one-time password link for',
  admin_password_reset: 'set a new password with a password link for',
  application_revoked: 'revoked every token for this team of application',
  setup_link_created: 'made',
  setup_link_used: 'opened',
  setup_link_revoked: 'withdrew',
  totp_enabled: 'set up an authenticator app for',
  totp_removed: 'removed the authenticator app of',
  second_factors_reset: 'reset the second factors (passkeys, authenticator app, recovery codes) of',
};

/** Phrases told by phraseOf's default branch: the raw action name, which no known action should need. */
const RAW = new WeakSet<readonly StoryPart[]>();

/** The kind word before a User or Group resource ("deleted user ada"). */
const kindWord = (row: RawAudit): string => (row.resource_type === 'User' ? 'user ' : row.resource_type === 'Group' ? 'group ' : '');

/** What a member change did, in words, or undefined when the detail holds none. */
function memberPhrase(detail: Record<string, unknown>, group: Named, names: PageNames): StoryPart[] | undefined {
  const added = memberIds(detail.added);
  const removed = memberIds(detail.removed);
  const cleared = detail.cleared === true;
  if (!added && !removed && !cleared) return undefined;
  const one = (list: { ids: readonly string[]; count: number }): StoryPart => (list.count === 1 && list.ids[0] !== undefined ? userNamed(names, list.ids[0]) : plural(list.count, 'member'));
  if (cleared) return added ? ['replaced the members of ', group, ' with ', plural(added.count, 'member')] : ['removed every member from ', group];
  if (added && removed) return ['added ', plural(added.count, 'member'), ' to and removed ', plural(removed.count, 'member'), ' from ', group];
  if (added) return ['added ', one(added), ' to ', group];
  return ['removed ', one(removed!), ' from ', group];
}

/** What the actor did, after its name: " created user ada". */
function phraseOf(row: RawAudit, detail: Record<string, unknown>, resource: Named | undefined, names: PageNames): StoryPart[] {
  const target: StoryPart[] = resource ? [kindWord(row), resource] : [];
  const action = row.action;
  if (action === 'members' || (action === 'patch' && row.resource_type === 'Group' && resource)) {
    const members = memberPhrase(detail, resource ?? { text: 'a group' }, names);
    if (members) return members;
  }
  switch (action) {
    case 'create': {
      const members = typeof detail.members === 'number' && detail.members > 0 ? [' with ', plural(detail.members, 'member')] : [];
      return ['created ', ...target, ...members];
    }
    case 'patch': {
      const changed = Array.isArray(detail.changed) ? detail.changed.filter((c): c is string => typeof c === 'string') : [];
      return changed.length > 0 ? ['changed ', listText(changed), ' of ', ...target] : ['changed ', ...target];
    }
    case 'sign_in':
      if (detail.method === 'passkey') return ['signed in with a passkey'];
      if (detail.secondFactor === 'totp') return ['signed in with a password and an authenticator app code'];
      if (detail.secondFactor === 'recovery code') return ['signed in with a password and a recovery code'];
      return ['signed in'];
    case 'members':
      return ['changed who belongs to ', ...target];
    case 'access_mapped':
    case 'access_unmapped': {
      const group: StoryPart = str(detail.group) !== undefined ? groupNamed(names, detail.group as string) : 'a group';
      return action === 'access_mapped' ? ['gave ', ...target, ' to the members of group ', group] : ['took ', ...target, ' from the members of group ', group];
    }
    case 'catalog_replaced':
      return ['replaced the catalog of roles and entitlements'];
    case 'catalog_schemas_set':
      return ['changed which schemas describe the catalog'];
    case 'admin_added':
      return detail.created === true ? ['added ', ...target, ' as a new admin'] : ['made ', ...target, ' an admin'];
    case 'admin_removed':
      return ['removed ', ...target, ' as admin'];
    case 'passkey_added':
      return ['added a passkey', str(detail.name) !== undefined ? ` “${detail.name as string}”` : '', ' for ', ...target];
    case 'passkey_removed':
      return ['removed the passkey', str(detail.name) !== undefined ? ` “${detail.name as string}”` : '', ' of ', ...target];
    case 'recovery_codes_generated':
      return ['made ', typeof detail.count === 'number' ? plural(detail.count, 'new recovery code') : 'new recovery codes', ' for ', ...target];
    case 'recovery_code_used':
      return ['used a recovery code', typeof detail.left === 'number' ? ` (${plural(detail.left, 'code')} left)` : ''];
    case 'token_issued':
      if (str(detail.name) !== undefined && str(detail.connectionId) !== undefined) return ['issued ', ...target, ' for ', connectionNamed(names, detail.connectionId as string)];
      return str(detail.name) !== undefined ? ['issued ', ...target] : ['was issued tokens', ...(str(detail.grantType) ? [` (${detail.grantType as string})`] : [])];
    case 'grant_revoked':
      return ['had a token family revoked', ...(str(detail.reason) ? [`: ${detail.reason as string}`] : [])];
    case 'team_updated':
      return ['changed the team settings', Object.keys(detail).length > 0 ? ` (${listText(Object.keys(detail))})` : ''];
    case 'exported':
      return [`exported ${str(detail.what) ?? 'data'} as CSV`];
    default: {
      const verb = VERBS[action];
      if (verb !== undefined) return [`${verb} `, ...target];
      const raw: StoryPart[] = [action.replace(/_/g, ' '), ...(target.length > 0 ? [' ', ...target] : [])];
      RAW.add(raw);
      return raw;
    }
  }
}

/** Member ids a row's details will name: the first few of each list (resolved with the page's names). */
export function namedMembersOf(detail: Record<string, unknown>): string[] {
  return [memberIds(detail.added), memberIds(detail.removed)].flatMap((list) => (list ? list.ids.slice(0, FIRST_NAMES) : []));
}

/** One value of a detail, briefly: text, a number, a list's first items, an object as short JSON. */
function briefValue(value: unknown): string {
  if (typeof value === 'string') return value.length > 200 ? `${value.slice(0, 200)}…` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return listText(value.map(briefValue), 10);
  const json = JSON.stringify(value) ?? '';
  return json.length > 200 ? `${json.slice(0, 200)}…` : json;
}

function detailLines(row: RawAudit, detail: Record<string, unknown>, names: PageNames): DetailLine[] {
  const lines: DetailLine[] = [];
  for (const [key, value] of Object.entries(detail)) {
    // The sentence says it already ("removed every member from ...").
    if (key === 'cleared') continue;
    const members = key === 'added' || key === 'removed' ? memberIds(value) : undefined;
    if (members) {
      const first = members.ids.slice(0, FIRST_NAMES).map((id) => userNamed(names, id));
      const parts: StoryPart[] = [plural(members.count, 'member'), ': '];
      first.forEach((named, i) => parts.push(...(i > 0 ? [', '] : []), named));
      if (members.count > first.length) parts.push(` and ${(members.count - first.length).toLocaleString('en-US')} more`);
      lines.push({ label: key === 'added' ? 'Added' : 'Removed', parts });
    } else if (key === 'changed' && Array.isArray(value)) {
      lines.push({ label: 'Attributes changed', parts: [listText(value.map(briefValue), 20)] });
    } else if (key === 'userId' && typeof value === 'string') {
      lines.push({ label: 'User', parts: [userNamed(names, value)] });
    } else if (key === 'connectionId' && typeof value === 'string') {
      lines.push({ label: 'Connection', parts: [connectionNamed(names, value)] });
    } else {
      lines.push({ label: `${key.charAt(0).toUpperCase()}${key.slice(1)}`, parts: [briefValue(value)] });
    }
  }
  if (row.request_id !== null) lines.push({ label: 'Request id', parts: [row.request_id] });
  lines.push({ label: 'Event id', parts: [row.id] });
  return lines;
}

/** One row as a story. */
export function storyOf(row: RawAudit, names: PageNames): AuditEntry {
  const actor = parseJson<ActorJson>(row.actor, {});
  const detail = parseJson<Record<string, unknown>>(row.detail, {});
  const connectionId = row.actor_connection_id ?? str(actor.connectionId) ?? null;
  const { who, through, connection } = actorOf(actor, connectionId, names);
  const resource = resourceNamed(row, detail, names);
  const phrase = row.action === 'sign_in_failed' || row.action === 'second_factor_failed' ? [] : phraseOf(row, detail, resource, names);
  // Opening a setup link is the link's own act: "A colleague opened the setup link for ...", no "through" again.
  const by = row.action === 'setup_link_used' ? [] : through;
  const story: StoryPart[] =
    row.action === 'sign_in_failed'
      ? ['A sign-in as ', resource ?? who, ' failed', ...through]
      : row.action === 'second_factor_failed'
        ? ['A second-factor check of ', resource ?? who, ' failed', detail.method === 'passkey' ? ' (a passkey)' : detail.method === 'code' ? ' (a code)' : '', ...through]
        : [who, ' ', ...phrase, ...by];
  return {
    id: row.id,
    at: row.at,
    action: row.action,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    requestId: row.request_id,
    via: str(actor.via) ?? '',
    actor: who,
    ...(connection ? { connection } : {}),
    ...(resource ? { resource } : {}),
    story: story.filter((p) => p !== ''),
    ...(RAW.has(phrase) ? { raw: true as const } : {}),
    details: detailLines(row, detail, names),
  };
}
