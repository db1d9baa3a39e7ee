/**
 * The transport: one request with the bearer token, JSON in and out, retries. Retried: 429 and
 * 503 (the server answered and asked to wait), honouring Retry-After (seconds or an HTTP date),
 * else a capped exponential backoff with jitter; network errors only for idempotent requests
 * (a POST or PATCH may have reached the server and been applied). At most `retries + 1`
 * attempts. Answers outside 2xx throw RollcallError.
 */
import { RollcallError } from './errors.ts';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  readonly retries?: number;
  /** Backoff base when no Retry-After is sent (default 250 ms), doubled per attempt. */
  readonly baseDelayMs?: number;
  /** Upper bound of the backoff (default 10 s). */
  readonly maxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown (default 60 s). */
  readonly maxRetryAfterMs?: number;
}

export interface TransportOptions {
  readonly baseUrl: string;
  readonly token?: string;
  readonly getToken?: () => string | Promise<string>;
  readonly fetch?: typeof fetch;
  readonly retries?: number | RetryOptions;
  readonly userAgent?: string;
}

export interface RequestOptions {
  readonly method: string;
  /** Path under baseUrl (starting with '/'), or an absolute URL. */
  readonly path: string;
  readonly query?: Record<string, string | number | undefined>;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Safe to repeat after a network error (default: GET, HEAD, PUT, DELETE, OPTIONS). */
  readonly idempotent?: boolean;
  readonly signal?: AbortSignal;
  /** Content type of a body (default application/scim+json). */
  readonly contentType?: string;
}

export interface Answer<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Milliseconds a Retry-After header asks for, or undefined (RFC 9110 10.2.3). */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  readonly baseUrl: string;
  readonly #options: TransportOptions;
  readonly #retry: Required<RetryOptions>;
  readonly #fetch: typeof fetch;

  constructor(options: TransportOptions) {
    if (!options.token && !options.getToken) throw new TypeError('Rollcall: pass token or getToken');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#options = options;
    const r = typeof options.retries === 'number' ? { retries: options.retries } : (options.retries ?? {});
    this.#retry = { retries: r.retries ?? 3, baseDelayMs: r.baseDelayMs ?? 250, maxDelayMs: r.maxDelayMs ?? 10_000, maxRetryAfterMs: r.maxRetryAfterMs ?? 60_000 };
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  url(path: string, query?: RequestOptions['query']): URL {
    const url = /^https?:\/\//.test(path) ? new URL(path) : new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  /** The delay before retry number `attempt` (1-based) when the server named none. */
  #backoff(attempt: number): number {
    const ceiling = Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** (attempt - 1));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  async request<T = unknown>(options: RequestOptions): Promise<Answer<T>> {
    const method = options.method.toUpperCase();
    const idempotent = options.idempotent ?? IDEMPOTENT.has(method);
    const url = this.url(options.path, options.query);
    const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    for (let attempt = 1; ; attempt++) {
      const token = this.#options.token ?? (await this.#options.getToken!());
      const headers: Record<string, string> = {
        accept: 'application/scim+json, application/json',
        authorization: `Bearer ${token}`,
        ...(this.#options.userAgent ? { 'user-agent': this.#options.userAgent } : {}),
        ...(payload !== undefined ? { 'content-type': options.contentType ?? 'application/scim+json' } : {}),
        ...options.headers,
      };
      let response: Response;
      try {
        response = await this.#fetch(url, { method, headers, ...(payload !== undefined ? { body: payload } : {}), ...(options.signal ? { signal: options.signal } : {}) });
      } catch (error) {
        // A network error: the request may have been applied; repeat only what is safe to repeat.
        if (options.signal?.aborted || !idempotent || attempt > this.#retry.retries) throw error;
        await sleep(this.#backoff(attempt), options.signal);
        continue;
      }
      if ((response.status === 429 || response.status === 503) && attempt <= this.#retry.retries) {
        // The server answered and asked to wait: retrying cannot apply a write twice.
        const asked = retryAfterMs(response.headers.get('retry-after'));
        if (asked === undefined || asked <= this.#retry.maxRetryAfterMs) {
          await response.body?.cancel();
          await sleep(asked ?? this.#backoff(attempt), options.signal);
          continue;
        }
      }
      const text = await response.text();
      let body: unknown = undefined;
      if (text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      if (!response.ok && response.status !== 304) throw new RollcallError(response.status, body, response.headers, method, url.pathname);
      return { status: response.status, headers: response.headers, body: body as T };
    }
  }
}
