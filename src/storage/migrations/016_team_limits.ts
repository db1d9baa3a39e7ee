/**
 * A team's budget overrides (src/budgets.ts): `teams.limits`, a JSON object of budget name ->
 * value for the budgets the operator changed for that team (`rollcall team update --limit`),
 * NULL when every budget has its default. It lives on the team's row so that the bearer check,
 * which reads the team with the token in one statement, brings the budgets to every request.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration016(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('teams').addColumn('limits', 'text').execute();
    },
  };
}
