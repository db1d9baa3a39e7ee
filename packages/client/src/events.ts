/**
 * The plain JSON feed (`GET /v2/events?after=&limit=`, scope `read`) followed from a saved
 * position: every event after it in `seq` order, then waiting for more, until the signal aborts.
 * A position whose following events were pruned answers 410: FeedPrunedError.
 */
import { FeedPrunedError, RollcallError } from './errors.ts';
import { sleep } from './http.ts';
import type { Transport } from './http.ts';

/** One event of the feed (docs/events.md, "The plain JSON listing"). */
export interface FeedEvent {
  /** Place in the team's feed: strictly increasing, gap-free. Save it to resume. */
  readonly seq: number;
  /** When the change committed (ISO 8601). */
  readonly at: string;
  /** The RFC 9967 event URI. */
  readonly event: string;
  readonly change: 'create' | 'put' | 'patch' | 'delete' | 'activate' | 'deactivate' | 'asyncresp' | (string & {});
  readonly resourceType: 'User' | 'Group' | (string & {});
  readonly id: string;
  readonly externalId: string | null;
  /** The ETag after the change; an `asyncresp` event's only when its outcome has one. */
  readonly version?: string;
  readonly changed: readonly string[];
  readonly members?: { readonly added?: readonly string[]; readonly removed?: readonly string[]; readonly cleared?: boolean } | null;
  readonly actor: unknown;
  readonly txn: string | null;
  /**
   * An `asyncresp` event's (RFC 9967 section 2.5.1.3): an asynchronous write's result as one
   * BulkResponse operation; `txn` is the request's Set-Txn (`<Set-Txn>:<i>` for Bulk operation
   * i); `id` is '' when the write created nothing.
   */
  readonly outcome?: { readonly method: string; readonly bulkId?: string; readonly version?: string; readonly location?: string; readonly status: string; readonly response?: unknown };
}

export interface FeedPage {
  readonly events: FeedEvent[];
  /** The position to ask after next. */
  readonly next: number;
  /** More events are there already. */
  readonly more: boolean;
}

export interface FollowOptions {
  /** The last seq handled (0: from the start of what is kept). */
  after?: number;
  /** Stops following: the iterator ends (no error). */
  signal?: AbortSignal;
  /**
   * Called with an event's seq once the loop body that received it has finished (the iterator
   * was asked for the next one): store it, and pass it as `after` to resume.
   */
  onPosition?: (seq: number) => void | Promise<void>;
  /** Events per request (1..1000, default 100). */
  limit?: number;
  /** Wait between requests once caught up (default 1000 ms). */
  pollIntervalMs?: number;
}

export class Events {
  readonly #http: Transport;
  constructor(http: Transport) {
    this.#http = http;
  }

  /** One page of the feed after `after`. */
  async list(after = 0, limit = 100, signal?: AbortSignal): Promise<FeedPage> {
    try {
      return (await this.#http.request<FeedPage>({ method: 'GET', path: '/v2/events', query: { after, limit }, ...(signal ? { signal } : {}) })).body;
    } catch (error) {
      if (error instanceof RollcallError && error.status === 410) throw new FeedPrunedError(after, error);
      throw error;
    }
  }

  /** Every event after `after`, then each new one as it comes, until `signal` aborts. */
  async *follow(options: FollowOptions = {}): AsyncGenerator<FeedEvent, void, undefined> {
    const { signal, onPosition, limit = 100, pollIntervalMs = 1000 } = options;
    let position = options.after ?? 0;
    while (!signal?.aborted) {
      let page: FeedPage;
      try {
        page = await this.list(position, limit, signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      for (const event of page.events) {
        yield event;
        position = event.seq;
        await onPosition?.(position);
        if (signal?.aborted) return;
      }
      if (page.events.length === 0) position = Math.max(position, page.next);
      // An empty page waits even if it says `more` (its `next` may not advance): asking again at
      // once would spin against the server.
      if (!page.more || page.events.length === 0) {
        try {
          await sleep(pollIntervalMs, signal);
        } catch {
          return;
        }
      }
    }
  }
}
