/**
 * A filter's cost is bounded (docs/SECURITY.md "A filter's cost is bounded"): every
 * list and search (the endpoints, `/.search`, the console's filter box, which all come here)
 * passes three checks, in this order, before and while its statements run:
 *
 * 1. the filter's estimated cost (storage/scan-cost.ts: tests evaluated row by row times the
 *    rows they are evaluated on, the team's rows read from its counters) is at most the team's
 *    `filter.cost`, else 400 before any of the filter's statements runs;
 * 2. a filter that scans, or a sort no index gives, takes one of the team's `scans.concurrent`
 *    places on this instance (ScanGate), else 429 with Retry-After: one team's scans cannot take
 *    the whole pool, or the whole event loop, however many it sends;
 * 3. its statements are held to the team's `statement.ms` (storage/deadline.ts: interrupted by
 *    the database), else 400 naming the limit.
 *
 * A filter an index answers (an equality on a key, a prefix range) passes 2 and 3 untouched: its
 * statements are the quick ones of every request, run with no scan place and no deadline. The
 * refusals are OverBudget errors, counted per team and budget on /metrics.
 */
import { OverBudget } from '../budgets.ts';
import type { Budgets } from '../budgets.ts';
import { budgetsOfContext } from './context.ts';
import type { ScimContext } from './context.ts';
import { StatementDeadline, withDeadline } from '../storage/deadline.ts';
import type { OrderKey, Predicate } from '../storage/predicate.ts';
import type { ResourceTable } from '../storage/predicate-sql.ts';
import { filterCost, scans } from '../storage/scan-cost.ts';
import type { FilterCost } from '../storage/scan-cost.ts';
import type { Executor } from '../storage/types.ts';

/** Seconds a client refused a scan place is asked to wait (a scan is held to statement.ms). */
export const SCAN_RETRY_AFTER_SECONDS = 1;

/** One table a list or search reads, with the filter it applies there. */
export interface ScanPart {
  readonly table: ResourceTable;
  readonly where?: Predicate;
  /** The list's order: one no index gives makes the list a scan (storage/scan-cost.ts sortScans), not costlier. */
  readonly sort?: OrderKey;
  /** Users only: whether deactivated users are left out (the rows a scan reads). */
  readonly onlyActive: boolean;
}

/** Where a list's statements run: the executor, and its filter as it must be sent there. */
export type ReadWith = <T>(read: (ex: Executor, guard: (where: Predicate | undefined) => Predicate | undefined) => Promise<T>) => Promise<T>;

const formatted = (n: number): string => n.toLocaleString('en-US');

function refuseCost(ctx: ScimContext, budgets: Budgets, costs: readonly FilterCost[]): void {
  const cost = costs.reduce((n, c) => n + c.cost, 0);
  const limit = budgets['filter.cost'];
  if (cost <= limit) return;
  const scanned = costs.reduce((n, c) => n + c.scanned, 0);
  const rows = Math.max(...costs.map((c) => c.rows));
  throw new OverBudget(
    ctx.team.id,
    'filter.cost',
    `The filter is too expensive: about ${formatted(cost)} row evaluations (${formatted(scanned)} tests no index answers, on each of up to ${formatted(rows)} resources), over this team's limit filter.cost of ${formatted(limit)}. ` +
      'Narrow it: use fewer tests of attributes no index answers (co, ew, value filters, group names, not), or add an equality on id, externalId, userName or displayName with "and", or a "sw" on userName, name.givenName, name.familyName or displayName.',
  );
}

/**
 * Runs a list or search (`body`, which sends its statements through `read`) under the checks
 * above, for the filters `parts` apply to the team's tables.
 */
export async function scanning<R>(ctx: ScimContext, parts: readonly ScanPart[], body: (read: ReadWith) => Promise<R>): Promise<R> {
  const { db, hooks } = ctx.storage;
  const budgets = budgetsOfContext(ctx);
  const costs: FilterCost[] = [];
  for (const part of parts) if (part.where || part.sort) costs.push(await filterCost(db, hooks, part.table, ctx.team.id, part.where, part.onlyActive, part.sort));
  refuseCost(ctx, budgets, costs);
  if (!costs.some(scans)) return body((read) => read(db, (where) => where));
  return asScan(ctx, body);
}

/**
 * Runs `body` as a scan whatever its filter: one of the team's `scans.concurrent` places on this
 * instance (else 429), its statements held to `statement.ms`. A read that walks more than an index
 * equality without a filter to price it comes here directly (a delta query's walk of the feed,
 * delta.ts).
 */
export async function asScan<R>(ctx: ScimContext, body: (read: ReadWith) => Promise<R>): Promise<R> {
  const { db, hooks } = ctx.storage;
  const budgets = budgetsOfContext(ctx);
  const release = ctx.scans?.enter(ctx.team.id, budgets['scans.concurrent']);
  if (ctx.scans && !release) {
    throw new OverBudget(
      ctx.team.id,
      'scans.concurrent',
      `This team already runs ${budgets['scans.concurrent']} scans (filters or sorts no index answers) on this server, its limit scans.concurrent; retry when one has finished.`,
      SCAN_RETRY_AFTER_SECONDS,
    );
  }
  const ms = budgets['statement.ms'];
  try {
    return await body(async (read) => {
      try {
        return await withDeadline(db, hooks, ms, (under) => read(under.ex, under.guard));
      } catch (error) {
        if (!(error instanceof StatementDeadline)) throw error;
        throw new OverBudget(ctx.team.id, 'statement.ms', `The query ran longer than this team's limit statement.ms (${formatted(ms)} ms) and was stopped. Narrow the filter: fewer tests no index answers, or an equality or prefix an index answers.`);
      }
    });
  } finally {
    release?.();
  }
}
