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
  /** How the client waits before a retry (default: a timer); a test or a scheduler may supply its own. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
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

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** RFC 9110 5.6.7: IMF-fixdate, and the obsolete rfc850-date and asctime-date a recipient must read. */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/** Unix ms of an HTTP-date, or undefined when it is not one (a day or time out of range included). */
function parseHttpDate(text: string, now = Date.now()): number | undefined {
  let parts: { day: string; month: string; year: number; h: string; m: string; s: string } | undefined;
  let match = IMF_FIXDATE.exec(text);
  if (match) parts = { day: match[1]!, month: match[2]!, year: Number(match[3]), h: match[4]!, m: match[5]!, s: match[6]! };
  else if ((match = RFC850_DATE.exec(text))) {
    // A two-digit year more than 50 years ahead is the latest past year with those digits (RFC 9110 5.6.7).
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(match[3]);
    if (year > thisYear + 50) year -= 100;
    parts = { day: match[1]!, month: match[2]!, year, h: match[4]!, m: match[5]!, s: match[6]! };
  } else if ((match = ASCTIME_DATE.exec(text))) parts = { day: match[2]!.trim(), month: match[1]!, year: Number(match[6]), h: match[3]!, m: match[4]!, s: match[5]! };
  if (!parts) return undefined;
  const [month, day, h, m, s] = [MONTHS.indexOf(parts.month), Number(parts.day), Number(parts.h), Number(parts.m), Number(parts.s)];
  const at = Date.UTC(parts.year, month, day, h, m, s);
  // Date.UTC rolls 32 Oct over into November: a date whose fields do not come back is not a date.
  const d = new Date(at);
  if (d.getUTCDate() !== day || d.getUTCMonth() !== month || h > 23 || m > 59 || s > 60) return undefined;
  return at;
}

/**
 * Milliseconds a Retry-After header asks for (RFC 9110 10.2.3: delay-seconds, digits only, or an
 * HTTP-date), or undefined for anything else, so the caller falls back to its capped backoff
 * rather than retrying at once on a value like `-5` or `1.5`.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = parseHttpDate(text, now);
  return at === undefined ? undefined : Math.max(0, at - now);
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
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: TransportOptions) {
    if (!options.token && !options.getToken) throw new TypeError('Rollcall: pass token or getToken');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#options = options;
    const r = typeof options.retries === 'number' ? { retries: options.retries } : (options.retries ?? {});
    this.#retry = { retries: r.retries ?? 3, baseDelayMs: r.baseDelayMs ?? 250, maxDelayMs: r.maxDelayMs ?? 10_000, maxRetryAfterMs: r.maxRetryAfterMs ?? 60_000 };
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#sleep = options.sleep ?? sleep;
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
        await this.#sleep(this.#backoff(attempt), options.signal);
        continue;
      }
      if ((response.status === 429 || response.status === 503) && attempt <= this.#retry.retries) {
        // The server answered and asked to wait: retrying cannot apply a write twice.
        const asked = retryAfterMs(response.headers.get('retry-after'));
        if (asked === undefined || asked <= this.#retry.maxRetryAfterMs) {
          await response.body?.cancel();
          await this.#sleep(asked ?? this.#backoff(attempt), options.signal);
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
