/**
 * One-time setup links (issue 30, item 6; DESIGN.md section 15): a team admin sends a colleague
 * without an account a link that opens only the connection wizard of that team. A link:
 *
 * - is 256 random bits, shown once to the admin who made it, kept only as its SHA-256;
 * - expires (LINK_HOURS by default, at most MAX_LINK_HOURS), may be revoked, and is used once:
 *   using it is one conditional UPDATE (storage/repos/setup-links.ts), which also opens a
 *   restricted session (its own secret, kept as a hash, SESSION_SECONDS long) that reaches the
 *   wizard of that team and nothing else, and may make one connection;
 * - is audited when made, used and revoked, each in the change's transaction; what its session
 *   does is audited as the link (Actor.setupLinkId), not as the admin who sent it.
 *
 * Domain only: no HTTP, no SQL of its own.
 */
import { recordEvent } from '../audit/events.ts';
import type { Actor } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { newId, newToken, sha256 } from '../ids.ts';
import type { Storage } from '../storage/connect.ts';
import { claimSetupConnection, consumeSetupLink, insertSetupLink, listSetupLinks, revokeSetupLink as revokeLinkRow, setupLinkByHash, setupLinkById, setupLinkCreator, setupSession } from '../storage/repos/setup-links.ts';
import type { SetupLinkRow } from '../storage/repos/setup-links.ts';
import { teamById } from '../storage/repos/teams.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { transact } from '../storage/statements.ts';
import type { Executor } from '../storage/types.ts';
import { isStorableText } from '../text.ts';

export const LINK_PREFIX = 'rc_setup_';
export const LINK_HOURS = 72;
export const MAX_LINK_HOURS = 14 * 24;
/** How long the wizard session a link opens lives. */
export const SESSION_SECONDS = 4 * 3600;
const SESSION_PREFIX = 'rc_setup_session_';
const MAX_RECIPIENT = 200;

export class SetupLinkError extends Error {
  readonly status: 400 | 404;
  constructor(message: string, status: 400 | 404 = 400) {
    super(message);
    this.status = status;
  }
}

export type SetupLinkState = 'waiting' | 'used' | 'expired' | 'revoked';

export interface SetupLinkView {
  readonly id: string;
  readonly recipient: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly usedAt: string | null;
  readonly connectionId: string | null;
  readonly state: SetupLinkState;
}

const stateOf = (row: SetupLinkRow, now: string): SetupLinkState =>
  row.revoked_at !== null ? 'revoked' : row.used_at !== null ? 'used' : row.expires_at <= now ? 'expired' : 'waiting';

const view = (row: SetupLinkRow, now: string): SetupLinkView => ({
  id: row.id,
  recipient: row.recipient,
  createdBy: row.created_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  usedAt: row.used_at,
  connectionId: row.connection_id,
  state: stateOf(row, now),
});

/** The actor of what a link's session does. */
export const setupActor = (linkId: string): Actor => ({ via: 'console', clientId: null, userId: null, setupLinkId: linkId });

/** A link's lifetime in hours from a form's text: a whole number from 1 to MAX_LINK_HOURS. */
export function parseLinkHours(text: string): number {
  if (text.trim() === '') return LINK_HOURS;
  const hours = /^\d{1,4}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(hours >= 1 && hours <= MAX_LINK_HOURS)) throw new SetupLinkError(`a setup link lives from 1 to ${MAX_LINK_HOURS} hours (14 days); the default is ${LINK_HOURS}`);
  return hours;
}

function recipientOf(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length > MAX_RECIPIENT || !isStorableText(trimmed) || /[\p{Cc}]/u.test(trimmed)) {
    throw new SetupLinkError(`say whom the link is for (an email address or a name, 1-${MAX_RECIPIENT} characters)`);
  }
  return trimmed;
}

export interface MadeSetupLink {
  readonly id: string;
  /** The secret part of the link's URL: shown once. */
  readonly token: string;
  readonly recipient: string;
  readonly expiresAt: string;
}

/** Makes a link for `recipient` that expires in `hours`; audited. */
export async function makeSetupLink(
  storage: Storage,
  clock: Clock,
  request: { teamId: string; userId: string; recipient: string; hours: number; actor: Actor; requestId: string | null },
): Promise<MadeSetupLink> {
  const recipient = recipientOf(request.recipient);
  if (!(Number.isInteger(request.hours) && request.hours >= 1 && request.hours <= MAX_LINK_HOURS)) throw new SetupLinkError('the lifetime is out of range');
  const token = newToken(LINK_PREFIX);
  const now = clock.now();
  const row: SetupLinkRow = {
    id: newId(),
    team_id: request.teamId,
    link_hash: sha256(token),
    recipient,
    created_by: setupLinkCreator(request.userId),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + request.hours * 3_600_000).toISOString(),
    used_at: null,
    revoked_at: null,
    session_hash: null,
    session_expires_at: null,
    connection_id: null,
  };
  await transact(storage.db, async (trx) => {
    await insertSetupLink(trx, row);
    await audit(trx, clock, row, request.actor, request.requestId, 'setup_link_created', { recipient, expiresAt: row.expires_at });
  });
  return { id: row.id, token, recipient, expiresAt: row.expires_at };
}

/** A team's newest links (never their secrets). */
export async function setupLinks(storage: Storage, clock: Clock, teamId: string, limit = 50): Promise<SetupLinkView[]> {
  const now = clock.now().toISOString();
  return (await listSetupLinks(storage.db, teamId, limit)).map((row) => view(row, now));
}

/** A team's link by id (never its secret), if it has one. */
export async function setupLinkOf(storage: Storage, clock: Clock, teamId: string, id: string): Promise<SetupLinkView | undefined> {
  const row = await setupLinkById(storage.db, teamId, id);
  return row ? view(row, clock.now().toISOString()) : undefined;
}

/** Revokes a team's link: an unused one can no longer be used, a used one's session ends. Audited. */
export async function revokeSetupLink(storage: Storage, clock: Clock, request: { teamId: string; id: string; actor: Actor; requestId: string | null }): Promise<void> {
  await transact(storage.db, async (trx) => {
    const row = await setupLinkById(trx, request.teamId, request.id);
    if (!row || !(await revokeLinkRow(trx, request.teamId, request.id, clock.now().toISOString()))) throw new SetupLinkError('There is no such setup link, or it is revoked already.', 404);
    await audit(trx, clock, row, request.actor, request.requestId, 'setup_link_revoked', { recipient: row.recipient });
  });
}

/** Why a link cannot be used, in words for the person who opened it. */
const REFUSALS: Record<Exclude<SetupLinkState, 'waiting'>, string> = {
  used: 'This setup link has been used already: each link opens the wizard once. Ask the admin who sent it for a new one.',
  expired: 'This setup link has expired. Ask the admin who sent it for a new one.',
  revoked: 'This setup link was withdrawn by an admin of the team. Ask them for a new one.',
};
const UNKNOWN = 'This setup link is not valid. Check that you copied all of it, or ask the admin who sent it for a new one.';

/** What opening the link at `token` would give: the team and recipient, or why it is refused (nothing is changed). */
export async function inspectSetupLink(storage: Storage, clock: Clock, token: string): Promise<{ ok: true; team: TeamRow; recipient: string; expiresAt: string } | Refused> {
  const row = token.startsWith(LINK_PREFIX) && token.length <= 100 ? await setupLinkByHash(storage.db, sha256(token)) : undefined;
  if (!row) return { ok: false, status: 404, reason: UNKNOWN };
  const state = stateOf(row, clock.now().toISOString());
  if (state !== 'waiting') return { ok: false, status: 410, reason: REFUSALS[state] };
  const team = await teamById(storage.db, row.team_id);
  return team ? { ok: true, team, recipient: row.recipient, expiresAt: row.expires_at } : { ok: false, status: 404, reason: UNKNOWN };
}

/** Why a link is refused: unknown (404) or no longer usable (410 Gone). */
export interface Refused {
  readonly ok: false;
  readonly status: 404 | 410;
  readonly reason: string;
}

/**
 * Uses the link at `token`: consumed (never again), a restricted session opened, audited.
 * Returns the session's secret (for its cookie), or why the link is refused.
 */
export async function useSetupLink(storage: Storage, clock: Clock, token: string, requestId: string | null): Promise<{ ok: true; session: string; expiresAt: string } | Refused> {
  if (!token.startsWith(LINK_PREFIX) || token.length > 100) return { ok: false, status: 404, reason: UNKNOWN };
  const session = newToken(SESSION_PREFIX);
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + SESSION_SECONDS * 1000).toISOString();
  const used = await transact(storage.db, async (trx) => {
    const row = await consumeSetupLink(trx, sha256(token), now.toISOString(), { hash: sha256(session), expiresAt });
    if (row) await audit(trx, clock, row, setupActor(row.id), requestId, 'setup_link_used', { recipient: row.recipient, sessionExpiresAt: expiresAt });
    return row;
  });
  if (used) return { ok: true, session, expiresAt };
  const inspected = await inspectSetupLink(storage, clock, token);
  return inspected.ok ? { ok: false, status: 410, reason: REFUSALS.used } : inspected;
}

/** The live setup session of this secret: its link and team; undefined when over, revoked or unknown. */
export async function resumeSetupSession(storage: Storage, clock: Clock, session: string): Promise<{ link: SetupLinkView; team: TeamRow } | undefined> {
  if (!session.startsWith(SESSION_PREFIX) || session.length > 100) return undefined;
  const now = clock.now().toISOString();
  const row = await setupSession(storage.db, sha256(session), now);
  if (!row) return undefined;
  const team = await teamById(storage.db, row.team_id);
  return team ? { link: view(row, now), team } : undefined;
}

/**
 * Records, in the wizard's transaction, the connection a setup session made; refused when it
 * made one already (a link sets up one connection).
 */
export async function claimConnectionForLink(ex: Executor, linkId: string, connectionId: string): Promise<void> {
  if (!(await claimSetupConnection(ex, linkId, connectionId))) throw new SetupLinkError('This setup link has set up its connection already; ask the admin who sent it for another link to set up another.');
}

async function audit(ex: Executor, clock: Clock, row: SetupLinkRow, actor: Actor, requestId: string | null, action: 'setup_link_created' | 'setup_link_used' | 'setup_link_revoked', detail: Record<string, unknown>): Promise<void> {
  await recordEvent(ex, clock, { teamId: row.team_id, actor, requestId, action, resourceType: 'SetupLink', resourceId: row.id, detail });
}
