/**
 * Drives a server with autocannon (the library, in this process) and reduces the run to what the
 * tables print: requests per second, latency percentiles and errors. Latencies are collected
 * from every response at microsecond resolution (autocannon's own histogram keeps whole
 * milliseconds, too coarse for sub-millisecond requests). A response with another status than
 * the scenario expects counts as an error, as do socket errors and timeouts.
 */
import autocannon from 'autocannon';
import type { Request } from 'autocannon';

export interface LoadOptions {
  /** One URL, or several (connections are dealt out round-robin: several instances). */
  readonly urls: readonly string[];
  readonly connections: number;
  readonly seconds: number;
  readonly requests: Request[];
  readonly expectStatus: number;
  /** Per-request timeout in seconds. */
  readonly timeoutSeconds?: number;
  /** Asked after each response; true ends the run early (e.g. a token pool running dry). */
  readonly shouldStop?: () => boolean;
}

/** One autocannon run, raw. */
export interface Slice {
  /** Latencies in ms of the responses with the expected status. */
  readonly latencies: Float64Array;
  readonly errors: number;
  /** Status codes other than the expected one, with counts. */
  readonly unexpected: Readonly<Record<string, number>>;
  readonly seconds: number;
  /** True when `shouldStop` cut the run short. */
  readonly stoppedEarly: boolean;
}

/** One or more slices of one scenario on one server, summed up. */
export interface Measurement {
  /** Responses with the expected status. */
  readonly ok: number;
  readonly errors: number;
  readonly unexpected: Readonly<Record<string, number>>;
  readonly seconds: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly stoppedEarly: boolean;
}

/** The q-quantile (0..1) of sorted samples, nearest rank. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** A growable list of latencies in milliseconds. */
class Samples {
  #data = new Float64Array(1 << 14);
  #length = 0;
  push(value: number): void {
    if (this.#length === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.#length++] = value;
  }
  values(): Float64Array {
    return this.#data.slice(0, this.#length);
  }
}

/**
 * Sends one request as a scenario would (its `setupRequest` applied) and returns the problem
 * with the answer, or undefined: the status must be `expectStatus` and `check` must pass.
 */
export async function probeOnce(
  url: string,
  request: Request,
  expectStatus: number,
  check?: (status: number, body: string) => string | undefined,
): Promise<string | undefined> {
  const built = typeof request.setupRequest === 'function' ? request.setupRequest({ ...request }, {}) : request;
  const response = await fetch(`${url}${built.path ?? '/'}`, {
    method: built.method ?? 'GET',
    headers: (built.headers ?? {}) as Record<string, string>,
    ...(built.body !== undefined ? { body: built.body } : {}),
  });
  const body = await response.text();
  if (response.status !== expectStatus) return `status ${response.status} (expected ${expectStatus}): ${body.slice(0, 300)}`;
  return check?.(response.status, body);
}

/** Sums slices: requests and seconds add up, latencies are pooled before taking percentiles. */
export function summarize(slices: readonly Slice[]): Measurement {
  const total = slices.reduce((n, s) => n + s.latencies.length, 0);
  const pooled = new Float64Array(total);
  let at = 0;
  for (const s of slices) {
    pooled.set(s.latencies, at);
    at += s.latencies.length;
  }
  pooled.sort();
  const unexpected: Record<string, number> = {};
  for (const s of slices) for (const [k, v] of Object.entries(s.unexpected)) unexpected[k] = (unexpected[k] ?? 0) + v;
  const seconds = slices.reduce((n, s) => n + s.seconds, 0);
  return {
    ok: total,
    errors: slices.reduce((n, s) => n + s.errors, 0),
    unexpected,
    seconds,
    rps: seconds > 0 ? total / seconds : Number.NaN,
    p50: quantile(pooled, 0.5),
    p99: quantile(pooled, 0.99),
    max: total > 0 ? pooled[total - 1]! : Number.NaN,
    stoppedEarly: slices.some((s) => s.stoppedEarly),
  };
}

export async function drive(options: LoadOptions): Promise<Slice> {
  const samples = new Samples();
  const unexpected: Record<string, number> = {};
  let stoppedEarly = false;
  const started = performance.now();
  const finished = Promise.withResolvers<autocannon.Result>();
  const instance = autocannon({
    // autocannon takes an array of URLs (its types say one string).
    url: options.urls.length === 1 ? options.urls[0]! : ([...options.urls] as unknown as string),
    connections: options.connections,
    duration: options.seconds,
    pipelining: 1,
    timeout: options.timeoutSeconds ?? 10,
    // autocannon ends a run at the first sample tick after its duration: tick often.
    sampleInt: 100,
    requests: options.requests,
  }, (error: unknown, result: autocannon.Result) => (error ? finished.reject(error) : finished.resolve(result)));
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode === options.expectStatus) samples.push(responseTime);
    else unexpected[String(statusCode)] = (unexpected[String(statusCode)] ?? 0) + 1;
    if (!stoppedEarly && options.shouldStop?.()) {
      stoppedEarly = true;
      instance.stop();
    }
  });
  const result = await finished.promise;
  const seconds = (performance.now() - started) / 1000;
  const wrongStatus = Object.values(unexpected).reduce((a, b) => a + b, 0);
  // autocannon counts a timeout among its errors.
  return { latencies: samples.values(), errors: result.errors + wrongStatus, unexpected, seconds, stoppedEarly };
}
