/**
 * The Users service: create, read, list, replace, patch, deactivate and activate, each write one
 * transaction guarded by the row's version (DESIGN.md sections 3 and 4). Deactivated users are
 * hidden unless the team made them visible; a by-id write that sets `active: true` reactivates.
 * A user holds its userName (`user_name_claim`, unique per team) exactly while SCIM can read it:
 * hiding teams, while active; showing teams, while not deleted (DELETE there removes the user
 * from every read, RFC 7644 3.6, and `activate` restores it while the name is free).
 * It owns the rules; it does not parse HTTP or write SQL.
 */
import { changedAttributes } from '../audit/events.ts';
import type { AuditAction } from '../audit/events.ts';
import { iso } from '../clock.ts';
import { recordRowWrite } from '../events/feed.ts';
import type { AuditNote, ChangeType } from '../events/feed.ts';
import { recordUserSignals, userSnapshot } from '../events/signals.ts';
import { newId } from '../ids.ts';
import { signsIn } from '../oauth/accounts.ts';
import { HashingBusy, signInPasswordProblem } from '../oauth/passwords.ts';
import { endSessionsOfUser } from '../sessions.ts';
import { addCounts, userDelta, userStateOf } from '../storage/repos/counters.ts';
import { revokeTokensOfUser } from '../storage/repos/tokens.ts';
import { retirePasswordLinks } from '../storage/repos/admins.ts';
import { revokeSetupLinksOfCreator } from '../storage/repos/setup-links.ts';
import { groupsOfUsers, renameMemberships } from '../storage/repos/groups.ts';
import { insertUser, listUsers as listUserRows, updateUser, userById, userByNameKey, userWithGroups } from '../storage/repos/users.ts';
import type { ListedUser, UserRow } from '../storage/repos/users.ts';
import type { Executor } from '../storage/types.ts';
import { columnsOf } from './columns.ts';
import { hidesDeactivated, lowering, typesOf } from './context.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import type { ScimContext } from './context.ts';
import { badRequest, conflict, notFound, preconditionFailed, ScimError } from './errors.ts';
import { lowerFilter, lowerSort } from './filter/lower.ts';
import type { Predicate } from '../storage/predicate.ts';
import { budgetedPage, listResult, pageWindow } from './paging.ts';
import { scanning } from './scans.ts';
import type { ListResult } from './representation.ts';
import { applyPatch } from './patch.ts';
import { projectResource, wantsAttribute } from './project.ts';
import type { Projection } from './project.ts';
import type { ListQuery } from './query.ts';
import { checkIfMatch, etagOf, userResource } from './representation.ts';
import type { GroupRef, Resource } from './representation.ts';
import { hasCatalog } from './schema/catalog.ts';
import { commonAttributes } from './schema/common.ts';
import { userResourceType as coreUserType } from './schema/registry.ts';
import { checkAssignments } from './assignments.ts';
import { confirmAssigned, keepGrants } from './grants.ts';
import { claimExtensionValues, claimsValues } from './unique.ts';
import { validateResource, withoutHidden } from './validate.ts';
import type { ValidatedResource } from './validate.ts';
import { RetryWrite, runWrite } from './write.ts';
import { searchColumnsOfUser } from './word-search.ts';
import { whereOf } from './query.ts';

export interface Versioned {
  readonly resource: Resource;
  readonly etag: string;
  readonly id: string;
}

export interface Preconditions {
  readonly ifMatch?: string;
}

const parseData = (ctx: ScimContext, row: UserRow): Record<string, unknown> => ctx.storage.hooks.parseJson(row.data);

/** The user as the response shows it; `groups` are read unless the caller knows them (a new user has none). */
async function render(ctx: ScimContext, ex: Executor, row: UserRow, projection: Projection, known?: readonly GroupRef[]): Promise<Versioned> {
  const rt = typesOf(ctx).User;
  const groups = !wantsAttribute(rt, projection, 'groups')
    ? undefined
    : (known ?? (await groupsOfUsers(ex, ctx.team.id, [row.id])).map((g) => ({ groupId: g.group_id, displayName: g.display_name })));
  const full = userResource(rt, row, parseData(ctx, row), groups, ctx.baseUrl);
  return { resource: projectResource(rt, full, projection), etag: etagOf(row.version), id: row.id };
}

/**
 * DESIGN.md section 4: whether a user holds its userName, which is also whether SCIM reads show
 * it. Hiding deactivated users, a user holds its name while active (an identity provider that
 * deleted a user and re-hires the person knows only the userName); showing them, while not
 * deleted. repos/users.ts `recomputeNameClaims` applies the same rule in SQL.
 */
export function holdsName(mode: TeamRow['deactivated_users'], row: Pick<UserRow, 'active' | 'deleted_at'>): boolean {
  return mode === 'visible' ? row.deleted_at === null : row.active === 1;
}

/** `row` with its claim on the userName set by `holdsName`. */
const claimed = (ctx: ScimContext, row: UserRow): UserRow => ({
  ...row,
  user_name_claim: holdsName(ctx.team.deactivated_users, row) ? row.user_name_key : null,
});

/** The user if it exists and the caller may see it. */
async function visibleRow(ctx: ScimContext, ex: Executor, id: string): Promise<UserRow> {
  const row = await userById(ex, ctx.team.id, id);
  if (!row || !holdsName(ctx.team.deactivated_users, row)) throw notFound(`User ${id} not found`);
  return row;
}

async function uniquenessError(ctx: ScimContext, ex: Executor, userName: string): Promise<ScimError> {
  const holder = await userByNameKey(ex, ctx.team.id, userName.toLowerCase());
  return conflict(`userName "${userName}" is already taken${holder ? ` by user ${holder.id}` : ''}`);
}

/**
 * The users row that stores `document` (already validated): the indexed columns come from the
 * schema's storage mappings. A user without `active` is active (the contract's create sets it;
 * most clients omit it). Also used by the scale benchmark's bulk loader.
 */
export function userRowOf(
  hooks: { toJson(value: unknown): string },
  base: Pick<UserRow, 'id' | 'team_id' | 'created_at'>,
  validatedDocument: Readonly<Record<string, unknown>>,
  passwordHash: string | null,
  version: number,
  updatedAt: string,
): UserRow {
  const document = { ...validatedDocument };
  if (document.active === undefined) document.active = true;
  const columns = columnsOf(coreUserType, document, commonAttributes);
  const active = Number(columns.active);
  return {
    id: base.id,
    team_id: base.team_id,
    user_name: String(columns.user_name),
    user_name_key: String(columns.user_name_key),
    // A new row's claim as a hiding team sees it; the service sets it for the caller's team.
    user_name_claim: active === 1 ? String(columns.user_name_key) : null,
    external_id: columns.external_id as string | null,
    active,
    user_type: columns.user_type as string | null,
    display_name: columns.display_name as string | null,
    given_name: columns.given_name as string | null,
    family_name: columns.family_name as string | null,
    ...searchColumnsOfUser(String(columns.user_name), columns.given_name as string | null, columns.family_name as string | null),
    password_hash: passwordHash,
    data: hooks.toJson(document),
    version,
    created_at: base.created_at,
    updated_at: updatedAt,
    deleted_at: null,
  };
}

/** A password hashed before its write's transaction opened (scrypt never runs inside one). */
interface Prehashed {
  readonly password: string;
  readonly hash: string;
}

/**
 * Thrown inside a write whose password is not the one hashed beforehand (the document changed
 * between the two applications of a PATCH): the write starts over, outside the transaction.
 */
class PasswordNotHashed extends Error {}

/** Hashes in the team's share of the app's hasher; no room is 503 with Retry-After. */
async function hashOutside(ctx: ScimContext, password: string | undefined): Promise<Prehashed | undefined> {
  if (password === undefined) return undefined;
  try {
    return { password, hash: await ctx.passwords.hash({ team: ctx.team.id }, password) };
  } catch (error) {
    if (error instanceof HashingBusy) {
      throw new ScimError(503, error.message, undefined, { 'retry-after': String(error.retryAfterSeconds) });
    }
    throw error;
  }
}

/** Whether a request body may set a password at all (cheap; most writes do not). */
const mayCarryPassword = (body: unknown): boolean => /password/i.test(JSON.stringify(body) ?? '');

function rowFor(
  ctx: ScimContext,
  base: Pick<UserRow, 'id' | 'team_id' | 'created_at' | 'password_hash' | 'deleted_at'>,
  validated: ValidatedResource,
  version: number,
  prehashed: Prehashed | undefined,
): UserRow {
  // A new resource was last modified when it was created.
  const stored = userRowOf(ctx.storage.hooks, base, validated.document, base.password_hash, version, version === 1 ? base.created_at : iso(ctx.clock));
  // A user made active again is no longer deleted (as activate restores it), whatever the team's mode.
  const row = claimed(ctx, { ...stored, deleted_at: stored.active === 1 ? null : base.deleted_at });
  if (validated.password === undefined) return row;
  // A user who signs in gets a password of at least 12 characters.
  const problem = signsIn(row) ? signInPasswordProblem(validated.password) : undefined;
  if (problem !== undefined) throw badRequest('invalidValue', `password: ${problem}`);
  // Hashed before the transaction opened; a different password means the body changed under us.
  if (prehashed?.password !== validated.password) throw new PasswordNotHashed();
  return { ...row, password_hash: prehashed.hash };
}

/** Runs `write` with the password its body sets hashed beforehand, again if the body's password changed meanwhile. */
async function withPrehashed<T>(find: () => Promise<string | undefined>, write: (prehashed: Prehashed | undefined) => Promise<T>, ctx: ScimContext): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const prehashed = await hashOutside(ctx, await find());
    try {
      return await write(prehashed);
    } catch (error) {
      if (!(error instanceof PasswordNotHashed)) throw error;
      if (attempt >= 3) throw new ScimError(409, 'the user is being changed by other requests; try again');
    }
  }
}

/**
 * A connection's token (Actor.connectionId: an identity provider, or whoever holds a setup link's
 * token) provisions people; it never hands out the console. So it may not make a user one who
 * signs in (userType admin: oauth/accounts.ts signsIn), take that from an admin, or set or change
 * the password of a user who signs in as an admin: 403, nothing written. An admin's own token, the
 * console and the CLI may. Everything else a provider sends (userType "Employee", a password
 * for a user who does not sign in) is untouched.
 */
function refuseSignInChange(ctx: ScimContext, before: Pick<UserRow, 'user_type'> | undefined, after: Pick<UserRow, 'user_type'>, setsPassword: boolean): void {
  if (!ctx.actor.connectionId) return;
  const was = before !== undefined && signsIn(before);
  const becomes = signsIn(after);
  const where = 'an admin of the team does that in the console (Admins)';
  if (becomes && !was) throw new ScimError(403, `A connection cannot make a user an admin who signs in to the console (userType "admin"); ${where}`);
  if (was && !becomes) throw new ScimError(403, `A connection cannot change the userType of an admin who signs in to the console; ${where}`);
  if (setsPassword && (was || becomes)) throw new ScimError(403, `A connection cannot set or change the password of an admin who signs in to the console; ${where}`);
}

/**
 * A user made one who signs in (userType admin) keeps no password from before: one a connection
 * set (an identity provider's password sync, say) was never meant to open the console. Unless the
 * same write sets one, the new admin has none, and signs in with the one a password link sets
 * (console/admins.ts addAdmin hands one out).
 */
function withoutEarlierPassword(current: UserRow, next: UserRow): UserRow {
  const keepsEarlier = current.password_hash !== null && next.password_hash === current.password_hash;
  return keepsEarlier && !signsIn(current) && signsIn(next) ? { ...next, password_hash: null } : next;
}

/**
 * Whether createUser of `body` is likely one statement on PostgreSQL, sent at its commit: no
 * password to hash first, no catalog entry to confirm, no unique extension value to look up
 * (each of those reads or waits before the write). A Bulk hands such creates to its write lane
 * (bulk/run.ts); one that turns out to need more is refused there unsent and runs the usual way.
 */
export function createWritesOnly(ctx: ScimContext, body: unknown): boolean {
  const types = typesOf(ctx);
  return !hasCatalog(types.catalog) && !claimsValues(types.User) && !mayCarryPassword(body);
}

export async function createUser(ctx: ScimContext, body: unknown, projection: Projection = {}): Promise<Versioned> {
  const rt = typesOf(ctx).User;
  const validated = validateResource(rt, body, 'create');
  checkAssignments(typesOf(ctx).catalog, 'create', validated.document);
  // Before the password is hashed: a refused write costs nothing.
  refuseSignInChange(ctx, undefined, { user_type: columnsOf(coreUserType, validated.document, commonAttributes).user_type as string | null }, validated.password !== undefined);
  const now = iso(ctx.clock);
  const row = rowFor(ctx, { id: newId(), team_id: ctx.team.id, created_at: now, password_hash: null, deleted_at: null }, validated, 1, await hashOutside(ctx, validated.password));
  return runWrite(ctx, async (trx) => {
    // No look-up first: the unique index on (team, claim) refuses a name another user holds
    // (only holders count: users that released it never block a new one), the transaction
    // rolls back, and runWrite turns the violation into the 409 below, naming the holder.
    await confirmAssigned(ctx, trx, undefined, validated.document);
    await insertUser(trx, row);
    await claimExtensionValues(ctx, trx, rt, row.id, validated.document);
    await keepGrants(ctx, trx, row.id, undefined, validated.document);
    const document = parseData(ctx, row);
    const attributes = Object.keys(document).sort();
    await write(ctx, trx, { action: 'create', detail: { userName: row.user_name, attributes, ...(row.password_hash !== null ? { password: 'set' } : {}) } }, 'create', row, attributes);
    // RISC / CAEP signals (events/signals.ts): a password set at creation is a credential-change.
    await recordUserSignals(ctx, trx, { change: 'create', before: undefined, after: userSnapshot(row, document), passwordSet: row.password_hash !== null, at: row.created_at }, row.version);
    // Last: on PostgreSQL the team's counter rows stay locked from here to the commit.
    await addCounts(trx, ctx.team.id, userDelta(undefined, userStateOf(row)), row.created_at);
    return render(ctx, trx, row, projection, []);
  }, () => uniquenessError(ctx, ctx.storage.db, row.user_name));
}

export async function getUser(ctx: ScimContext, id: string, projection: Projection = {}): Promise<Versioned> {
  if (!wantsAttribute(typesOf(ctx).User, projection, 'groups')) return render(ctx, ctx.storage.db, await visibleRow(ctx, ctx.storage.db, id), projection);
  // The user and its groups in one statement (one round trip on PostgreSQL).
  const found = await userWithGroups(ctx.storage.db, ctx.team.id, id);
  if (!found || !holdsName(ctx.team.deactivated_users, found.row)) throw notFound(`User ${id} not found`);
  return render(ctx, ctx.storage.db, found.row, projection, found.groups.map((g) => ({ groupId: g.group_id, displayName: g.display_name })));
}

export async function listUsers(ctx: ScimContext, query: ListQuery): Promise<ListResult> {
  const rt = typesOf(ctx).User;
  const window = pageWindow(ctx, rt, query);
  // The `access` parameter (access-filter.ts) and the console's words (word-search.ts), ANDed with the filter.
  const where = whereOf(ctx, query);
  const sort = query.words?.sort ?? (query.sortBy ? lowerSort(query.sortBy) : undefined);
  const onlyActive = hidesDeactivated(ctx);
  // The filter's cost, the team's scans and the statements' deadline (scans.ts).
  const { page, resources, serialized } = await scanning(ctx, [{ table: 'users', ...(where ? { where } : {}), ...(sort ? { sort } : {}), onlyActive }], (read) =>
    budgetedPage(
      window,
      query.count,
      (slice, limit) =>
        read((ex, guard) => {
          const guarded = guard(where);
          return listUserRows(ex, ctx.team.id, { ...(guarded ? { where: guarded } : {}), ...(sort ? { sort } : {}), onlyActive, withGroups: wantsAttribute(rt, query.projection, 'groups'), descending: query.descending, limit, ...slice });
        }),
      (rows) => renderUserRows(ctx, rows, query.projection),
    ),
  );
  return listResult(ctx, rt, query, window, page, resources, serialized);
}

/**
 * Users rows of a list or search page as the response shows them: their groups as read with the
 * rows (a list page), or read here in one query (a search page's rows).
 */
export async function renderUserRows(ctx: ScimContext, rows: readonly ListedUser[], projection: Projection): Promise<Resource[]> {
  const rt = typesOf(ctx).User;
  const wantsGroups = wantsAttribute(rt, projection, 'groups');
  // One pass over the rows' memberships into a map by user, so a page costs its memberships
  // once, not once per row.
  const groupsByUser = new Map<string, GroupRef[]>();
  if (wantsGroups && rows.every((r) => r.groups !== undefined)) {
    for (const row of rows) groupsByUser.set(row.id, row.groups!.map((g) => ({ groupId: g.group_id, displayName: g.display_name })));
  } else if (wantsGroups && rows.length > 0) {
    for (const m of await groupsOfUsers(ctx.storage.db, ctx.team.id, rows.map((r) => r.id))) {
      const list = groupsByUser.get(m.user_id) ?? groupsByUser.set(m.user_id, []).get(m.user_id)!;
      list.push({ groupId: m.group_id, displayName: m.display_name });
    }
  }
  return rows.map((row) => {
    const groups = wantsGroups ? (groupsByUser.get(row.id) ?? []) : undefined;
    return projectResource(rt, userResource(rt, row, parseData(ctx, row), groups, ctx.baseUrl), projection);
  });
}

/**
 * Whether a write by id may proceed on `row`. Hidden deactivated users only through reactivation
 * (activate, or PUT / PATCH setting active true); a user deleted in a showing team only through
 * `activate` (`restores`): for every other request it is gone (RFC 7644 3.6).
 */
function assertWritable(ctx: ScimContext, row: UserRow | undefined, id: string, reactivates: boolean, restores = false): UserRow {
  if (!row) throw notFound(`User ${id} not found`);
  if (hidesDeactivated(ctx) ? row.active === 0 && !reactivates : row.deleted_at !== null && !restores) throw notFound(`User ${id} not found`);
  return row;
}

/** The audit event and the feed event (RFC 9967) of a write to a user, in the write's transaction. */
const write = (ctx: ScimContext, trx: Executor, note: AuditNote, type: ChangeType, row: UserRow, changed: readonly string[]): Promise<void> =>
  recordRowWrite(ctx, trx, note, type, 'User', row, changed);

/** The feed's name for a user write's audit action (the others are not user writes). */
const CHANGE_OF: Partial<Record<AuditAction, ChangeType>> = {
  create: 'create', replace: 'put', patch: 'patch', deactivate: 'deactivate', activate: 'activate', delete: 'delete',
};

async function save(
  ctx: ScimContext,
  trx: Executor,
  current: UserRow,
  asked: UserRow,
  pre: Preconditions,
  projection: Projection,
  action: AuditAction,
  groups?: readonly GroupRef[],
): Promise<Versioned> {
  // A rename, a reactivation or a restore claims the name: another holder makes it a 409 and
  // nothing changes (the unique index refuses it too, should two requests race).
  const claims = asked.user_name_claim !== null && asked.user_name_claim !== current.user_name_claim;
  if (claims) {
    const clash = await userByNameKey(trx, ctx.team.id, asked.user_name_claim!);
    if (clash && clash.id !== current.id) throw await uniquenessError(ctx, trx, asked.user_name);
  }
  refuseSignInChange(ctx, current, asked, asked.password_hash !== current.password_hash);
  const next = withoutEarlierPassword(current, asked);
  const [before, after] = [parseData(ctx, current), parseData(ctx, next)];
  await confirmAssigned(ctx, trx, before, next.deleted_at === null ? after : undefined);
  if (!(await updateUser(trx, next, current.version))) {
    if (pre.ifMatch !== undefined) throw preconditionFailed(`User ${current.id} was changed by another request`);
    throw new RetryWrite();
  }
  // Each membership carries the member's folded userName for the console's member search.
  if (next.user_name_search !== current.user_name_search) await renameMemberships(trx, current.id, next.user_name_search);
  // Extension values declared unique; a user DELETE removed from every read frees them.
  await claimExtensionValues(ctx, trx, typesOf(ctx).User, current.id, next.deleted_at === null ? after : undefined);
  // Roles and entitlements (grants.ts): held while not deleted, like the claims.
  await keepGrants(ctx, trx, current.id, current.deleted_at === null ? before : undefined, next.deleted_at === null ? after : undefined);
  // DESIGN 5: deactivation, a new password or a changed userType (e.g. losing `admin`) ends
  // every token the user holds, and every browser session.
  const revokes =
    (current.active === 1 && next.active === 0) ||
    next.password_hash !== current.password_hash ||
    (next.user_type ?? '').toLowerCase() !== (current.user_type ?? '').toLowerCase();
  const revoked = revokes ? await revokeTokensOfUser(trx, current.id, next.updated_at) : 0;
  if (revokes) await endSessionsOfUser(trx, current.id);
  // An admin who is deactivated, deleted or no longer an admin: the setup links they sent that
  // are unused or have a session open end, and so do their unused password links (a
  // reactivation does not bring either back).
  const endsAdmin = signsIn(current) && (next.active === 0 || !signsIn(next));
  const linksEnded = endsAdmin ? await revokeSetupLinksOfCreator(trx, ctx.team.id, current.id, next.updated_at) : 0;
  if (endsAdmin) await retirePasswordLinks(trx, ctx.team.id, current.id, next.updated_at);
  const changed = changedAttributes(before, after);
  // The answer (its groups read) before the counters: nothing may follow their bump but the commit.
  const rendered = await render(ctx, trx, next, projection, groups);
  const passwordRemoved = current.password_hash !== null && next.password_hash === null;
  const detail = { changed, ...(passwordRemoved ? { password: 'removed' } : next.password_hash !== current.password_hash ? { password: 'changed' } : {}), ...(revoked > 0 ? { tokensRevoked: revoked } : {}), ...(linksEnded > 0 ? { setupLinksRevoked: linksEnded } : {}) };
  const change = CHANGE_OF[action] ?? 'patch';
  await write(ctx, trx, { action, detail }, change, next, next.password_hash !== current.password_hash ? [...changed, 'password'].sort() : changed);
  // RISC / CAEP signals (events/signals.ts), from the states before and after: deactivation,
  // reactivation, deletion, a changed email or userName, a new password.
  const passwordSet = next.password_hash !== current.password_hash && !passwordRemoved;
  await recordUserSignals(ctx, trx, { change, before: userSnapshot(current, before), after: userSnapshot(next, after), passwordSet, at: next.updated_at }, next.version);
  // Last: on PostgreSQL the team's counter rows stay locked from here to the commit.
  await addCounts(trx, ctx.team.id, userDelta(userStateOf(current), userStateOf(next)), current.created_at);
  return rendered;
}

/** The user as a write by id finds it, with its groups when the answer shows them (one statement: a user write never changes them). */
async function storedForWrite(ctx: ScimContext, trx: Executor, id: string, projection: Projection): Promise<{ found: UserRow | undefined; groups?: GroupRef[] }> {
  if (!wantsAttribute(typesOf(ctx).User, projection, 'groups')) return { found: await userById(trx, ctx.team.id, id) };
  const stored = await userWithGroups(trx, ctx.team.id, id);
  return { found: stored?.row, groups: stored?.groups.map((g) => ({ groupId: g.group_id, displayName: g.display_name })) ?? [] };
}

export async function replaceUser(ctx: ScimContext, id: string, body: unknown, pre: Preconditions = {}, projection: Projection = {}): Promise<Versioned> {
  const rt = typesOf(ctx).User;
  // The password a PUT sets does not depend on the stored user: validate once outside to hash it.
  const find = async () => (mayCarryPassword(body) ? validateResource(rt, body, 'replace').password : undefined);
  return withPrehashed(find, (prehashed) => runWrite(ctx, async (trx) => {
    const { found, groups } = await storedForWrite(ctx, trx, id, projection);
    const original = found ? parseData(ctx, found) : undefined;
    const validated = validateResource(rt, body, 'replace', original);
    checkAssignments(typesOf(ctx).catalog, 'replace', validated.document, original);
    const current = assertWritable(ctx, found, id, validated.document.active !== false);
    checkIfMatch(rt, current, pre.ifMatch);
    const next = rowFor(ctx, current, validated, current.version + 1, prehashed);
    return save(ctx, trx, current, next, pre, projection, 'replace', groups);
  }, async () => conflict('userName is already taken')), ctx);
}

/** The password `body` would set on the user as stored now, read outside any transaction. */
async function patchedPassword(ctx: ScimContext, id: string, body: unknown): Promise<string | undefined> {
  const rt = typesOf(ctx).User;
  if (!mayCarryPassword(body)) return undefined;
  const found = await userById(ctx.storage.db, ctx.team.id, id);
  if (!found) throw notFound(`User ${id} not found`);
  const original = parseData(ctx, found);
  return validateResource(rt, applyPatch(rt, withoutHidden(rt, original), body).document, 'patch', original).password;
}

export async function patchUser(ctx: ScimContext, id: string, body: unknown, pre: Preconditions = {}, projection: Projection = {}): Promise<Versioned> {
  const rt = typesOf(ctx).User;
  return withPrehashed(() => patchedPassword(ctx, id, body), (prehashed) => runWrite(ctx, async (trx) => {
    const { found, groups } = await storedForWrite(ctx, trx, id, projection);
    if (!found) throw notFound(`User ${id} not found`);
    const original = parseData(ctx, found);
    const patched = applyPatch(rt, withoutHidden(rt, original), body);
    const validated = validateResource(rt, patched.document, 'patch', original);
    checkAssignments(typesOf(ctx).catalog, 'patch', validated.document, original);
    const current = assertWritable(ctx, found, id, found.active === 0 && validated.document.active === true);
    checkIfMatch(rt, current, pre.ifMatch);
    const next = rowFor(ctx, current, validated, current.version + 1, prehashed);
    return save(ctx, trx, current, next, pre, projection, 'patch', groups);
  }, async () => conflict('userName is already taken')), ctx);
}

type StateChange = 'activate' | 'deactivate' | 'delete';

async function setState(ctx: ScimContext, id: string, change: StateChange, pre: Preconditions, projection: Projection): Promise<Versioned> {
  const rt = typesOf(ctx).User;
  return runWrite(ctx, async (trx) => {
    const found = await userById(trx, ctx.team.id, id);
    const active = change === 'activate';
    // Deactivating a hidden (already deactivated) user is a 404 like any other by-id write;
    // activate also restores a deleted one.
    const current = assertWritable(ctx, found, id, active, active);
    checkIfMatch(rt, current, pre.ifMatch);
    const document = { ...parseData(ctx, current), active };
    const now = iso(ctx.clock);
    const next = claimed(ctx, {
      ...current,
      active: active ? 1 : 0,
      data: ctx.storage.hooks.toJson(document),
      version: current.version + 1,
      updated_at: now,
      deleted_at: change === 'delete' ? now : change === 'activate' ? null : current.deleted_at,
    });
    return save(ctx, trx, current, next, pre, projection, change);
  }, async () => conflict(`User ${id}: its userName is held by another user`));
}

/** `DELETE /Users/{id}`: in a team that hides deactivated users, deactivation (the contract); in one that shows them, deletion. */
export const deleteUser = (ctx: ScimContext, id: string, pre: Preconditions = {}): Promise<Versioned> =>
  setState(ctx, id, hidesDeactivated(ctx) ? 'deactivate' : 'delete', pre, {});

export const activateUser = (ctx: ScimContext, id: string, pre: Preconditions = {}, projection: Projection = {}): Promise<Versioned> =>
  setState(ctx, id, 'activate', pre, projection);

/**
 * The contract's bare `DELETE /Users` names no id: it takes a filter that must match exactly one
 * visible user (DESIGN.md section 4).
 */
export async function deactivateByFilter(ctx: ScimContext, query: ListQuery): Promise<Versioned> {
  if (!query.filter) throw badRequest('invalidValue', 'DELETE /Users needs a user id in the path, or a filter that matches exactly one user');
  const found = await listUsers(ctx, { ...query, paging: { method: 'index', startIndex: 1 }, count: 2, projection: { attributes: [{ kind: 'attrPath', attr: 'id' }] } });
  if (found.totalResults !== 1) {
    throw badRequest('invalidValue', `the filter must match exactly one user; it matches ${found.totalResults}`);
  }
  return deleteUser(ctx, String(found.resources[0]?.id));
}
