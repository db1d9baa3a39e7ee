/**
 * Builds the expression indexes the teams' extensions want, outside any request: a schema change
 * commits, tells the builder, and answers; the builder then drops the
 * indexes nobody wants any more and builds the pending ones one at a time, each its own
 * statement (PostgreSQL: CONCURRENTLY, so other teams' writes go on; SQLite: a partial index per
 * team, see repos/expression-indexes.ts). The set of wanted indexes is not stored apart: it is
 * every team's registered extensions, and what is built is the database's catalogue, so after a
 * crash, a failed build or a change made by another instance or the CLI, the next run finds
 * what is left to do. Owned by its app (started when it is ready, stopped when it closes); the
 * CLI and `rollcall copy` run `buildExtensionIndexes` themselves.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Storage } from '../storage/connect.ts';
import { activeExtensions } from '../storage/repos/extensions.ts';
import { buildExpressionIndex, dropExpressionIndex, indexWork } from '../storage/repos/expression-indexes.ts';
import type { IndexWork, WantedIndex } from '../storage/repos/expression-indexes.ts';
import type { Executor } from '../storage/types.ts';
import { declOf, tableOf, wantedIndexesOf } from './team-schemas.ts';

const TABLES = ['users', 'groups'] as const;

/** What every team's extensions want, per table, and what it takes to get there. */
async function work(ex: Executor): Promise<Map<(typeof TABLES)[number], IndexWork>> {
  const wanted = new Map<(typeof TABLES)[number], WantedIndex[]>(TABLES.map((t) => [t, []]));
  for (const row of await activeExtensions(ex)) {
    const decl = declOf(row);
    wanted.get(tableOf(decl))!.push(...wantedIndexesOf(row.team_id, decl));
  }
  const out = new Map<(typeof TABLES)[number], IndexWork>();
  for (const table of TABLES) out.set(table, await indexWork(ex, table, wanted.get(table)!));
  return out;
}

const hasWork = (w: Map<string, IndexWork>): boolean => [...w.values()].some((t) => t.drop.length > 0 || t.build.length > 0);

/**
 * Makes the extension indexes those every team's extensions want: drops, then builds, one
 * statement at a time, outside any transaction; `stopped` is asked between statements. Answers
 * the names dropped and built.
 */
export async function buildExtensionIndexes(storage: Storage, stopped: () => boolean = () => false): Promise<{ dropped: string[]; built: string[] }> {
  const dropped: string[] = [];
  const built: string[] = [];
  for (const [table, { drop, build }] of await work(storage.db)) {
    for (const name of drop) {
      // SQLite answers synchronously: the event loop turns between statements only if let.
      await nextTurn();
      if (stopped()) return { dropped, built };
      await dropExpressionIndex(storage.db, name);
      dropped.push(name);
    }
    for (const wanted of build) {
      await nextTurn();
      if (stopped()) return { dropped, built };
      built.push(await buildExpressionIndex(storage.db, table, wanted));
    }
  }
  return { dropped, built };
}

export interface IndexBuilderSettings {
  /** How long after a failed run the builder tries again. */
  readonly retryMs: number;
}

export const DEFAULT_INDEX_BUILDER: IndexBuilderSettings = { retryMs: 30_000 };

/** The app's index builder: one run at a time; a change during a run makes another run follow. */
export class ExtensionIndexBuilder {
  readonly #storage: Storage;
  readonly #log: FastifyBaseLogger;
  readonly #settings: IndexBuilderSettings;
  #run: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(deps: { storage: Storage; log: FastifyBaseLogger; settings?: Partial<IndexBuilderSettings> }) {
    this.#storage = deps.storage;
    this.#log = deps.log;
    this.#settings = { ...DEFAULT_INDEX_BUILDER, ...deps.settings };
  }

  /**
   * Looks (awaited, so the app's first request finds it done) whether indexes are pending from
   * before this start, and builds them in the background if so.
   */
  async start(): Promise<void> {
    try {
      if (hasWork(await work(this.#storage.db))) this.kick();
    } catch (error) {
      this.#failed(error);
    }
  }

  /** A schema change committed: run (again, after the current run if one is under way). */
  kick(): void {
    if (this.#stopped) return;
    if (this.#run) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#retry);
    this.#run = this.#loop().finally(() => {
      this.#run = undefined;
    });
  }

  /** Resolves once no run is under way or asked for (tests: the indexes wanted are built). */
  async idle(): Promise<void> {
    while (this.#run) await this.#run;
  }

  /** Stops: no new run; the statement under way finishes (PostgreSQL would leave an invalid index otherwise). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    await this.#run;
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      try {
        const { dropped, built } = await buildExtensionIndexes(this.#storage, () => this.#stopped);
        if (dropped.length + built.length > 0) this.#log.info({ dropped, built }, 'extension indexes updated');
      } catch (error) {
        this.#failed(error);
        return;
      }
    } while (this.#again && !this.#stopped);
  }

  #failed(error: unknown): void {
    this.#log.warn({ err: error }, 'building extension indexes failed; will try again');
    if (this.#stopped) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.kick(), this.#settings.retryMs);
    this.#retry.unref();
  }
}
