/**
 * What a SCIM service call needs: storage, clock, the public base URL and the caller's team.
 * Built per request by the HTTP layer from the authenticated token (or by the CLI); services
 * never look anything up globally.
 */
import type { Actor } from '../audit/events.ts';
import { budgetsOf } from '../budgets.ts';
import type { Budgets } from '../budgets.ts';
import type { Clock } from '../clock.ts';
import type { PasswordHasher } from '../oauth/passwords.ts';
import type { Storage } from '../storage/connect.ts';
import type { WriteLane } from '../storage/lane.ts';
import type { Tx } from '../storage/types.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import type { LowerOptions } from './filter/lower.ts';
import type { ScanGate } from './scan-gate.ts';
import { CORE_TYPES } from './schema/extensions.ts';
import type { TeamTypes } from './schema/extensions.ts';

export interface ScimContext {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  readonly team: TeamRow;
  /** Who acts (the client and user behind the token, or the CLI), for the audit trail. */
  readonly actor: Actor;
  readonly requestId: string | null;
  /** Signs RFC 9865 cursors; shared by every instance through the settings table. */
  readonly cursorSecret: string;
  /** The app's one bounded scrypt queue, shared with sign-ins (oauth/passwords.ts). */
  readonly passwords: PasswordHasher;
  /**
   * The team's resource types: core schemas plus the extensions the team registered.
   * The core ones when absent (operator contexts of the CLI).
   */
  readonly types?: TeamTypes;
  /** This instance's scans in progress per team (scans.ts); none counted when absent (the CLI). */
  readonly scans?: ScanGate;
  /** The feed rows one delta query page examines at most (delta.ts DELTA_WALK_ROWS when absent). */
  readonly deltaWalkRows?: number;
  /**
   * Runs in each write's transaction after the write, before the commit, with what the write's
   * body returned (write.ts runWrite): an asynchronous request records its step there, fenced by
   * its lease, so a step commits exactly once with its record (src/async). A throw rolls the write back.
   */
  readonly onCommit?: (trx: Tx, result: unknown) => Promise<void>;
  /**
   * Where the write's transaction runs instead of the storage's pool (write.ts runWrite): a
   * synchronous Bulk's write lane on PostgreSQL (bulk/run.ts), for creates that are one statement.
   */
  readonly writeLane?: WriteLane;
}

/** The team's User and Group resource types. */
export const typesOf = (ctx: ScimContext): TeamTypes => ctx.types ?? CORE_TYPES;

/** Deactivated users are hidden from every read unless the team made them visible. */
export const hidesDeactivated = (ctx: ScimContext): boolean => ctx.team.deactivated_users !== 'visible';

/** How this team's filters are lowered to storage: members it hides count for nothing; its grants rows are its own. */
export const lowering = (ctx: ScimContext): LowerOptions => ({ members: hidesDeactivated(ctx) ? 'active' : 'notDeleted', team: ctx.team.id });

/** The team's budgets (src/budgets.ts): its operator's overrides over the defaults. */
export const budgetsOfContext = (ctx: ScimContext): Budgets => budgetsOf(ctx.team);
