/**
 * Who holds a catalog entry (migration 023): the users whose `roles` / `entitlements` name it
 * (`user_grants`, one row per element) and the groups mapped to it (`access_mappings`). What the
 * catalog's operations (src/access/catalog.ts) ask before removing an entry; plus the team-row
 * lock a catalog change takes first. Plain functions over the caller's executor; no rules.
 */
import { hooksIfAny } from '../statements.ts';
import type { Executor } from '../types.ts';
import type { GrantKind } from './catalog.ts';

/**
 * Locks the team's row for the rest of the transaction without writing it (PostgreSQL `SELECT
 * ... FOR NO KEY UPDATE`, the lock an UPDATE takes, without its new row version and WAL, so a
 * catalog change that changes nothing writes nothing; not FOR UPDATE, which would also hold up
 * every insert of a row referring to the team): two changes of one team's catalog, or a catalog
 * change and a mapping, run one after the other, each reading what the other committed. Nothing
 * on SQLite, whose one connection runs one transaction at a time.
 */
export async function lockTeamRow(ex: Executor, teamId: string): Promise<void> {
  if (!hooksIfAny(ex)?.rowLocks) return;
  await ex.selectFrom('teams').select('id').where('id', '=', teamId).forNoKeyUpdate().execute();
}

export interface Holdings {
  /** Distinct users whose documents name the entry. */
  readonly users: number;
  /** Groups mapped to the entry. */
  readonly groups: number;
}

const CHUNK = 500;

/**
 * The entries among `values` (of `kind`) that users hold or groups map, with their counts; the
 * others are left out. Grouped queries, `CHUNK` values at a time.
 */
export async function holdingsOfMany(ex: Executor, teamId: string, kind: GrantKind, values: readonly string[]): Promise<Map<string, Holdings>> {
  const users = new Map<string, number>();
  const groups = new Map<string, number>();
  for (let i = 0; i < values.length; i += CHUNK) {
    const chunk = values.slice(i, i + CHUNK);
    const [u, g] = await Promise.all([
      ex
        .selectFrom('user_grants')
        .select(['value', (eb) => eb.fn.count<number | string>('user_id').distinct().as('n')])
        .where('team_id', '=', teamId)
        .where('kind', '=', kind)
        .where('value', 'in', chunk)
        .groupBy('value')
        .execute(),
      ex
        .selectFrom('access_mappings')
        .select(['value', (eb) => eb.fn.countAll<number | string>().as('n')])
        .where('team_id', '=', teamId)
        .where('kind', '=', kind)
        .where('value', 'in', chunk)
        .groupBy('value')
        .execute(),
    ]);
    for (const r of u) users.set(r.value, Number(r.n));
    for (const r of g) groups.set(r.value, Number(r.n));
  }
  const out = new Map<string, Holdings>();
  for (const value of new Set([...users.keys(), ...groups.keys()])) out.set(value, { users: users.get(value) ?? 0, groups: groups.get(value) ?? 0 });
  return out;
}
