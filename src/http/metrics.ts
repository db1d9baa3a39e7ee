/**
 * Prometheus metrics (GET /metrics, text format): request counts and latency histograms by
 * route template, method and status; token grants by grant type and outcome; the database
 * pool; the password hasher's units and the limiters' keys; Shared Signals' commit-to-acceptance
 * time by delivery method (issue 33, events/ssf/latency.ts); failed event deliveries by reason
 * (events/delivery.ts failureReason); the process's own metrics. Each
 * app has its own registry, so tests can build many. Routes are labelled by their template
 * (`/v2/scim/Users/:id`), never by the raw URL.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { HashingLoad } from '../oauth/passwords.ts';
import type { Storage } from '../storage/connect.ts';
import { OverBudget } from '../budgets.ts';
import type { SignalDelivery, SignalLatency } from '../events/ssf/latency.ts';
import type { DeliveryFailures } from '../events/delivery.ts';

export interface Metrics extends SignalLatency, DeliveryFailures {
  readonly registry: Registry;
  /** Counts one /oauth/token answer: `outcome` is `issued` or the OAuth error code. */
  grant(grantType: string, outcome: string): void;
  /** Counts one answered request. */
  request(request: FastifyRequest, status: number, seconds: number): void;
  /** Counts one request a team's budget refused (src/budgets.ts), by team id and budget. */
  budgetRefused(teamId: string, budget: string): void;
}

const KNOWN_GRANTS = new Set(['authorization_code', 'password', 'refresh_token', 'client_credentials']);

export function createMetrics(storage: Storage): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'rollcall_' });
  const requests = new Counter({
    name: 'rollcall_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'rollcall_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route template, method and status',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const grants = new Counter({
    name: 'rollcall_oauth_token_grants_total',
    help: 'Answers of the token endpoint, by grant type and outcome (issued or the OAuth error code)',
    labelNames: ['grant_type', 'outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'rollcall_db_pool_connections',
    help: 'Database pool connections by state (SQLite: one embedded connection)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = storage.poolStats();
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  const refusals = new Counter({
    name: 'rollcall_budget_refusals_total',
    help: "Requests refused by a team's budget (src/budgets.ts), by team id and budget",
    labelNames: ['team', 'budget'],
    registers: [registry],
  });
  // Deprovisioning's promise (issue 33): a signal accepted within 5 s of its commit, so 5 is a bucket bound.
  const signals = new Histogram({
    name: 'rollcall_ssf_signal_delivery_seconds',
    help: 'Shared Signals from the commit of their change to their acceptance by the receiver (push: a 2xx answer; poll: the acknowledgement), by delivery method',
    labelNames: ['method'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 7.5, 10, 15, 30],
    registers: [registry],
  });
  const deliveryFailures = new Counter({
    name: 'rollcall_event_delivery_failures_total',
    help: 'Failed push attempts of event subscriptions, by reason (refused, tls, timeout, dns, forbidden_address, network, secret, http_4xx, http_5xx, set_rejected, ...)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const signalMethods: Record<SignalDelivery, ReturnType<typeof signals.labels>> = { push: signals.labels({ method: 'push' }), poll: signals.labels({ method: 'poll' }) };
  // The children of one label set, kept per app: prom-client hashes a label object on every call.
  const children = new Map<string, { count: () => void; observe: (seconds: number) => void }>();
  return {
    registry,
    budgetRefused: (teamId, budget) => refusals.inc({ team: teamId, budget }),
    signalAccepted: (method, seconds) => signalMethods[method].observe(seconds),
    deliveryFailed: (reason) => deliveryFailures.inc({ reason }),
    grant: (grantType, outcome) => grants.inc({ grant_type: KNOWN_GRANTS.has(grantType) ? grantType : 'other', outcome }),
    request(request, status, seconds) {
      const route = request.routeOptions.url ?? 'unmatched';
      const key = `${request.method} ${status} ${route}`;
      let child = children.get(key);
      if (!child) {
        const labels = { route, method: request.method, status: String(status) };
        const counter = requests.labels(labels);
        const histogram = latency.labels(labels);
        child = { count: () => counter.inc(), observe: (s) => histogram.observe(s) };
        children.set(key, child);
      }
      child.count();
      child.observe(seconds);
    },
  };
}

export function registerMetrics(app: FastifyInstance, metrics: Metrics): void {
  // Every surface (SCIM, admin, events, console) refuses over a budget with OverBudget: counted here, once.
  app.addHook('onError', (_request, _reply, error, done) => {
    if (error instanceof OverBudget) metrics.budgetRefused(error.teamId, error.budget);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(request, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (_request, reply) =>
    reply.code(200).header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}

/** The shared capacities anonymous callers press on (hasher slots, limiter keys), read at each scrape. */
export interface Pressure {
  readonly hashing: () => HashingLoad;
  readonly limiterKeys: () => Readonly<Record<string, number>>;
}

export function registerPressure(metrics: Metrics, pressure: Pressure): void {
  new Gauge({
    name: 'rollcall_password_hashing_units',
    help: 'Units of the password hasher by class (team: authenticated writes; anonymous: sign-ins) and state',
    labelNames: ['class', 'state'],
    registers: [metrics.registry],
    collect() {
      const load = pressure.hashing();
      this.set({ class: 'team', state: 'running' }, load.running - load.anonymousRunning);
      this.set({ class: 'team', state: 'queued' }, load.queued);
      this.set({ class: 'anonymous', state: 'running' }, load.anonymousRunning);
      this.set({ class: 'anonymous', state: 'queued' }, load.anonymousQueued);
    },
  });
  new Gauge({
    name: 'rollcall_limiter_keys',
    help: 'Keys held in process memory by each brute-force limiter (bounded by LimitSettings.memoryKeys)',
    labelNames: ['limiter'],
    registers: [metrics.registry],
    collect() {
      for (const [limiter, keys] of Object.entries(pressure.limiterKeys())) this.set({ limiter }, keys);
    },
  });
}
