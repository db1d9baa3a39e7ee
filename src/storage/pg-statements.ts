/**
 * Runs compiled templates (statements.ts) on PostgreSQL. A statement compiled once
 * (`Template.fixed`: the bounded set of every request's hot statements) runs as a named prepared
 * statement wherever it runs: each pooled connection parses and plans it on first use, then only
 * binds and executes it (node-postgres keeps the names per connection). The name is derived from
 * the SQL text, so two texts never share one. Outside a transaction a template goes straight to
 * the pool, skipping Kysely's executor (its connection provider and promise hops); inside one it
 * runs on the transaction's connection through Kysely, whose clients come from `namingPool` and
 * send a known text by its name. List shapes are many and come and go (statements.ts
 * `SHAPE_CACHE_SIZE`): they run unnamed, or every connection would keep every shape it ever saw,
 * except the hot lookups by value. A shape whose plan does not depend on its values
 * (`Shaped.preparable`: a first page filtered by equalities, such as `userName eq`) gets a name
 * once it has run HOT_SHAPE_USES times, and keeps it; at most MAX_NAMED_SHAPES shapes ever get
 * one, so a connection keeps at most that many besides the fixed statements.
 * Should a migration change a table under a prepared statement (another instance upgraded the
 * schema), the statement runs unnamed from then on; a transaction caught by that is run again
 * (statements.ts `transact`; SCIM writes: scim/write.ts `runWrite`, through `isRetryable`).
 */
import { createHash } from 'node:crypto';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { isStalePlan } from './dialect.ts';
import { CombinedTexts, DeferringConnection, deferrableTable } from './pg-deferred-writes.ts';
import type { Send } from './pg-deferred-writes.ts';
import { kyselyEngine } from './statements.ts';
import type { StatementEngine, Template } from './statements.ts';

/** Runs of a preparable list shape before it is prepared by name: a shape run once or twice is not worth a connection's memory. */
export const HOT_SHAPE_USES = 8;
/** List shapes that ever get a name, per process: every connection may keep each of them. */
export const MAX_NAMED_SHAPES = 64;
/** Combinations of deferred writes (pg-deferred-writes.ts) that ever get a name, per process. */
export const MAX_NAMED_COMBINED = 64;

/** The names of the statements compiled once, and of the hot list shapes, by their SQL text. */
export class PreparedNames {
  readonly #byText = new Map<string, string>();
  /** Texts a schema change invalidated: unnamed from then on. */
  readonly #unnamed = new Set<string>();
  /** Runs of each preparable shape not named yet (its template leaves with the shape cache's LRU). */
  readonly #uses = new WeakMap<Template, number>();
  #namedShapes = 0;
  /** The table each deferrable write's text writes (statements.ts `defineWrite`). */
  readonly #deferrable = new Map<string, string>();
  /** The texts of sole statements (statements.ts `defineSole`). */
  readonly #sole = new Set<string>();
  #namedCombined = 0;
  /** The combined texts of deferred writes, built once each (pg-deferred-writes.ts). */
  readonly combinations = new CombinedTexts();

  /** The name `template` runs under, or undefined when it runs unnamed. */
  nameOf(template: Template): string | undefined {
    const text = template.compiled.sql;
    if (this.#unnamed.has(text)) return undefined;
    let name = this.#byText.get(text);
    if (name !== undefined) return name;
    if (!template.fixed) {
      if (template.preparable !== true || this.#namedShapes >= MAX_NAMED_SHAPES) return undefined;
      const uses = (this.#uses.get(template) ?? 0) + 1;
      this.#uses.set(template, uses);
      if (uses < HOT_SHAPE_USES) return undefined;
      this.#namedShapes++;
    }
    name = `rc_${template.name.replace(/\W/g, '_').slice(0, 30)}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    this.#byText.set(text, name);
    return name;
  }

  /** Marks `template` (of `defineWrite`) as a write its transaction may send later; refuses one that cannot be combined. */
  defer(template: Template): void {
    const text = template.compiled.sql;
    if (this.#deferrable.has(text)) return;
    const found = deferrableTable(text);
    if ('problem' in found) throw new Error(`statement ${template.name} cannot be deferred: ${found.problem}`);
    this.#deferrable.set(text, found.table);
  }

  /** Marks `template` (of `defineSole`) as a statement that may run as its transaction, alone. */
  markSole(template: Template): void {
    this.#sole.add(template.compiled.sql);
  }

  /** Whether `text` is a sole statement's. */
  sole(text: string): boolean {
    return this.#sole.has(text);
  }

  /** The table a deferrable write's text writes; undefined for any other text. */
  deferredTable(text: string): string | undefined {
    return this.#deferrable.get(text);
  }

  /**
   * Names a combination of deferred writes at its first run: combinations are made of statements
   * compiled once, so there are only as many as the code's write paths; at most
   * MAX_NAMED_COMBINED ever get a name all the same.
   */
  noteCombined(text: string): void {
    if (this.#byText.has(text) || this.#unnamed.has(text) || this.#namedCombined >= MAX_NAMED_COMBINED) return;
    this.#namedCombined++;
    this.#byText.set(text, `rc_writes_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`);
  }

  /** The name of a statement whose text a template named before, if any. */
  known(text: string): string | undefined {
    return this.#byText.get(text);
  }

  unname(text: string): void {
    this.#unnamed.add(text);
    this.#byText.delete(text);
  }
}

/** A client's socket, to cork: writes handed to it meanwhile leave together when it is uncorked. */
function socketOf(client: pg.ClientBase): { cork(): void; uncork(): void } | undefined {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  return stream?.cork && stream.uncork ? (stream as { cork(): void; uncork(): void }) : undefined;
}

/**
 * `pool` as Kysely's PostgresDialect takes it, its clients sending a statement compiled once by
 * its name: so the hot statements of a write's transaction are prepared too. Each client keeps
 * its transaction's deferrable writes (and its BEGIN) until they must go, then sends them in one
 * pipeline with the statement behind them (pg-deferred-writes.ts).
 */
export function namingPool(pool: pg.Pool, names: PreparedNames): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const query = async (text: string, values: ReadonlyArray<unknown>): Promise<PostgresQueryResult<unknown>> => {
      const name = names.known(text);
      // node-postgres types `command` as any string; Kysely's as the commands it reads.
      if (name === undefined) return (await client.query(text, values as unknown[])) as PostgresQueryResult<unknown>;
      try {
        return (await client.query({ name, text, values: values as unknown[] })) as PostgresQueryResult<unknown>;
      } catch (error) {
        if (isStalePlan(error)) names.unname(text);
        throw error;
      }
    };
    // The pool's clients pipeline (connect.ts): each statement is written as it is handed over.
    // The socket is corked meanwhile, so statements handed over together leave in one write.
    const socket = socketOf(client);
    const send: Send = (statements) => {
      socket?.cork();
      try {
        return statements.map((s) => query(s.text, s.values));
      } finally {
        socket?.uncork();
      }
    };
    const connection = new DeferringConnection(send, names);
    return {
      query: ((sqlOrCursor: string | PostgresCursor<unknown>, values?: ReadonlyArray<unknown>) => {
        // A cursor keeps a portal open across round trips, which a pipelining connection cannot
        // (node-postgres refuses it); Rollcall streams by keyset pages instead.
        if (typeof sqlOrCursor !== 'string') throw new Error('cursors are not supported on pipelining connections');
        return connection.query(sqlOrCursor, values ?? []);
      }) as PostgresPoolClient['query'],
      release: (destroy?: boolean) => {
        connection.reset();
        client.release(destroy);
      },
    };
  };
  return {
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (!wrapped) {
        wrapped = wrap(client);
        clients.set(client, wrapped);
      }
      return wrapped;
    },
    end: () => pool.end(),
  };
}

/** Connections a process's lookups share (`LookupConnections`), besides its pool. */
export const LOOKUP_CONNECTIONS = 2;

/** One shared connection and the answers it owes. */
interface Lane {
  readonly client: pg.Client;
  awaited: number;
  corked: boolean;
}

/**
 * PostgreSQL connections that lookups outside a transaction share (statements.ts
 * `defineLookup`: a user, a group, a token by its key; and, once prepared, a list's first page
 * of one equality on a key, `Shaped.lookup`: `userName eq`). Each runs in node-postgres's pipeline
 * mode: a lookup is written to the least busy connection at once, without waiting for the
 * answers before it, and the socket stays corked until the event loop's turn ends. So the
 * lookups of all the requests one turn handles leave in one write and their answers come back
 * together, where each would otherwise take a pooled connection (acquire, write, read, release)
 * of its own. Only lookups share: a read by key is quick and never waits on a lock, so nothing
 * slow holds up the others queued behind it on the connection; every other statement uses the
 * pool. A connection that fails or ends is dropped, and the next lookup opens another.
 */
export class LookupConnections {
  readonly #config: pg.ClientConfig;
  readonly #size: number;
  readonly #lanes: Lane[] = [];
  #closed = false;

  constructor(config: pg.ClientConfig, size = LOOKUP_CONNECTIONS) {
    this.#config = config;
    this.#size = size;
  }

  query(name: string, text: string, values: unknown[]): Promise<pg.QueryResult<Record<string, unknown>>> {
    if (this.#closed) return Promise.reject(new Error('the storage is closed'));
    const lane = this.#lane();
    lane.awaited++;
    this.#cork(lane);
    const settled = () => {
      lane.awaited--;
    };
    const answer = lane.client.query<Record<string, unknown>>({ name, text, values });
    answer.then(settled, settled);
    return answer;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const lanes = this.#lanes.splice(0);
    await Promise.all(lanes.map((lane) => lane.client.end().catch(() => {})));
  }

  /** An idle connection, else a new one while fewer than the size are open, else the least busy. */
  #lane(): Lane {
    let best: Lane | undefined;
    for (const lane of this.#lanes) if (best === undefined || lane.awaited < best.awaited) best = lane;
    if (best !== undefined && (best.awaited === 0 || this.#lanes.length >= this.#size)) return best;
    const client = new pg.Client({ ...this.#config, pipeline: true });
    const lane: Lane = { client, awaited: 0, corked: false };
    this.#lanes.push(lane);
    const drop = () => {
      const at = this.#lanes.indexOf(lane);
      if (at >= 0) this.#lanes.splice(at, 1);
      client.end().catch(() => {});
    };
    client.on('error', drop);
    client.on('end', drop);
    // Lookups handed over before the connection is up are sent once it is (or fail with it).
    client.connect().catch(drop);
    return lane;
  }

  /** Holds the connection's writes to the end of this turn of the event loop: one write for all of them. */
  #cork(lane: Lane): void {
    if (lane.corked) return;
    const socket = socketOf(lane.client);
    if (!socket) return;
    lane.corked = true;
    socket.cork();
    setImmediate(() => {
      lane.corked = false;
      socket.uncork();
    });
  }
}

export function pgStatementEngine(pool: pg.Pool, names: PreparedNames, lookups?: LookupConnections): StatementEngine {
  const query = async (template: Template, values: unknown[]) => {
    const text = template.compiled.sql;
    const name = names.nameOf(template);
    if (name === undefined) return pool.query<Record<string, unknown>>({ text, values });
    try {
      if (template.lookup === true && lookups) return await lookups.query(name, text, values);
      return await pool.query<Record<string, unknown>>({ name, text, values });
    } catch (error) {
      // A migration run by another instance changed a table under a prepared `select *`;
      // PostgreSQL keeps refusing that name on this connection. Outside a transaction: once more, unnamed.
      if (!isStalePlan(error)) throw error;
      names.unname(text);
      return pool.query<Record<string, unknown>>({ text, values });
    }
  };
  // Inside a transaction, through Kysely on the transaction's connection: named there by namingPool.
  const inTransaction = (template: Template): Template => {
    names.nameOf(template);
    if (template.sole === true) names.markSole(template);
    return template;
  };
  return {
    async rows(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.rows(ex, inTransaction(template), values);
      return (await query(template, values)).rows;
    },
    async row(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.row(ex, inTransaction(template), values);
      return (await query(template, values)).rows[0];
    },
    async changes(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.changes(ex, inTransaction(template), values);
      return (await query(template, values)).rowCount ?? 0;
    },
    async write(ex, template, values) {
      if (!ex.isTransaction) {
        await query(template, values);
        return;
      }
      // Marked before it reaches the transaction's client, which keeps it until it must go.
      names.defer(template);
      await kyselyEngine.write(ex, inTransaction(template), values);
    },
  };
}
