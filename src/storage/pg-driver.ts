/**
 * Rollcall's PostgreSQL driver, on Kysely's `Driver` interface: it owns the storage's pool, its
 * lookup connections, its prepared names (pg-statements.ts) and its revocation notices, and runs
 * a transaction's statements knowing what each one is from the data its compiled query carries
 * (statements.ts `TemplateQuery`: a deferrable write and the table it writes, a sole statement;
 * revocations.ts `NoticeQuery`), never from its SQL text.
 *
 * A transaction's writes whose outcome nobody reads (statements.ts `defineWrite`: a created
 * user's row, the audit row, the feed's event, the counters' upsert, a token pair) are not sent
 * one by one. They wait on the transaction's connection and go out together, as one statement
 * (every write but the last in a data-modifying WITH, built from the queries Kysely built), just
 * before the transaction's next other statement, or at its commit. Its BEGIN waits too
 * (`beginTransaction` sends nothing): a transaction that runs nothing but such writes (POST
 * /Users) sends them as one statement with no BEGIN and no COMMIT, which is a transaction of its
 * own. One round trip.
 *
 * What waits goes out in the same round trip as the statement behind it: the connections run in
 * node-postgres's pipeline mode, and the BEGIN, the combined writes and the next statement (or the
 * COMMIT) are handed over together, each with its own answer (test/storage/pg-round-trips.test.ts
 * pins the round trips of each request). The first failure in sending order is the
 * answer: a statement behind a failed one fails only because the transaction is aborted, and a
 * COMMIT behind failed writes ends the transaction without committing it (PostgreSQL answers it
 * ROLLBACK), so the caller sees the write's own error, at the statement or at the commit.
 *
 * Why this keeps a transaction's meaning:
 * - Nothing of the transaction reads before its writes are sent: any other statement flushes
 *   them first, so every read sees every earlier write.
 * - One statement is atomic: a write that fails (a unique violation) fails the whole statement
 *   and the transaction with it, at the next statement or at the commit, still inside the
 *   transaction's work, which then rolls back.
 * - The sub-statements of one WITH see one snapshot and not each other's rows. The deferrable
 *   writes read nothing the others write (new rows, counters added to); two writes to one table
 *   never share a statement (the second flushes the first), so no row is changed twice in one.
 *   Foreign keys are checked at the end of the statement, when every row of it is there.
 * - A transaction that names an isolation level or an access mode is begun at once: its writes
 *   never run outside it.
 *
 * A sole statement (statements.ts `defineSole`: a whole write in one data-modifying WITH) that
 * comes first in its transaction goes alone, without its BEGIN: PostgreSQL runs one statement as
 * a transaction of its own, so no COMMIT round trip follows it and the row locks it takes are
 * held only while it runs. Nothing may follow it in that transaction; its COMMIT or ROLLBACK
 * sends nothing (a sole statement that failed rolled itself back).
 *
 * A write lane (lane.ts, `PgLane`) holds one pooled client for transactions that are each one
 * statement, handed over one behind the other without waiting for answers: each transaction gets
 * its own connection state over the shared client and is refused, unsent, if it would send more
 * than its one statement (a BEGIN above all: it would open a transaction the statements of other
 * callers then ran in).
 *
 * Every connection carries the process's ceiling on a statement's time (`statement_timeout`,
 * `PgDriverConfig.statementTimeoutMs`), under which a scan sets its own for its transaction
 * (deadline.ts `withDeadline`, dialect.ts `limitStatements`: a `TransactionSettingQuery`, which
 * waits with the BEGIN and goes out right behind it, in the round trip of the statement it holds
 * to the deadline) and which migrations and index builds lift for themselves
 * (deadline.ts `withoutStatementDeadline`, migrations/index.ts `migrationsWithoutDeadline`).
 */
import { AbortedTransactionError, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import pg from 'pg';
import { isStalePlan, isTransactionSetting } from './dialect.ts';
import { combinedText, LookupConnections, PreparedNames, socketOf } from './pg-statements.ts';
import type { TemplateRunner } from './pg-statements.ts';
import { NotOneStatement } from './lane.ts';
import { ConnectionNotices } from './revocations.ts';
import type { Revocations } from './revocations.ts';
import { templateOfQuery } from './statements.ts';
import type { Template } from './statements.ts';

export interface PgDriverConfig {
  readonly url: string;
  /** Largest number of connections in the pool. */
  readonly poolSize: number;
  /** A deadline on every statement of every connection (milliseconds); unset: none. */
  readonly statementTimeoutMs?: number;
  /** Where this process's revocation notices are heard (revocations.ts). */
  readonly feed: Revocations;
}

/** One statement for node-postgres: its text, values, and the name it runs prepared under. */
export interface Outgoing {
  readonly text: string;
  readonly values: readonly unknown[];
  readonly name?: string | undefined;
  /** Called when its prepared plan went stale (a migration changed a table under it). */
  readonly stale?: () => void;
}

/**
 * Hands `statements` to the connection at once, in order, and answers one promise per statement.
 * The connection pipelines them (node-postgres's pipeline mode): they go out together and the
 * answers come back together, one round trip; each still has its own answer or error.
 */
export type Send = (statements: readonly Outgoing[]) => Promise<pg.QueryResult>[];

/** A deferrable write waiting for its transaction's next statement. */
interface PendingWrite {
  readonly template: Template;
  readonly values: readonly unknown[];
}

const BEGIN: Outgoing = { text: 'begin', values: [] };
const COMMIT: Outgoing = { text: 'commit', values: [] };
const ROLLBACK: Outgoing = { text: 'rollback', values: [] };

/** The statement that begins a transaction with `settings` at once. */
function startTransaction(settings: TransactionSettings): Outgoing {
  let text = 'start transaction';
  if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`;
  if (settings.accessMode) text += ` ${settings.accessMode}`;
  return { text, values: [] };
}

/** A node-postgres answer as Kysely reads it. */
function answerOf<R>(result: pg.QueryResult): QueryResult<R> {
  const changed = result.command === 'INSERT' || result.command === 'UPDATE' || result.command === 'DELETE' || result.command === 'MERGE';
  return { rows: (result.rows ?? []) as R[], ...(changed ? { numAffectedRows: BigInt(result.rowCount ?? 0) } : {}) };
}

/**
 * Where a connection stands in its transaction: `none` outside one; `waiting`, begun with its
 * BEGIN not sent yet; `open`, its BEGIN sent; `alone`, a sole statement was the whole transaction.
 */
type Phase = 'none' | 'waiting' | 'open' | 'alone';

/** One pooled connection: its transaction's phase, its writes waiting, its notices. */
export class PgConnection implements DatabaseConnection {
  readonly #send: Send;
  readonly #names: PreparedNames;
  /** Compiles the combinations of deferred writes; the driver's, shared by its connections. */
  readonly #compiler: PostgresQueryCompiler;
  readonly notices: ConnectionNotices;
  #phase: Phase = 'none';
  #pending: PendingWrite[] = [];
  /** Settings for the rest of the transaction (dialect.ts `TransactionSettingQuery`) waiting with its BEGIN. */
  #settings: Outgoing[] = [];
  /**
   * A write lane's (lane.ts): the connection is shared with transactions that are not over yet,
   * so a transaction may send nothing but one statement that is its whole work.
   */
  readonly #oneStatement: boolean;
  /** A ROLLBACK failed: the connection is not returned to the pool. */
  broken = false;

  constructor(send: Send, names: PreparedNames, feed: Revocations, compiler = new PostgresQueryCompiler(), oneStatement = false) {
    this.#send = send;
    this.#names = names;
    this.#compiler = compiler;
    this.#oneStatement = oneStatement;
    this.notices = new ConnectionNotices(feed);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const template = templateOfQuery(query);
    let result: pg.QueryResult | undefined;
    switch (this.#phase) {
      case 'none':
        result = await this.#flush(this.#outgoing(query.sql, query.parameters, template));
        break;
      case 'alone':
        throw new Error("a sole statement is its transaction's whole work: nothing may follow it");
      default:
        if (this.#oneStatement) this.#refuseBeyondOne(query, template);
        if (this.#phase === 'waiting' && isTransactionSetting(query)) {
          // A statement deadline for the transaction (a scan's): it goes right behind the BEGIN,
          // with the statement it holds to the deadline, in that statement's round trip.
          this.#settings.push({ text: query.sql, values: query.parameters });
          return { rows: [] };
        }
        if (this.#phase === 'waiting' && this.#pending.length === 0 && this.#settings.length === 0 && template?.sole === true) {
          // Nothing sent or waiting: the statement is the transaction, alone (PostgreSQL runs one
          // statement atomically), and no COMMIT round trip follows it. Should it fail, it has
          // rolled itself back.
          this.#phase = 'alone';
          result = await this.#send([this.#outgoing(query.sql, query.parameters, template)])[0]!;
        } else if (template?.writes !== undefined) {
          // Two writes of one table never share a statement: the BEGIN and the first go now, so
          // the transaction is open on the server before either runs.
          const table = template.writes;
          if (this.#pending.some((w) => w.template.writes === table)) await this.#flush(undefined);
          this.#pending.push({ template, values: query.parameters });
          // Nobody reads a deferred write's answer: it has not run yet.
          return { rows: [] };
        } else {
          result = await this.#flush(this.#outgoing(query.sql, query.parameters, template));
        }
    }
    this.notices.ran(query);
    return answerOf<R>(result!);
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    // A cursor keeps a portal open across round trips, which a pipelining connection cannot
    // (node-postgres refuses it); Rollcall streams by keyset pages instead.
    throw new Error('cursors are not supported on pipelining connections');
  }

  /**
   * On a write lane, refuses (before anything of it is sent) a statement that would make its
   * transaction more than one statement: anything but a sole statement that comes first, or a
   * deferrable write that can wait with the others for the commit.
   */
  #refuseBeyondOne(query: CompiledQuery, template: Template | undefined): void {
    if (isTransactionSetting(query)) throw new NotOneStatement('a setting for the transaction');
    if (template?.sole === true && this.#pending.length === 0) return;
    if (template?.writes !== undefined && !this.#pending.some((w) => w.template.writes === template.writes)) return;
    throw new NotOneStatement(template?.writes !== undefined ? `a second write of ${template.writes}` : 'a statement whose answer the transaction reads');
  }

  /** Begins a transaction: a plain one waits to be sent with its first statement; one with settings is sent now. */
  async begin(settings: TransactionSettings): Promise<void> {
    this.#reset();
    if (this.#oneStatement && (settings.isolationLevel || settings.accessMode)) throw new NotOneStatement('an isolation level or access mode');
    if (settings.isolationLevel || settings.accessMode) {
      await this.#flush(startTransaction(settings));
      this.#phase = 'open';
    } else {
      this.#phase = 'waiting';
    }
    this.notices.begun();
  }

  /**
   * Sends what waits (the BEGIN and its settings, the writes) with the COMMIT, in one round trip;
   * never begun on the server and with no setting to keep, the waiting writes go alone, a
   * transaction of their own. The transaction is over whatever the answer: a COMMIT behind a
   * failure ends it without committing, so the ROLLBACK Kysely asks for next sends nothing.
   * Rejects with the first failure.
   */
  async commit(): Promise<void> {
    const phase = this.#phase;
    try {
      if (phase === 'waiting' && (this.#pending.length === 0 || this.#settings.length === 0)) {
        // Never begun on the server: the waiting writes alone are the transaction (a setting
        // waiting with no statement to hold applies to nothing).
        this.#phase = 'none';
        this.#settings = [];
        await this.#flush(undefined);
      } else if (phase === 'waiting' || phase === 'open') {
        const answer = await this.#flush(COMMIT);
        // PostgreSQL completes a COMMIT with ROLLBACK when an earlier statement's error (one the
        // caller caught) left the transaction aborted.
        if (answer?.command === 'ROLLBACK') throw new AbortedTransactionError();
      }
    } finally {
      this.#reset();
      this.notices.committed();
    }
  }

  /** Sends a ROLLBACK only if the transaction was begun on the server and is still open there. */
  async rollback(): Promise<void> {
    const phase = this.#phase;
    this.#reset();
    this.notices.rolledBack();
    if (phase !== 'open') return;
    try {
      await this.#send([ROLLBACK])[0];
    } catch (error) {
      this.broken = true;
      throw error;
    }
  }

  /** Forgets the connection's transaction (it goes back to the pool). */
  release(): void {
    this.#reset();
    this.notices.rolledBack();
  }

  #reset(): void {
    this.#phase = 'none';
    this.#pending = [];
    this.#settings = [];
  }

  /** A statement for node-postgres, under its template's prepared name if it has one. */
  #outgoing(text: string, values: readonly unknown[], template: Template | undefined): Outgoing {
    const name = template && this.#names.nameOf(template);
    if (name === undefined) return { text, values };
    return { text, values, name, stale: () => this.#names.unname(template!) };
  }

  /**
   * Sends the transaction's BEGIN if it is still waiting, its waiting writes as one statement,
   * and `next`, in one pipeline. Answers `next`'s result once every answer is in; the first
   * failure in sending order is the answer (a statement behind a failed one fails only because
   * the transaction is aborted). Without `next`, answers the last statement sent.
   */
  async #flush(next: Outgoing | undefined): Promise<pg.QueryResult | undefined> {
    const statements: Outgoing[] = [];
    if (this.#phase === 'waiting') {
      statements.push(BEGIN, ...this.#settings);
      this.#settings = [];
      this.#phase = 'open';
    }
    if (this.#pending.length > 0) {
      statements.push(this.#combined(this.#pending));
      this.#pending = [];
    }
    if (next) statements.push(next);
    if (statements.length === 0) return undefined;
    if (statements.length === 1) return this.#send(statements)[0]!;
    const answers = await Promise.allSettled(this.#send(statements));
    for (const answer of answers) if (answer.status === 'rejected') throw answer.reason;
    return (answers.at(-1) as PromiseFulfilledResult<pg.QueryResult>).value;
  }

  /** `writes` as one statement: each but the last in a WITH, their values in order. */
  #combined(writes: readonly PendingWrite[]): Outgoing {
    // A single write is its own template's statement, under its own name.
    if (writes.length === 1) return this.#outgoing(writes[0]!.template.compiled.sql, writes[0]!.values, writes[0]!.template);
    const templates = writes.map((w) => w.template);
    const combination = this.#names.combination(templates, () => combinedText(this.#compiler, templates));
    const values = writes.flatMap((w) => w.values);
    if (combination.name === undefined) return { text: combination.text, values };
    return { text: combination.text, values, name: combination.name, stale: () => this.#names.unnameCombination(combination) };
  }
}

/** Rollcall's PostgreSQL driver: see the module's header. */
export class PgDriver implements Driver, TemplateRunner {
  readonly #pool: pg.Pool;
  readonly #lookups: LookupConnections;
  readonly #names = new PreparedNames();
  readonly #compiler = new PostgresQueryCompiler();
  readonly #feed: Revocations;
  readonly #connections = new WeakMap<pg.PoolClient, PgConnection>();
  readonly #clients = new WeakMap<PgConnection, pg.PoolClient>();
  /** How many of the pool's connections write lanes may hold at once, and how many they hold. */
  readonly #laneCap: number;
  #lanes = 0;

  constructor(config: PgDriverConfig) {
    const ceiling = config.statementTimeoutMs !== undefined ? { statement_timeout: config.statementTimeoutMs } : {};
    // Pipeline mode: statements handed to a client together go out together, one round trip;
    // one at a time it changes nothing.
    this.#pool = new pg.Pool({ connectionString: config.url, max: config.poolSize, pipeline: true, ...ceiling });
    // A dropped idle connection must not crash the process; the pool replaces it.
    this.#pool.on('error', () => {});
    // Lookups by key outside transactions share a few pipelined connections (pg-statements.ts).
    this.#lookups = new LookupConnections({ connectionString: config.url, application_name: `rollcall lookups ${process.pid}`, keepAlive: true, ...ceiling });
    this.#feed = config.feed;
    this.#laneCap = Math.floor(config.poolSize / 2);
  }

  /**
   * A connection of the pool held as a write lane (lane.ts), or undefined when lanes already hold
   * half the pool. A lane's holder may wait for another connection (a Bulk's 409 names the
   * holder of the name, read on the pool) while it holds its lane; the half of the pool lanes
   * never take is held only by transactions that wait for nothing of the pool, so it frees up.
   */
  async lane(): Promise<PgLane | undefined> {
    if (this.#lanes >= this.#laneCap) return undefined;
    this.#lanes++;
    try {
      const client = await this.#pool.connect();
      return new PgLane(client, (c) => new PgConnection(c, this.#names, this.#feed, this.#compiler, true), () => this.#lanes--);
    } catch (error) {
      this.#lanes--;
      throw error;
    }
  }

  /** Connections of the pool, for /metrics. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount };
  }

  /**
   * Runs `template` outside a transaction, straight on the pool (a lookup on the shared lookup
   * connections), prepared by name when it has one. A name a migration made stale (another
   * instance changed a table under a prepared `select *`) is dropped, and the statement runs
   * once more, unnamed.
   */
  async run(template: Template, values: unknown[]): Promise<pg.QueryResult<Record<string, unknown>>> {
    const text = template.compiled.sql;
    const name = this.#names.nameOf(template);
    if (name === undefined) return this.#pool.query<Record<string, unknown>>({ text, values });
    try {
      if (template.lookup === true) return await this.#lookups.query(name, text, values);
      return await this.#pool.query<Record<string, unknown>>({ name, text, values });
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      this.#names.unname(template);
      return this.#pool.query<Record<string, unknown>>({ text, values });
    }
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.#pool.connect();
    let connection = this.#connections.get(client);
    if (!connection) {
      connection = new PgConnection(sender(client), this.#names, this.#feed, this.#compiler);
      this.#connections.set(client, connection);
      this.#clients.set(connection, client);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (connection as PgConnection).begin(settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PgConnection).commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PgConnection).rollback();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as PgConnection;
    c.release();
    this.#clients.get(c)?.release(c.broken);
  }

  async destroy(): Promise<void> {
    await this.#lookups.close();
    await this.#pool.end();
  }
}

/**
 * A write lane on PostgreSQL (lane.ts): one pooled client, and a fresh one-statement
 * `PgConnection` over it for each transaction, so that transactions not answered yet keep their
 * own state while sharing the client. node-postgres's pipeline mode sends each statement with its
 * own Sync: PostgreSQL runs each as a transaction of its own, in order, and one that fails leaves
 * the ones behind it to run.
 */
export class PgLane {
  readonly #client: pg.PoolClient;
  readonly #send: Send;
  readonly #connect: (send: Send) => PgConnection;
  readonly #released: () => void;
  #waiter: (() => void) | undefined;
  /** An answer lost the connection: it is not returned to the pool. */
  #broken = false;

  constructor(client: pg.PoolClient, connect: (send: Send) => PgConnection, released: () => void) {
    this.#client = client;
    this.#connect = connect;
    this.#released = released;
    const send = sender(client);
    this.#send = (statements) => {
      const answers = send(statements);
      for (const answer of answers) {
        answer.catch((error: unknown) => {
          // A database's refusal carries its SQLSTATE; anything else lost the connection.
          if ((error as { code?: unknown } | null)?.code === undefined) this.#broken = true;
        });
      }
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter?.();
      return answers;
    };
  }

  /** A connection for one transaction of the lane. */
  connection(): PgConnection {
    return this.#connect(this.#send);
  }

  handedOver(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiter = resolve;
    });
  }

  release(): void {
    this.#client.release(this.#broken);
    this.#released();
  }
}

/** The `Send` of one pooled client: statements handed over together leave in one write. */
function sender(client: pg.PoolClient): Send {
  const one = (s: Outgoing): Promise<pg.QueryResult> => {
    if (s.name === undefined) return client.query(s.text, s.values as unknown[]);
    return client.query({ name: s.name, text: s.text, values: s.values as unknown[] }).catch((error: unknown) => {
      if (isStalePlan(error)) s.stale?.();
      throw error;
    });
  };
  const socket = socketOf(client);
  return (statements) => {
    socket?.cork();
    try {
      return statements.map(one);
    } finally {
      socket?.uncork();
    }
  };
}

/** The dialect of a storage on PostgreSQL: Kysely's compiler, adapter and introspector, over `driver`. */
export function pgDialect(driver: PgDriver): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => driver,
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  };
}
