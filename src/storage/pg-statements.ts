/**
 * Runs compiled templates (statements.ts) on PostgreSQL. Outside a transaction a template goes
 * straight to the pool, skipping Kysely's executor (its connection provider and promise hops),
 * and a statement compiled once (`Template.fixed`: the bounded set of every request's hot
 * statements) runs as a named prepared statement: each pooled connection parses and plans it on
 * first use, then only binds and executes it (node-postgres keeps the names per connection). The
 * name is derived from the SQL text, so two texts never share one. List shapes are many and come
 * and go (statements.ts `SHAPE_CACHE_SIZE`): they run unnamed, or every connection would keep
 * every shape it ever saw. Inside a transaction the template runs on the transaction's connection,
 * through Kysely's executor. Should a migration change a table under a prepared statement (another
 * instance upgraded the schema), the statement runs unnamed from then on.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { kyselyEngine } from './statements.ts';
import type { StatementEngine, Template } from './statements.ts';

export function pgStatementEngine(pool: pg.Pool): StatementEngine {
  const names = new WeakMap<Template, string>();
  const nameOf = (template: Template): string => {
    let name = names.get(template);
    if (name === undefined) {
      name = `rc_${template.name.replace(/\W/g, '_').slice(0, 30)}_${createHash('sha256').update(template.compiled.sql).digest('hex').slice(0, 16)}`;
      names.set(template, name);
    }
    return name;
  };
  // Statements whose prepared form a schema change invalidated run unnamed from then on.
  const unnamed = new WeakSet<Template>();
  const query = async (template: Template, values: unknown[]) => {
    const text = template.compiled.sql;
    if (!template.fixed || unnamed.has(template)) return pool.query<Record<string, unknown>>({ text, values });
    try {
      return await pool.query<Record<string, unknown>>({ name: nameOf(template), text, values });
    } catch (error) {
      // "cached plan must not change result type": a migration run by another instance changed a
      // table under a prepared `select *`; PostgreSQL keeps refusing that name on this connection.
      if ((error as { code?: unknown }).code !== '0A000') throw error;
      unnamed.add(template);
      return pool.query<Record<string, unknown>>({ text, values });
    }
  };
  return {
    async rows(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.rows(ex, template, values);
      return (await query(template, values)).rows;
    },
    async row(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.row(ex, template, values);
      return (await query(template, values)).rows[0];
    },
    async changes(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.changes(ex, template, values);
      return (await query(template, values)).rowCount ?? 0;
    },
  };
}
