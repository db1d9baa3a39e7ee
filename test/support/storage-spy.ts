/**
 * A Kysely plugin that watches what an app reads from one table: it counts the SELECT
 * statements naming the table (and those using OFFSET) and can make the n-th of them fail, so
 * that tests can prove a response read no membership row, read a big group in chunks, paged
 * without OFFSET, or failed halfway through.
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Storage } from '../../src/storage/connect.ts';
import { hot, hooksOf, StorageCarrier } from '../../src/storage/statements.ts';
import type { Statements } from '../../src/storage/statements.ts';
import type { Db } from '../../src/storage/types.ts';

export class TableReads implements KyselyPlugin {
  readonly #needle: string;
  /** SELECTs naming the table since the last reset. */
  count = 0;
  /** How many of them skip rows with OFFSET. */
  offsets = 0;
  /** When set, the SELECT with this number (1-based, since the last reset) throws. */
  failOn: number | undefined;

  constructor(table: string) {
    this.#needle = JSON.stringify(table);
  }

  reset(failOn?: number): void {
    this.count = 0;
    this.offsets = 0;
    this.failOn = failOn;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node).includes(this.#needle)) {
      this.count++;
      if (args.node.offset) this.offsets++;
      if (this.count === this.failOn) throw new Error(`injected failure of read ${this.count}`);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** `storage` with every query going through this plugin. */
  wrap(storage: Storage): Storage {
    const inner = hot(storage.db);
    const statements: Statements = {
      all: inner.all,
      first: inner.first,
      run: inner.run,
      write: inner.write,
      // A list query compiled once per shape runs as SQL that plugins never see: built once more
      // here, through this plugin, so that it is counted (and failed when asked) like any other.
      shaped: async (ex, query) => {
        query.build(ex as Db, true).compile();
        return inner.shaped(ex, query);
      },
    };
    return { ...storage, db: storage.db.withPlugin(this).withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
  }
}

/**
 * Records what an app runs: the name of every compiled statement (storage.statements) and the
 * kind of every query built per call through Kysely, so that tests can pin which statements a
 * request runs (one for the bearer check, none for a new user's groups) and that the hot paths
 * build no query per call.
 */
export class StatementLog implements KyselyPlugin {
  /** Compiled statements run since the last reset, by name, in order. */
  statements: string[] = [];
  /** Queries built per call since the last reset, by node kind. */
  built: string[] = [];

  reset(): void {
    this.statements = [];
    this.built = [];
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.built.push(args.node.kind);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** `storage` with its statements and queries going through this log. */
  wrap(storage: Storage): Storage {
    const inner = hot(storage.db);
    const statements: Statements = {
      all: (ex, def, params) => (this.statements.push(def.name), inner.all(ex, def, params)),
      first: (ex, def, params) => (this.statements.push(def.name), inner.first(ex, def, params)),
      run: (ex, def, params) => (this.statements.push(def.name), inner.run(ex, def, params)),
      write: (ex, def, params) => (this.statements.push(def.name), inner.write(ex, def, params)),
      shaped: (ex, query) => (this.statements.push(query.name), inner.shaped(ex, query)),
    };
    return { ...storage, db: storage.db.withPlugin(this).withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
  }
}

/**
 * A crash between two steps of a write: once armed, the first query matching `trigger` (a query
 * built per call, given as its operation node's JSON) and every statement and query after it
 * fail, as if the process had died there, until disarmed. A write that spans several
 * transactions leaves its first ones committed; one transaction leaves nothing.
 */
export class CrashFrom implements KyselyPlugin {
  #trigger: ((node: string) => boolean) | undefined;
  /** Whether the crash has happened (every statement fails). */
  crashed = false;

  arm(trigger: (node: string) => boolean): void {
    this.#trigger = trigger;
    this.crashed = false;
  }

  disarm(): void {
    this.#trigger = undefined;
    this.crashed = false;
  }

  #check(): void {
    if (this.crashed) throw new Error('injected crash: the process is gone');
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (!this.crashed && this.#trigger?.(JSON.stringify(args.node))) this.crashed = true;
    this.#check();
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** `storage` with its statements and queries failing once the crash has happened. */
  wrap(storage: Storage): Storage {
    const inner = hot(storage.db);
    const statements: Statements = {
      all: (ex, def, params) => (this.#check(), inner.all(ex, def, params)),
      first: (ex, def, params) => (this.#check(), inner.first(ex, def, params)),
      run: (ex, def, params) => (this.#check(), inner.run(ex, def, params)),
      write: (ex, def, params) => (this.#check(), inner.write(ex, def, params)),
      shaped: (ex, query) => (this.#check(), inner.shaped(ex, query)),
    };
    return { ...storage, db: storage.db.withPlugin(this).withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
  }
}
