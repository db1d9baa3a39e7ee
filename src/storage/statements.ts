/**
 * Hot statements compiled once. Kysely rebuilds and recompiles a query on every call, which
 * costs more than SQLite takes to run a short statement; the statements on every request's path (the
 * bearer check, reads by id, the writes of a create or a membership change, the audit insert)
 * are instead defined once as a Kysely query over named parameters, compiled on first use into
 * SQL text and a list of parameter slots, and afterwards only bound and run. The SQL is still
 * written with Kysely's builder (so the dialect's compiler produces the placeholders) and lives
 * with its repository; the compiled templates hang off the Storage that connect() builds (never
 * module state), and the engine decides how a template runs (`StatementEngine`): SQLite straight
 * on a prepared node:sqlite statement (sqlite-adapter.ts), PostgreSQL as a named prepared
 * statement, outside a transaction straight on the pool (pg-statements.ts). A bound template
 * reaches the driver as a `TemplateQuery`: the compiled query with its template on it, so the
 * driver reads what the repository declared (a deferrable write and the table it writes, a sole
 * statement, a lookup) from data, never from the SQL text (pg-driver.ts).
 * Dynamic queries (a list page with its filter, order and paging) are compiled once per shape
 * (`Shaped`): built with the query builder the first time their shape is seen, over stand-ins,
 * then only bound; the shapes sit in a bounded LRU.
 *
 * The templates are an internal detail of storage: connect() hangs them (with the dialect
 * hooks) on its Kysely instance as a pass-through plugin (`StorageCarrier`), which every
 * transaction of that instance inherits, and a repository finds them from the executor it was
 * given (`hot(ex)`). Callers pass only a database or a transaction, whether a repository function
 * runs a compiled statement or builds its query; on an executor that carries no templates (a
 * bare Kysely instance) a statement is built and run per call.
 */
import { DeleteQueryNode, InsertQueryNode, TableNode, UpdateQueryNode } from 'kysely';
import type { Compilable, CompiledQuery, KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { isStalePlan } from './dialect.ts';
import type { DialectHooks } from './dialect.ts';
import type { Db, Executor, Tx } from './types.ts';

/** A statement's parameters: a row or a small object of named values. */
type Params = object;

/** One statement: a Kysely query over named parameters, written once. */
export interface StatementDef<P extends Params, R> {
  readonly name: string;
  readonly params: readonly (keyof P & string)[];
  /** Builds the query; `p` holds stand-ins at compile time, so values must not be computed on. */
  readonly build: (db: Db, p: P, hooks: DialectHooks) => Compilable<R>;
  /** A write no one reads the outcome of, run only by `Statements.write` (see there). */
  readonly deferrable?: true;
  /** A read of one row by its key (`defineLookup`). */
  readonly lookup?: true;
  /** A whole transaction's work in one statement (`defineSole`). */
  readonly sole?: true;
}

export const defineStatement = <P extends Params, R>(
  name: string,
  params: readonly (keyof P & string)[],
  build: (db: Db, p: P, hooks: DialectHooks) => Compilable<R>,
): StatementDef<P, R> => Object.freeze({ name, params, build });

/**
 * A write whose outcome no caller reads (an insert of a new row, an upsert of counters), run by
 * `Statements.write` only. One INSERT, UPDATE or DELETE of one table, without a WITH of its own
 * (compiling it refuses anything else); the table is read from the query Kysely built.
 *
 * The contract, for a repository author:
 * - Inside a transaction on PostgreSQL the write may not have run when `write` returns: it waits
 *   on the transaction's connection and goes out with the transaction's other such writes, as
 *   one statement, together with the transaction's next other statement or its COMMIT
 *   (pg-driver.ts). `write` answers nothing (no row count, no RETURNING).
 * - Its failure (a unique violation, a foreign key) therefore surfaces at that next statement,
 *   which rejects with the write's own error, or at the commit, which rejects with it: the
 *   transaction's `execute` rejects with the database's error and writes nothing. Do not count on
 *   catching one write's failure inside the transaction; catch it around the transaction
 *   (scim/write.ts turns a unique violation into 409 there).
 * - So do not use it for a write whose outcome decides what the transaction does next, nor for
 *   one that reads rows another deferrable write of the same transaction writes (they may share
 *   one statement, whose parts see one snapshot). Two writes of one table never share one.
 * - Outside a transaction, and on SQLite, it runs at once.
 */
export const defineWrite = <P extends Params>(
  name: string,
  params: readonly (keyof P & string)[],
  build: (db: Db, p: P, hooks: DialectHooks) => Compilable<unknown>,
): StatementDef<P, unknown> => Object.freeze({ name, params, build, deferrable: true });

/**
 * A read of one row by its key (a user, a group, a token with its team): always quick, never
 * waiting on a lock. On PostgreSQL, outside a transaction, it may share a pipelined connection
 * with other requests' lookups of the same turn (pg-statements.ts `LookupConnections`), so it
 * must not be slow, take locks (no FOR UPDATE) or write: a slow one holds up every lookup queued
 * behind it. Inside a transaction it runs on the transaction's connection as any statement.
 */
export const defineLookup = <P extends Params, R>(
  name: string,
  params: readonly (keyof P & string)[],
  build: (db: Db, p: P, hooks: DialectHooks) => Compilable<R>,
): StatementDef<P, R> => Object.freeze({ name, params, build, lookup: true });

/**
 * A statement that does a whole write by itself (on PostgreSQL, a data-modifying WITH: the row's
 * new version, what the write adds, its audit row and its event). Run first in its transaction,
 * on PostgreSQL it is sent alone as a transaction of its own: no BEGIN, and no COMMIT round trip
 * after it, so the row locks it takes are held only while it runs (pg-driver.ts).
 *
 * The contract, for a repository author: nothing may follow it in that transaction (any statement
 * after it is refused, since its transaction has already committed); should it fail it has
 * rolled itself back, and the transaction's `execute` rejects with its error. Behind other work
 * in a transaction it runs inside the transaction as any statement. Elsewhere (SQLite) it runs as
 * any statement.
 */
export const defineSole = <P extends Params, R>(
  name: string,
  params: readonly (keyof P & string)[],
  build: (db: Db, p: P, hooks: DialectHooks) => Compilable<R>,
): StatementDef<P, R> => Object.freeze({ name, params, build, sole: true });

/** A parameter of the compiled SQL: the statement's parameter of that name, or a constant. */
type Slot = { readonly param: string } | { readonly constant: unknown };

/** A statement compiled for one database: its SQL and how to fill its placeholders. */
export interface Template {
  readonly name: string;
  readonly compiled: CompiledQuery;
  readonly slots: readonly Slot[];
  /** A statement defined once (a bounded set), not a list shape: PostgreSQL prepares it by name (pg-statements.ts). */
  readonly fixed: boolean;
  /** A list shape PostgreSQL may prepare by name once it is hot (`Shaped.preparable`). */
  readonly preparable?: boolean;
  /** Defined by `defineWrite`: the one table it writes; its driver may send it later in its transaction. */
  readonly writes?: string;
  /** A read by key: defined by `defineLookup` (one row), or a shape that is one (`Shaped.lookup`). */
  readonly lookup?: boolean;
  /** Defined by `defineSole`: a whole transaction's work. */
  readonly sole?: boolean;
}

/**
 * A bound template as the driver receives it: the compiled query with its values, and the
 * template it came from, whose identity and kind the driver reads (pg-driver.ts). Kysely hands
 * the compiled query object to the driver's connection as it is given.
 */
export interface TemplateQuery extends CompiledQuery {
  readonly template: Template;
}

/** `template` with `values` in its placeholders, carrying the template to the driver. */
export const boundQuery = (template: Template, values: readonly unknown[]): TemplateQuery => ({ ...template.compiled, parameters: values, template });

/** The template a compiled query was bound from, or undefined for any other query. */
export const templateOfQuery = (query: CompiledQuery): Template | undefined => (query as Partial<TemplateQuery>).template;

/** How one engine runs a compiled template on an executor (a database or a transaction). */
export interface StatementEngine {
  rows(ex: Executor, template: Template, values: unknown[]): Promise<Record<string, unknown>[]>;
  /** The first row, or undefined. */
  row(ex: Executor, template: Template, values: unknown[]): Promise<Record<string, unknown> | undefined>;
  /** Rows changed by a write. */
  changes(ex: Executor, template: Template, values: unknown[]): Promise<number>;
  /** A write of `defineWrite`: done by the end of the transaction `ex`, or now outside one (see `Statements.write`). */
  write(ex: Executor, template: Template, values: unknown[]): Promise<void>;
}

/** What the repositories run hot statements through (`hot(ex)`). */
export interface Statements {
  all<P extends Params, R>(ex: Executor, def: StatementDef<P, R>, params: P): Promise<R[]>;
  first<P extends Params, R>(ex: Executor, def: StatementDef<P, R>, params: P): Promise<R | undefined>;
  /** Runs a write; answers how many rows it changed. */
  run<P extends Params, R>(ex: Executor, def: StatementDef<P, R>, params: P): Promise<number>;
  /**
   * Runs a write of `defineWrite`. Inside a transaction on PostgreSQL it may be sent later, with
   * the transaction's other such writes in one statement, before the transaction's next other
   * statement or at its commit (pg-driver.ts); its failure then surfaces there, still inside the
   * transaction, which rolls back (see `defineWrite`). Elsewhere it runs now.
   */
  write<P extends Params>(ex: Executor, def: StatementDef<P, unknown>, params: P): Promise<void>;
  /** The rows of a dynamic query, compiled once per shape (see `Shaped`). */
  shaped(ex: Executor, query: Shaped): Promise<Record<string, unknown>[]>;
}

/**
 * A dynamic query (a list page, its count) described by its shape: `key` names everything that
 * decides its SQL text (the table, the filter's structure with its columns, JSON keys, case
 * folding and operators, the order, the paging), and `values` its parameters, in the order of
 * the stand-ins `build` was given. `build(db, false)` builds the query with `shapeParam(i)` in
 * place of `values[i]`; `build(db, true)` builds it with the values themselves (an executor
 * without compiled statements, or a shape that cannot be compiled once, see compileShape).
 */
export interface Shaped {
  readonly name: string;
  readonly key: string;
  readonly values: readonly unknown[];
  readonly build: (db: Db, withValues: boolean) => Compilable<unknown>;
  /** Its best plan does not depend on its values (equality lookups): PostgreSQL may prepare it by name once it is hot. */
  readonly preparable?: boolean;
  /**
   * A read by key, as quick as `defineLookup`'s and never waiting on a lock (a first page of one
   * equality on a key's index: `userName eq`): once prepared, PostgreSQL may send it on the
   * connections lookups share.
   */
  readonly lookup?: boolean;
}

/** The stand-in of a shaped query's i-th parameter: a control character and both cases, so a value upper- or lower-cased on its way is caught. */
export const shapeParam = (i: number): string => `\u0001rc-Shape:${i}\u0001`;

/** Compiled shapes kept per database: a bounded LRU (a list paged by offset makes one per page). */
export const SHAPE_CACHE_SIZE = 256;

/**
 * `query` compiled over its stand-ins, or undefined when its SQL is not a function of the shape
 * alone: a stand-in that reached the SQL text, was transformed on its way to a parameter, or was
 * dropped (a value computed on while building) would make two queries of one key share a wrong
 * statement, so such a shape is built per call.
 */
function compileShape(db: Db, query: Shaped): Template | undefined {
  const compiled = query.build(db, false).compile();
  if (compiled.sql.includes('\u0001')) return undefined;
  const standIns = new Map(query.values.map((_, i) => [shapeParam(i), String(i)]));
  const seen = new Set<string>();
  const slots: Slot[] = [];
  for (const value of compiled.parameters) {
    const param = standIns.get(value as string);
    if (param !== undefined) {
      seen.add(param);
      slots.push({ param });
    } else if (typeof value === 'string' && value.includes('\u0001')) {
      return undefined;
    } else {
      slots.push({ constant: value });
    }
  }
  if (seen.size !== standIns.size) return undefined;
  return { name: query.name, compiled, slots, fixed: false, preparable: query.preparable === true, ...(query.lookup === true ? { lookup: true } : {}) };
}

/**
 * Stand-ins carry a control character and capitals, so a definition that computes on a parameter
 * (lower-cases it, concatenates it) leaves a constant with that character behind and is refused.
 */
const MARK = '\u0001RC-PARAM:';

/** Compiles `def` on `db` with a stand-in string per parameter, then maps them to slots. */
export function compileStatement<P extends Params, R>(db: Db, def: StatementDef<P, R>, hooks: DialectHooks = hooksOf(db)): Template {
  const standIns: Record<string, string> = {};
  const names = new Map<unknown, string>();
  for (const name of def.params) {
    const standIn = `${MARK}${name}\u0001`;
    standIns[name] = standIn;
    names.set(standIn, name);
  }
  const compiled = def.build(db, standIns as unknown as P, hooks).compile();
  const slots = compiled.parameters.map((value): Slot => {
    const param = names.get(value);
    if (param !== undefined) return { param };
    if (typeof value === 'string' && value.includes('\u0001')) {
      throw new Error(`statement ${def.name}: a parameter was transformed before binding; pass it through unchanged`);
    }
    return { constant: value };
  });
  return { name: def.name, compiled, slots, fixed: true, ...(def.deferrable ? { writes: deferrableTable(def.name, compiled.query) } : {}), ...(def.lookup ? { lookup: true } : {}), ...(def.sole ? { sole: true } : {}) };
}

/** The name of a table node; undefined for anything else (an alias, a subquery). */
const tableName = (node: OperationNode | undefined): string | undefined => (node && TableNode.is(node) ? node.table.identifier.name : undefined);

/**
 * The one table a deferrable write writes, read from the query Kysely built: an INSERT, UPDATE
 * or DELETE of one named table, with no WITH of its own (PostgreSQL allows a data-modifying WITH
 * only at a statement's top level, where the deferred writes' own WITH goes). Refuses anything else.
 */
function deferrableTable(name: string, query: RootOperationNode): string {
  let table: string | undefined;
  if (InsertQueryNode.is(query)) table = query.with ? undefined : tableName(query.into);
  else if (UpdateQueryNode.is(query)) table = query.with ? undefined : tableName(query.table);
  else if (DeleteQueryNode.is(query)) table = query.with || query.from.froms.length !== 1 ? undefined : tableName(query.from.froms[0]);
  if (table === undefined) throw new Error(`statement ${name} cannot be deferred: not an INSERT, UPDATE or DELETE of one named table without a WITH`);
  return table;
}

/** The engine-neutral part of the hot statements: compile once per database, bind, run. */
export function createStatements(db: Db, engine: StatementEngine, hooks: DialectHooks): Statements {
  const templates = new Map<StatementDef<Params, unknown>, Template>();
  const templateOf = (def: StatementDef<Params, unknown>): Template => {
    let template = templates.get(def);
    if (!template) {
      template = compileStatement(db, def, hooks);
      templates.set(def, template);
    }
    return template;
  };
  const bind = (template: Template, params: Params): unknown[] =>
    template.slots.map((slot) => ('param' in slot ? (params as Record<string, unknown>)[slot.param] : slot.constant));
  // Most recently used last; null marks a shape that is built per call.
  const shapes = new Map<string, Template | null>();
  const shapeOf = (query: Shaped): Template | null => {
    let template = shapes.get(query.key);
    if (template !== undefined) {
      shapes.delete(query.key);
    } else {
      template = compileShape(db, query) ?? null;
      if (shapes.size >= SHAPE_CACHE_SIZE) shapes.delete(shapes.keys().next().value!);
    }
    shapes.set(query.key, template);
    return template;
  };
  return {
    all: async <P extends Params, R>(ex: Executor, def: StatementDef<P, R>, params: P) => {
      const template = templateOf(def as StatementDef<Params, unknown>);
      return (await engine.rows(ex, template, bind(template, params))) as R[];
    },
    first: async <P extends Params, R>(ex: Executor, def: StatementDef<P, R>, params: P) => {
      const template = templateOf(def as StatementDef<Params, unknown>);
      return (await engine.row(ex, template, bind(template, params))) as R | undefined;
    },
    run: async <P extends Params, R>(ex: Executor, def: StatementDef<P, R>, params: P) => {
      if (def.deferrable) throw new Error(`statement ${def.name} is a deferrable write: run it with write()`);
      const template = templateOf(def as StatementDef<Params, unknown>);
      return engine.changes(ex, template, bind(template, params));
    },
    write: async <P extends Params>(ex: Executor, def: StatementDef<P, unknown>, params: P) => {
      if (!def.deferrable) throw new Error(`statement ${def.name} is not a deferrable write: run it with run()`);
      const template = templateOf(def as StatementDef<Params, unknown>);
      await engine.write(ex, template, bind(template, params));
    },
    shaped: async (ex, query) => {
      const template = shapeOf(query);
      // Built per call: compiled without the executor's plugins (they see the statement once, as a whole, when it runs).
      if (!template) return (await ex.executeQuery(query.build(ex.withoutPlugins() as Db, true).compile())).rows as Record<string, unknown>[];
      return engine.rows(ex, template, bind(template, query.values));
    },
  };
}

/** Runs templates through Kysely's executor (connection pool or mutex, plugins' result hooks), each carrying its template to the driver. */
export const kyselyEngine: StatementEngine = {
  async rows(ex, template, values) {
    return (await ex.executeQuery<Record<string, unknown>>(boundQuery(template, values))).rows;
  },
  async row(ex, template, values) {
    return (await ex.executeQuery<Record<string, unknown>>(boundQuery(template, values))).rows[0];
  },
  async changes(ex, template, values) {
    return Number((await ex.executeQuery(boundQuery(template, values))).numAffectedRows ?? 0n);
  },
  async write(ex, template, values) {
    await ex.executeQuery(boundQuery(template, values));
  },
};

/**
 * Carries a storage's compiled statements and dialect hooks on its Kysely instance. It changes
 * no query and no result; it is only there to be found from any executor of that instance.
 */
export class StorageCarrier implements KyselyPlugin {
  readonly statements: Statements;
  readonly hooks: DialectHooks;

  constructor(statements: Statements, hooks: DialectHooks) {
    this.statements = statements;
    this.hooks = hooks;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/**
 * The carrier of `ex`, the last one added (a test may add one over the storage's). Kysely keeps
 * an instance's plugins on its executor, which transactions share; `getExecutor` is marked
 * internal in Kysely's typings, hence the narrow cast (test/storage/statements.test.ts pins it).
 */
function carrierOf(ex: Executor): StorageCarrier | undefined {
  const plugins = (ex as unknown as { getExecutor(): { readonly plugins: readonly KyselyPlugin[] } }).getExecutor().plugins;
  for (let i = plugins.length - 1; i >= 0; i--) {
    const plugin = plugins[i];
    if (plugin instanceof StorageCarrier) return plugin;
  }
  return undefined;
}

/** No carrier, no dialect hooks: a statement that uses them fails there, one that does not runs. */
const NO_HOOKS = new Proxy({} as DialectHooks, {
  get() {
    throw new Error('this executor does not belong to a Storage built by connect()');
  },
});

/** Statements built and run per call: what an executor without a carrier gets. */
const perCall: Statements = {
  all: async (ex, def, params) => (await ex.executeQuery(def.build(ex as Db, params, NO_HOOKS).compile())).rows,
  first: async (ex, def, params) => (await ex.executeQuery(def.build(ex as Db, params, NO_HOOKS).compile())).rows[0],
  run: async (ex, def, params) => Number((await ex.executeQuery(def.build(ex as Db, params, NO_HOOKS).compile())).numAffectedRows ?? 0n),
  write: async (ex, def, params) => {
    await ex.executeQuery(def.build(ex as Db, params, NO_HOOKS).compile());
  },
  shaped: async (ex, query) => (await ex.executeQuery(query.build(ex as Db, true).compile())).rows as Record<string, unknown>[],
};

/** The hot statements of the storage `ex` belongs to. */
export const hot = (ex: Executor): Statements => carrierOf(ex)?.statements ?? perCall;

/** The dialect hooks of the storage `ex` belongs to, or undefined for a bare Kysely instance. */
export const hooksIfAny = (ex: Executor): DialectHooks | undefined => carrierOf(ex)?.hooks;

/** The dialect hooks of the storage `ex` belongs to. */
export function hooksOf(ex: Executor): DialectHooks {
  const carrier = carrierOf(ex);
  if (!carrier) throw new Error('this executor does not belong to a Storage built by connect()');
  return carrier.hooks;
}

/** How many times a transaction runs when schema changes keep invalidating its prepared statements. */
const STALE_PLAN_ATTEMPTS = 4;

/**
 * Runs `work` in one transaction of `db`. On PostgreSQL the compiled statements run prepared by
 * name, in transactions too (pg-statements.ts); a migration run by another instance can change a
 * table under one, and the transaction then fails on it once: that statement runs unnamed from
 * then on, and `work` runs again (its first attempt rolled back). Every transaction that runs
 * compiled statements goes through here, or through scim/write.ts `runWrite`, which retries the
 * same failure among others.
 */
export async function transact<T>(db: Db, work: (trx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (!isStalePlan(error) || attempt >= STALE_PLAN_ATTEMPTS) throw error;
    }
  }
}
