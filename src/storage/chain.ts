/**
 * Write chains: a write made of a few dependent statements (a row's new version, then what the
 * write adds with it, its audit row and its event), defined once as a list of steps and run by
 * each engine its own way. A step is a Kysely query over the chain's parameters, written as a
 * statement of statements.ts is. A step may run `after` an earlier one: it then reads that step's
 * returned row as a table (named by the earlier step's `as`, its columns its `returns`), and it
 * writes nothing when that step returned no row. The chain answers the first row its last step
 * returns, or undefined.
 *
 * - PostgreSQL: one statement, a data-modifying WITH. Every step but the last is a CTE, the last
 *   is the statement. A step after another reads that CTE: an INSERT's row of VALUES becomes a
 *   SELECT of the same values FROM it, an UPDATE, a DELETE or a SELECT not reading it already
 *   gains `exists (select 1 from it)`, so an empty CTE makes it write nothing. Its parameters
 *   take their types from where they land (an INSERT's column, a comparison), as in a plain
 *   statement: no casts. Atomic as one statement is; with `sole`, it runs as statements.ts
 *   `defineSole` says (alone, without BEGIN or COMMIT).
 * - SQLite (its WITH takes SELECTs only, and a statement costs no round trip): the steps in turn,
 *   in the caller's transaction or in one of their own, each a compiled statement named as its
 *   step. A step after another is skipped when that one returned no row; otherwise it is the
 *   same SQL as on PostgreSQL, its CTE holding the earlier row's values, bound as parameters.
 *
 * Either way a failure in any step undoes the steps before it. On PostgreSQL every step sees the
 * database as the statement found it (one snapshot), on SQLite the writes of the steps before
 * it: so a step reads what an earlier step wrote only through that step's returned row, and no
 * two steps write one row (its outcome would differ by engine). This is the one place a
 * repository's write learns whether a WITH may write (dialect.ts `writableCtes`); the
 * repositories define chains and run them, with no branch of their own.
 */
import { AliasNode, ColumnNode, CommonTableExpressionNameNode, CommonTableExpressionNode, createQueryId, DeleteQueryNode, IdentifierNode, InsertQueryNode, QueryNode, ReferenceNode, SelectionNode, SelectQueryNode, sql, TableNode, UpdateQueryNode, ValueNode, ValuesNode, WithNode } from 'kysely';
import type { Compilable, CompiledQuery, OperationNode, OperationNodeSource, QueryExecutor, RootOperationNode } from 'kysely';
import type { DialectHooks } from './dialect.ts';
import { defineSole, defineStatement, hooksOf, hot, transact } from './statements.ts';
import type { StatementDef } from './statements.ts';
import type { Db, Executor, Tx } from './types.ts';

type Params = object;

/** A query a step builds: compiled and read as operation nodes (what Kysely's builders are). */
export type StepQuery<R = unknown> = Compilable<R> & OperationNodeSource;

export interface ChainStep<P extends Params> {
  /** Its statement's name on SQLite; its CTE's on PostgreSQL unless `as` names one. */
  readonly name: string;
  /** The table later steps read its row as (default: its name). */
  readonly as?: string;
  /** The columns of its row that later steps read: they make its RETURNING (the query itself returns nothing). */
  readonly returns?: readonly string[];
  /** The earlier step (by its table) whose row this one reads; it runs only when that step returned one. */
  readonly after?: string;
  /** The query, built like a statement's (statements.ts `defineStatement`): `p` holds stand-ins at compile time. */
  readonly build: (db: Db, p: P, hooks: DialectHooks) => StepQuery;
}

/** A chain as each engine runs it. */
export interface Chain<P extends Params, R> {
  readonly name: string;
  /** PostgreSQL: the whole chain as one statement. */
  readonly whole: StatementDef<P, R>;
  /** SQLite: each step's statement, the table its row is read as, and the step it runs after. */
  readonly steps: readonly ChainedStatement[];
}

interface ChainedStatement {
  readonly table: string;
  readonly after: string | undefined;
  readonly statement: StatementDef<Record<string, unknown>, unknown>;
}

/** The parameter that carries column `column` of the row of table `table` (SQLite). */
const rowParam = (table: string, column: string): string => `${table}.${column}`;

/**
 * Defines a chain named `name` (its statement's name on PostgreSQL) over the parameters `params`.
 * The last step answers the chain; a step may read only a step before it that `returns` a row.
 */
export function defineChain<P extends Params, R>(
  name: string,
  params: readonly (keyof P & string)[],
  steps: readonly [...ChainStep<P>[], ChainStep<P> & { readonly build: (db: Db, p: P, hooks: DialectHooks) => StepQuery<R> }],
  options: { readonly sole?: true } = {},
): Chain<P, R> {
  const tableOf = (step: ChainStep<P>) => step.as ?? step.name;
  const returning = new Map<string, readonly string[]>();
  for (const [i, step] of steps.entries()) {
    const table = tableOf(step);
    if (steps.slice(0, i).some((s) => tableOf(s) === table)) throw new Error(`chain ${name}: two steps are named ${table}`);
    if (step.after !== undefined && !returning.has(step.after)) throw new Error(`chain ${name}: step ${step.name} reads ${step.after}, which is no earlier step that returns a row`);
    if (step.returns !== undefined) {
      if (i === steps.length - 1) throw new Error(`chain ${name}: its last step answers with its own query's rows; it declares no returns`);
      returning.set(table, step.returns);
    }
  }
  const nodeOf = (step: ChainStep<P>, db: Db, p: P, hooks: DialectHooks): RootOperationNode => {
    let node = step.build(db, p, hooks).toOperationNode() as RootOperationNode;
    if (step.returns !== undefined) node = withReturning(node, step.returns, `${name}.${step.name}`);
    return step.after === undefined ? node : readingRowOf(node, step.after, `${name}.${step.name}`);
  };
  const build = (db: Db, p: P, hooks: DialectHooks): StepQuery<R> => {
    const prefix = steps.slice(0, -1).map((step) => cte(tableOf(step), nodeOf(step, db, p, hooks)));
    return compiled<R>(db, withCtes(nodeOf(steps.at(-1)!, db, p, hooks), prefix));
  };
  const statements = steps.map((step): ChainedStatement => {
    const read = step.after === undefined ? [] : returning.get(step.after)!.map((column) => rowParam(step.after!, column));
    const statement = defineStatement<Record<string, unknown>, unknown>(step.name, [...params, ...read], (db, p, hooks) => {
      const node = nodeOf(step, db, p as unknown as P, hooks);
      if (step.after === undefined) return compiled(db, node);
      // The earlier step's row, as a CTE of its values.
      const values = returning.get(step.after)!.map((column) => sql`${p[rowParam(step.after!, column)]}`.as(column));
      return compiled(db, withCtes(node, [cte(step.after, db.selectNoFrom(values).toOperationNode())]));
    });
    return { table: tableOf(step), after: step.after, statement };
  });
  const whole = options.sole ? defineSole<P, R>(name, params, build) : defineStatement<P, R>(name, params, build);
  return Object.freeze({ name, whole, steps: Object.freeze(statements) });
}

/**
 * Runs `chain` with `params` on `ex` (a database or a transaction): PostgreSQL's one statement,
 * or SQLite's steps in `ex`'s transaction (a transaction of their own on a database). Answers the
 * first row of its last step, or undefined (also when that step was skipped).
 */
export async function runChain<P extends Params, R>(ex: Executor, chain: Chain<P, R>, params: P): Promise<R | undefined> {
  if (hooksOf(ex).writableCtes) return hot(ex).first(ex, chain.whole, params);
  if (ex.isTransaction) return stepByStep(ex as Tx, chain, params);
  return transact(ex as Db, (trx) => stepByStep(trx, chain, params));
}

async function stepByStep<P extends Params, R>(trx: Tx, chain: Chain<P, R>, params: P): Promise<R | undefined> {
  const rows = new Map<string, Record<string, unknown>>();
  let last: Record<string, unknown> | undefined;
  for (const step of chain.steps) {
    let values = params as unknown as Record<string, unknown>;
    if (step.after !== undefined) {
      const row = rows.get(step.after);
      if (row === undefined) {
        last = undefined;
        continue;
      }
      const bound = { ...values };
      for (const [column, value] of Object.entries(row)) bound[rowParam(step.after, column)] = value;
      values = bound;
    }
    last = (await hot(trx).first(trx, step.statement, values)) as Record<string, unknown> | undefined;
    if (last !== undefined) rows.set(step.table, last);
  }
  return last as R | undefined;
}

/** `node` compiled by `db`'s compiler, as a statement's build answers it (statements.ts compileStatement). */
function compiled<R>(db: Db, node: RootOperationNode): StepQuery<R> {
  return {
    toOperationNode: () => node,
    compile: (): CompiledQuery<R> => {
      // Kysely compiles an operation node through its executor (internal in its typings; statements.ts carrierOf reads it too).
      const executor = (db as unknown as { getExecutor(): QueryExecutor }).getExecutor();
      const queryId = createQueryId();
      return executor.compileQuery<R>(executor.transformQuery(node, queryId), queryId);
    },
  };
}

const cte = (table: string, node: OperationNode): CommonTableExpressionNode =>
  CommonTableExpressionNode.create(CommonTableExpressionNameNode.create(table), node);

/** `node` preceded by the CTEs `ctes` (none: `node` itself). */
function withCtes(node: RootOperationNode, ctes: readonly CommonTableExpressionNode[]): RootOperationNode {
  if (ctes.length === 0) return node;
  if ('with' in node && node.with !== undefined) throw new Error('a chain step holds no WITH of its own: make its parts steps');
  let clause = WithNode.create(ctes[0]!);
  for (const next of ctes.slice(1)) clause = WithNode.cloneWithExpression(clause, next);
  return Object.freeze({ ...node, with: clause }) as RootOperationNode;
}

/** `node` (an INSERT, UPDATE or DELETE) returning `columns` of the rows it writes. */
function withReturning(node: RootOperationNode, columns: readonly string[], what: string): RootOperationNode {
  if (!InsertQueryNode.is(node) && !UpdateQueryNode.is(node) && !DeleteQueryNode.is(node)) throw new Error(`${what}: only a write returns a row for later steps`);
  if (node.returning !== undefined) throw new Error(`${what}: the columns later steps read are its returns, not a RETURNING of its own`);
  return QueryNode.cloneWithReturning(node, columns.map((column) => SelectionNode.create(ReferenceNode.create(ColumnNode.create(column)))));
}

/** Whether the SELECT `node` reads `table` in its FROM already. */
const selectsFrom = (node: SelectQueryNode, table: string): boolean =>
  (node.from?.froms ?? []).some((from) => {
    const source = AliasNode.is(from) ? from.node : from;
    return TableNode.is(source) && source.table.identifier.name === table;
  });

/** `node` made to read the row of `table` and to write nothing when it has none (see the header). */
function readingRowOf(node: RootOperationNode, table: string, what: string): RootOperationNode {
  if (InsertQueryNode.is(node)) {
    const rows = node.values;
    if (rows === undefined || !ValuesNode.is(rows) || rows.values.length !== 1 || node.columns === undefined) {
      throw new Error(`${what}: an insert after another step inserts one row of values`);
    }
    const row = rows.values[0]!;
    const values = row.kind === 'PrimitiveValueListNode' ? row.values.map((value) => ValueNode.create(value)) : row.values;
    const columns = node.columns;
    let select = SelectQueryNode.cloneWithSelections(
      SelectQueryNode.createFrom([TableNode.create(table)]),
      values.map((value, i) => SelectionNode.create(AliasNode.create(value, IdentifierNode.create(columns[i]!.column.name)))),
    );
    // SQLite would read `from t on conflict` as a join's ON: a WHERE ends the SELECT first (its documented parsing ambiguity).
    if (node.onConflict !== undefined) select = QueryNode.cloneWithWhere(select, sql`true`.toOperationNode());
    return InsertQueryNode.cloneWith(node, { values: select });
  }
  if (SelectQueryNode.is(node) && selectsFrom(node, table)) return node;
  if (SelectQueryNode.is(node) || UpdateQueryNode.is(node) || DeleteQueryNode.is(node)) {
    return QueryNode.cloneWithWhere(node, sql`exists (select 1 from ${sql.table(table)})`.toOperationNode());
  }
  throw new Error(`${what}: a step is a SELECT, INSERT, UPDATE or DELETE`);
}
