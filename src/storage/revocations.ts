/**
 * Revocation notices: how a process that keeps verified access tokens in memory (the bearer
 * cache, oauth/bearer-cache.ts) learns at once that a write ended some of them. Storage owns
 * this because storage is where token rows, clients and teams change: every repository function
 * that takes a token's access away announces it (`announceRevocation`) on the executor of its
 * write, and the notice travels with that write's transaction.
 *
 * - In this process, subscribers hear a notice when its transaction commits (or at once, for a
 *   write outside a transaction); a rolled-back transaction says nothing. The notice's statement
 *   carries the notice as data (`NoticeQuery`), and the driver that runs it (pg-driver.ts on
 *   PostgreSQL, the wrapper below on SQLite) ties it to the connection's transaction, so it is
 *   heard after COMMIT and before the write's caller goes on: the next request on this instance
 *   sees the change.
 * - On PostgreSQL the notice is also `pg_notify` in the same transaction, which PostgreSQL
 *   delivers on commit to every instance listening on the channel (`LISTEN`, one dedicated
 *   connection per process, started when the first subscriber arrives). While that connection
 *   is down the feed is not `live`: subscribers must not trust anything they cached, since
 *   notices may be lost; when it is back, everything is forgotten once (`all`) and it is live
 *   again. SQLite has one server process, so its feed is always live; another process on the
 *   same file (the CLI) is noticed through `PRAGMA data_version` (`sqlitePoller`).
 *
 * This module must not know what a subscriber caches; it only names what changed.
 */
import { CompiledQuery } from 'kysely';
import type { DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import pg from 'pg';
import { hooksIfAny } from './statements.ts';
import type { Executor } from './types.ts';

/** What a write took away: one token (by its SHA-256), a grant's family, or everything of a user, client or team. */
export type Revoked =
  | { readonly kind: 'token' | 'family' | 'user' | 'client' | 'team'; readonly id: string }
  | { readonly kind: 'all' };

export type RevocationListener = (revoked: Revoked) => void;

/** What a subscriber sees of the feed. */
export interface RevocationFeed {
  /** Whether every notice, from every instance, reaches the subscribers now. */
  readonly live: boolean;
  subscribe(listener: RevocationListener): () => void;
  /** Resolves once the feed is live, or after `timeoutMs` (then it may still be down). */
  ready(timeoutMs: number): Promise<boolean>;
}

/** The PostgreSQL channel the notices travel on. */
export const REVOCATION_CHANNEL = 'rollcall_revocations';

const KINDS = new Set(['token', 'family', 'user', 'client', 'team', 'all']);

/** A notice's payload back into a notice; anything unreadable means "forget everything". */
function parseNotice(payload: unknown): Revoked {
  try {
    const value = JSON.parse(String(payload)) as { kind?: unknown; id?: unknown };
    if (typeof value.kind === 'string' && KINDS.has(value.kind)) {
      if (value.kind === 'all') return { kind: 'all' };
      if (typeof value.id === 'string') return { kind: value.kind as 'token', id: value.id };
    }
  } catch {
    // Fall through: a notice nobody can read must still invalidate.
  }
  return { kind: 'all' };
}

/** The statement of a notice, carrying the notice for its driver to hand to the subscribers. */
export interface NoticeQuery extends CompiledQuery {
  readonly notice: Revoked;
}

/** The notice a statement announces, or undefined for any other statement. */
export const noticeOf = (query: CompiledQuery): Revoked | undefined => (query as Partial<NoticeQuery>).notice;

/**
 * Records that the write running on `ex` takes access away. Runs one small statement on `ex`
 * (PostgreSQL: pg_notify; SQLite: a no-op select) so the notice belongs to the write's
 * transaction. An executor of a Kysely instance not built by connect() announces nothing.
 */
export async function announceRevocation(ex: Executor, revoked: Revoked): Promise<void> {
  const hooks = hooksIfAny(ex);
  if (!hooks) return;
  const query: NoticeQuery = { ...CompiledQuery.raw(hooks.revocationNoticeSql, [JSON.stringify(revoked)]), notice: revoked };
  await ex.executeQuery(query);
}

/**
 * The notices of the transactions of one connection: held while its transaction is open, heard
 * by the feed when it commits (also when the COMMIT failed: whether it took effect is unknown,
 * and forgetting is safe), dropped when it rolls back. Outside a transaction a notice is heard at
 * once, once its statement has run.
 */
export class ConnectionNotices {
  readonly #feed: Revocations;
  /** Notices of the open transaction; undefined outside one. */
  #pending: Revoked[] | undefined;

  constructor(feed: Revocations) {
    this.#feed = feed;
  }

  /** The statement `query` ran: its notice, if any, is held or heard. */
  ran(query: CompiledQuery): void {
    const notice = noticeOf(query);
    if (notice === undefined) return;
    if (this.#pending) this.#pending.push(notice);
    else this.#feed.emit(notice);
  }

  begun(): void {
    this.#pending = [];
  }

  committed(): void {
    const pending = this.#pending ?? [];
    this.#pending = undefined;
    for (const notice of pending) this.#feed.emit(notice);
  }

  rolledBack(): void {
    this.#pending = undefined;
  }
}

/** The notices of one storage: local subscribers, and on PostgreSQL the LISTEN connection. */
export class Revocations implements RevocationFeed {
  readonly #listeners = new Set<RevocationListener>();
  readonly #remote: RemoteNotices | undefined;
  #live: boolean;
  #waiters: (() => void)[] = [];

  /** `remote` brings other processes' notices; the feed starts live unless `remote` must connect first. */
  constructor(remote?: (feed: Revocations) => RemoteNotices, startsLive = remote === undefined) {
    this.#remote = remote?.(this);
    this.#live = startsLive;
  }

  get live(): boolean {
    return this.#live;
  }

  subscribe(listener: RevocationListener): () => void {
    this.#listeners.add(listener);
    this.#remote?.start();
    return () => {
      this.#listeners.delete(listener);
    };
  }

  ready(timeoutMs: number): Promise<boolean> {
    if (this.#live) return Promise.resolve(true);
    return new Promise((resolve) => {
      // Not unref'd: a start-up waiting here must not end the process while the LISTEN
      // connection is still being retried (its retry timer is unref'd).
      const timer = setTimeout(() => resolve(this.#live), timeoutMs);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Tells every subscriber. A subscriber that throws does not keep the others from hearing. */
  emit(revoked: Revoked): void {
    for (const listener of this.#listeners) {
      try {
        listener(revoked);
      } catch {
        // A subscriber's own failure; the notice still reaches the rest.
      }
    }
  }

  /** The LISTEN connection came up or went down: either way nothing cached before is trusted. */
  setLive(live: boolean): void {
    if (live === this.#live) return;
    this.#live = live;
    this.emit({ kind: 'all' });
    if (live) for (const wake of this.#waiters.splice(0)) wake();
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    await this.#remote?.stop();
  }
}

export interface RemoteNotices {
  start(): void;
  stop(): Promise<void>;
}

export interface ListenOptions {
  /** First wait before reconnecting; doubles up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  /** How often the idle LISTEN connection is probed, so that a silently dead one is noticed. */
  readonly heartbeatMs?: number;
}

/**
 * The LISTEN side on PostgreSQL: one dedicated connection, reconnected with backoff. The feed
 * is live only while it is connected and listening.
 */
export function pgListener(url: string, options: ListenOptions = {}): (feed: Revocations) => RemoteNotices {
  const retryMs = options.retryMs ?? 100;
  const maxRetryMs = options.maxRetryMs ?? 5000;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  return (feed) => {
    let started = false;
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    let delay = retryMs;

    const drop = (dead: pg.Client): void => {
      if (client !== dead) return;
      client = undefined;
      clearInterval(heartbeat);
      feed.setLive(false);
      dead.removeAllListeners('notification');
      dead.on('error', () => {});
      void dead.end().catch(() => {});
      if (stopped) return;
      retry = setTimeout(connectOnce, delay);
      retry.unref();
      delay = Math.min(delay * 2, maxRetryMs);
    };

    const connectOnce = (): void => {
      retry = undefined;
      if (stopped) return;
      const next = new pg.Client({ connectionString: url, keepAlive: true });
      client = next;
      next.on('error', () => drop(next));
      next.on('end', () => drop(next));
      next.on('notification', (message) => {
        if (message.channel === REVOCATION_CHANNEL) feed.emit(parseNotice(message.payload));
      });
      next
        .connect()
        .then(() => next.query(`LISTEN ${REVOCATION_CHANNEL}`))
        .then(() => {
          if (client !== next || stopped) return;
          delay = retryMs;
          feed.setLive(true);
          heartbeat = setInterval(() => void next.query('SELECT 1').catch(() => drop(next)), heartbeatMs);
          heartbeat.unref();
        })
        .catch(() => drop(next));
    };

    return {
      start() {
        if (started) return;
        started = true;
        connectOnce();
      },
      async stop() {
        stopped = true;
        clearTimeout(retry);
        clearInterval(heartbeat);
        const last = client;
        client = undefined;
        if (last) {
          last.removeAllListeners();
          last.on('error', () => {});
          await last.end().catch(() => {});
        }
      },
    };
  };
}

/**
 * Other processes on one SQLite file (the CLI revoking a token while the server runs): SQLite
 * has no notices, but `PRAGMA data_version` on this process's connection changes whenever
 * another connection commits (or checkpoints). Polled every `intervalMs` off the request path;
 * a change makes subscribers forget everything, so another process's revocation is seen within
 * that interval. The feed stays live (the file cannot go away underneath).
 */
export function sqlitePoller(dataVersion: () => number | undefined, intervalMs = 50): (feed: Revocations) => RemoteNotices {
  return (feed) => {
    let timer: NodeJS.Timeout | undefined;
    let last: number | undefined;
    return {
      start() {
        if (timer) return;
        last = dataVersion();
        timer = setInterval(() => {
          const now = dataVersion();
          if (now !== undefined && now !== last) {
            last = now;
            feed.emit({ kind: 'all' });
          }
        }, intervalMs);
        timer.unref();
      },
      async stop() {
        clearInterval(timer);
        timer = undefined;
      },
    };
  };
}

/**
 * A dialect whose driver hands this process's notices to `feed` when the transaction that ran
 * them commits (at once for a notice outside a transaction); a rollback drops them. SQLite's:
 * PostgreSQL's own driver does this itself (pg-driver.ts).
 */
export function withRevocationNotices(dialect: Dialect, feed: Revocations): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new NoticeDriver(dialect.createDriver(), feed),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

class NoticeConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection;
  readonly notices: ConnectionNotices;

  constructor(inner: DatabaseConnection, feed: Revocations) {
    this.inner = inner;
    this.notices = new ConnectionNotices(feed);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(query);
    this.notices.ran(query);
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class NoticeDriver implements Driver {
  readonly #inner: Driver;
  readonly #feed: Revocations;
  readonly #connections = new WeakMap<DatabaseConnection, NoticeConnection>();

  constructor(inner: Driver, feed: Revocations) {
    this.#inner = inner;
    this.#feed = feed;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await this.#inner.acquireConnection();
    let wrapped = this.#connections.get(inner);
    if (!wrapped) {
      wrapped = new NoticeConnection(inner, this.#feed);
      this.#connections.set(inner, wrapped);
    }
    return wrapped;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as NoticeConnection;
    await this.#inner.beginTransaction(c.inner, settings);
    c.notices.begun();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as NoticeConnection;
    try {
      await this.#inner.commitTransaction(c.inner);
    } finally {
      c.notices.committed();
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as NoticeConnection;
    c.notices.rolledBack();
    await this.#inner.rollbackTransaction(c.inner);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection((connection as NoticeConnection).inner);
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}
