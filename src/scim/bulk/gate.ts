/**
 * The team's Bulk requests running at once on this instance, held to its `bulk.concurrent`
 * budget: one team's Bulks cannot take every connection and CPU slice of the server. Counted with
 * a ScanGate (scan-gate.ts: places per team, one gate per app, so apps in one process never
 * share them); the next Bulk over the budget is refused with 429 and Retry-After.
 */
import { OverBudget } from '../../budgets.ts';
import type { ScimContext } from '../context.ts';
import { budgetsOfContext } from '../context.ts';
import type { ScanGate } from '../scan-gate.ts';

/** Seconds a refused client is asked to wait before sending its Bulk again. */
const RETRY_AFTER_SECONDS = 1;

/** A place for one of the team's Bulk requests: the function that gives it back. Throws OverBudget when the team holds them all. */
export function enterBulk(gate: ScanGate, ctx: ScimContext): () => void {
  const limit = budgetsOfContext(ctx)['bulk.concurrent'];
  const release = gate.enter(ctx.team.id, limit);
  if (release) return release;
  throw new OverBudget(
    ctx.team.id,
    'bulk.concurrent',
    `This team already runs ${limit} bulk requests on this server, its limit bulk.concurrent; retry when one has finished.`,
    RETRY_AFTER_SECONDS,
  );
}
