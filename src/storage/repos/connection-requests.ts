/**
 * A connection's requests in the SCIM request log (migrations 008, 027, 028), for the wizard's
 * Test state: the newest one since a time, and how many. Read through the team's (team_id, at,
 * id) index, bounded by the team's retention (10,000 rows at most).
 */
import type { Executor, RequestLogTable } from '../types.ts';

/**
 * The newest request of `connectionId` (or made with a token of one of its `clientIds`) at or
 * after `since`, and how many there were.
 */
export async function newestRequestOfConnection(
  ex: Executor,
  teamId: string,
  connectionId: string,
  clientIds: readonly string[],
  since: string,
): Promise<{ newest: RequestLogTable | undefined; count: number }> {
  const of = ex
    .selectFrom('request_log')
    .where('team_id', '=', teamId)
    .where('at', '>=', since)
    .where((eb) => eb.or([eb('connection_id', '=', connectionId), ...(clientIds.length > 0 ? [eb('client_id', 'in', clientIds)] : [])]));
  const [newest, counted] = await Promise.all([
    of.selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst(),
    of.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { newest, count: Number(counted.n) };
}
