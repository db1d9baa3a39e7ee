/**
 * The accepted pushes of a team's SSF streams with their signals' commit times (the console's
 * deprovisioning figure, events/ssf/latency.ts): delivered attempts (2xx) of the team's push
 * streams since a time, joined to their feed rows (type `ssf`) committed since that time too, so
 * a replay of older signals is not counted. Newest first, at most `limit` rows: through the
 * attempts' (subscription_id, at) index for the team's few streams, and the feed's primary key.
 */
import type { Executor } from '../types.ts';

export interface AcceptedSignal {
  readonly subscription_id: string;
  readonly seq: number;
  /** When the attempt started, and how long its request took. */
  readonly at: string;
  readonly latency_ms: number;
  /** When the signal's row was written (in its change's transaction). */
  readonly event_at: string;
}

export async function acceptedSignalsSince(ex: Executor, teamId: string, since: string, limit: number): Promise<AcceptedSignal[]> {
  const rows = await ex
    .selectFrom('event_attempts as a')
    .innerJoin('event_subscriptions as s', 's.id', 'a.subscription_id')
    .innerJoin('events as e', (join) => join.onRef('e.team_id', '=', 's.team_id').onRef('e.seq', '=', 'a.seq'))
    .select(['a.subscription_id', 'a.seq', 'a.at', 'a.latency_ms', 'e.at as event_at'])
    .where('s.team_id', '=', teamId)
    .where('s.format', '=', 'ssf')
    .where('s.method', '=', 'push')
    .where('a.at', '>=', since)
    .where('a.status', '>=', 200)
    .where('a.status', '<', 300)
    .where('e.type', '=', 'ssf')
    .where('e.at', '>=', since)
    .orderBy('a.at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, seq: Number(r.seq), latency_ms: Number(r.latency_ms) }));
}
