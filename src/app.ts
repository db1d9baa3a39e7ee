/**
 * The composition root: buildApp wires storage, clock and configuration into a Fastify instance
 * that never listens by itself (tests drive it with inject(); main.ts listens). Nothing here is
 * module-level state, so a test can build as many apps as it likes.
 */
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { AccessLog } from './http/access-log.ts';
import { connectRedis, redisReady } from './http/redis.ts';
import { systemClock } from './clock.ts';
import type { Clock } from './clock.ts';
import type { Config, TrustProxy } from './config.ts';
import { DEFAULT_DEADLINES, deadlineOptions } from './http/deadlines.ts';
import type { Deadlines } from './http/deadlines.ts';
import { registerDrain } from './http/drain.ts';
import { frameworkErrors } from './http/framework-errors.ts';
import { registerHealth } from './http/health.ts';
import { createMetrics, registerMetrics, registerPressure } from './http/metrics.ts';
import { consolePages } from './http/console-pages.ts';
import { oauthPages } from './http/oauth-pages.ts';
import { oauthPlugin } from './http/oauth-plugin.ts';
import { registerDocs } from './http/docs-page.ts';
import { apiDocs } from './http/api-docs.ts';
import { LastUsed } from './http/last-used.ts';
import { RequestJournal } from './http/request-journal.ts';
import { requestId, serializeRequest } from './http/request-log.ts';
import { scimPlugin } from './http/scim-plugin.ts';
import { adminPlugin } from './http/admin-plugin.ts';
import { collectRoutes } from './http/openapi/generator.ts';
import { openapiPlugin } from './http/openapi/route.ts';
import { TeamTypesCache } from './scim/team-schemas.ts';
import { ExtensionIndexBuilder } from './scim/index-builder.ts';
import { DiscoveryCache } from './scim/discovery-cache.ts';
import type { IndexBuilderSettings } from './scim/index-builder.ts';
import type { OAuthContext } from './oauth/context.ts';
import { BearerCache, DEFAULT_BEARER_CACHE } from './oauth/bearer-cache.ts';
import type { BearerCacheSettings } from './oauth/bearer-cache.ts';
import { ClientCache } from './oauth/client-cache.ts';
import { DEFAULT_LIMITS, Limits } from './oauth/limits.ts';
import type { LimitSettings } from './oauth/limits.ts';
import { PasswordHasher, SCRYPT } from './oauth/passwords.ts';
import type { HashingSettings, PasswordKdf } from './oauth/passwords.ts';
import { ScanGate } from './scim/scan-gate.ts';
import type { Storage } from './storage/connect.ts';
import { deriveKey, masterKey } from './keys/master.ts';
import { KeyStore } from './keys/store.ts';
import { DEFAULT_EVENT_RETENTION_DAYS } from './config.ts';
import { startPruner } from './events/runtime.ts';
import { SetSigner } from './events/set.ts';
import { DEFAULT_DELIVERY, DeliveryWorker } from './events/delivery.ts';
import type { DeliverySettings } from './events/delivery.ts';
import { eventsPlugin } from './http/events-plugin.ts';
import { ssfPlugin } from './http/ssf-plugin.ts';
import { accessPlugin } from './http/access-plugin.ts';
import { WebhookSigner } from './events/webhook.ts';
import { WEBHOOK_SECRETS } from './events/webhook-secrets.ts';
import { STREAM_SECRETS } from './events/stream-config.ts';
import { ssfPollPlugin } from './http/ssf-poll.ts';
import { ReceiverPolicy, resolveSystem } from './events/receivers.ts';
import type { Resolve } from './events/receivers.ts';
import { KeyFetcher } from './oauth/key-fetch.ts';
import type { KeyFetchSettings } from './oauth/key-fetch.ts';
import type { RemoteKeys } from './oauth/remote-keys.ts';
import { AsyncQueue } from './async/queue.ts';
import { AsyncWorker, DEFAULT_ASYNC } from './async/worker.ts';
import type { AsyncSettings } from './async/worker.ts';
import { leaseOf } from './async/worker.ts';

export type AppConfig = Pick<Config, 'publicBaseUrl' | 'logLevel' | 'accessTokenTtl' | 'refreshTokenTtl' | 'passwordGrant' | 'redisUrl'> &
  Partial<Pick<Config, 'trustProxy' | 'secretKey' | 'eventRetentionDays' | 'eventLeaseSeconds' | 'bearerCacheSeconds' | 'allowReceivers' | 'asyncLeaseSeconds'>>;

export interface AppDeps {
  readonly config: AppConfig;
  readonly storage: Storage;
  readonly clock?: Clock;
  /** Brute-force limits; DEFAULT_LIMITS for every one a test does not set. */
  readonly limits?: Partial<LimitSettings>;
  /** Prefix of the limit counters' keys in Redis (instances of one deployment share it). */
  readonly limitKeyPrefix?: string;
  /** Where JSON log lines go (stdout by default); tests read them. */
  readonly logStream?: { write(line: string): void };
  /** Request and connection deadlines; DEFAULT_DEADLINES unless a test needs shorter ones. */
  readonly deadlines?: Partial<Deadlines>;
  /** Push delivery of events (events/delivery.ts): on by default; false turns it off (tests that count queries). */
  readonly delivery?: Partial<DeliverySettings> | false;
  /** How many scrypt derivations run and wait at once, per class; DEFAULT_HASHING for every one a test does not set. */
  readonly hashing?: Partial<HashingSettings>;
  /** The derivation behind the hasher: scrypt unless a test needs to hold derivations and release them. */
  readonly passwordKdf?: PasswordKdf;
  /** The bearer cache's bounds; DEFAULT_BEARER_CACHE with BEARER_CACHE_SECONDS, unless a test sets them. */
  readonly bearerCache?: Partial<BearerCacheSettings>;
  /** The background builder of extension attribute indexes (scim/index-builder.ts). */
  readonly indexBuilder?: Partial<IndexBuilderSettings>;
  /** The rendered discovery documents' cache (scim/discovery-cache.ts); a new one unless a test brings its own. */
  readonly discovery?: DiscoveryCache;
  /** How receivers' host names resolve (the system's resolver unless a test answers instead). */
  readonly resolve?: Resolve;
  /** This instance's scans in progress per team (scim/scan-gate.ts); a new one unless a test holds places in it. */
  readonly scans?: ScanGate;
  /** This instance's Bulk requests in progress per team (scim/bulk/gate.ts); a new one unless a test holds places in it. */
  readonly bulks?: ScanGate;
  /** Key sets on the web for client assertions (oauth/remote-keys.ts); the key fetcher unless a test brings its own. */
  readonly remoteKeys?: RemoteKeys;
  /** The key fetcher's bounds (timeout, size, cache); KEY_FETCH_DEFAULTS for every one a test does not set. */
  readonly keyFetch?: Partial<Omit<KeyFetchSettings, 'policy' | 'clock'>>;
  /** The worker of asynchronous requests (async/worker.ts): on by default; false turns it off, and every request is then answered synchronously. */
  readonly asyncRequests?: Partial<AsyncSettings> | false;
  /** The feed rows one delta query page examines at most (scim/delta.ts DELTA_WALK_ROWS unless a test sets fewer). */
  readonly deltaWalkRows?: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Builds the indexes schema changes want, after they commit; `idle()` waits for it (tests). */
    readonly extensionIndexes: ExtensionIndexBuilder;
  }
}

export const BODY_LIMIT = 1024 * 1024;

/**
 * Fastify's trustProxy for a TRUST_PROXY value: a hop count trusts the socket peer and the
 * n - 1 entries nearest it (what Fastify does with a number, which its types do not admit).
 */
function proxyTrust(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return trust === false ? false : [...trust];
}

/** The longest path parameter the router takes: a catalog value of 256 UTF-16 units, percent-encoded (256 x 3 bytes x 3). */
export const MAX_PATH_PARAM = 256 * 3 * 3;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const { config, storage } = deps;
  const accessLog = new AccessLog();
  const app = Fastify({
    logger:
      config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
            // Credentials in a query string never reach the log (request-log.ts).
            serializers: { req: serializeRequest },
            ...(deps.logStream ? { stream: deps.logStream } : {}),
          },
    // One access log line per request (access-log.ts) instead of Fastify's two.
    logController: accessLog,
    bodyLimit: BODY_LIMIT,
    ...deadlineOptions({ ...DEFAULT_DEADLINES, ...deps.deadlines }),
    // X-Request-Id is read by requestId(), which keeps only short ids of a safe alphabet.
    requestIdHeader: false,
    genReqId: requestId,
    // Ids and URNs are case-sensitive; paths such as /Users must match as written. A path
    // parameter may be a catalog value (/Roles/{id}, /v2/access/roles/{value}/users): up to 256
    // UTF-16 units, 3 UTF-8 bytes each at most, each byte percent-encoded as 3 characters. Every
    // route validates its parameters itself (ids by their shape), so the bound only caps the router.
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAM },
    frameworkErrors,
    // Bodies are validated as sent (openapi/body-validation.ts): no type coercion, no defaults
    // added; `components` is the OpenAPI document's container of the schemas bodies refer to.
    ajv: { customOptions: { coerceTypes: false, useDefaults: false, keywords: ['components'] } },
    // Behind a TLS-terminating proxy the client address (rate limits per address) comes from
    // X-Forwarded-For, read from the right: a hop count or the proxies' addresses (config.ts).
    trustProxy: proxyTrust(config.trustProxy ?? false),
  });

  const redis = config.redisUrl ? connectRedis(config.redisUrl, app.log) : undefined;
  // quit() waits for a reply that an unreachable Redis never sends: then just drop the socket.
  if (redis) app.addHook('onClose', async () => (redis.status === 'ready' ? void (await redis.quit()) : redis.disconnect()));
  // Serve only once the shared counters answer (or 5 s passed): see redisReady.
  if (redis) app.addHook('onReady', () => redisReady(redis, 5000));

  // One hasher for the whole app: SCIM writes and sign-ins share its slots, fairly.
  const passwords = new PasswordHasher(deps.hashing, deps.passwordKdf ?? SCRYPT);
  // One bearer cache for every API surface of this app, and one of the token endpoint's clients,
  // with the same bounds; emptied and unsubscribed on close.
  const cacheSettings = { ...DEFAULT_BEARER_CACHE, ...(config.bearerCacheSeconds !== undefined ? { ttlSeconds: config.bearerCacheSeconds } : {}), ...deps.bearerCache };
  const bearers = new BearerCache(storage, clock, cacheSettings);
  const clients = new ClientCache(storage, clock, cacheSettings);
  app.addHook('onClose', async () => {
    bearers.close();
    clients.close();
  });
  const limits = new Limits({ ...DEFAULT_LIMITS, ...deps.limits }, redis, deps.limitKeyPrefix);
  // Where push receivers may be (ALLOW_RECEIVERS): one policy for creation (API, console) and
  // delivery, and for the key sets client assertions are verified against.
  const receivers = new ReceiverPolicy(config.allowReceivers ?? [], deps.resolve ?? resolveSystem);
  const remoteKeys =
    deps.remoteKeys ??
    new KeyFetcher({
      policy: receivers,
      clock,
      ...deps.keyFetch,
      onFetch: (event) => {
        if (!event.ok) app.log.warn({ source: event.source, reason: event.reason, servedStale: event.servedStale === true }, 'key set fetch failed');
      },
    });
  const oauth: OAuthContext = {
    storage,
    clients,
    clock,
    passwords,
    lifetimes: { accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl },
    limits,
    passwordGrant: config.passwordGrant,
    issuer: config.publicBaseUrl,
    remoteKeys,
  };
  // The master key (SECRET_KEY, or a key file beside an SQLite database) never enters the
  // database; the keys it encrypts there (the cookie-signing key) rotate with `rollcall keys rotate`.
  const master = masterKey({ secretKey: config.secretKey, database: { engine: storage.hooks.name, sqlitePath: storage.sqlitePath } });
  const keys = await KeyStore.open(storage.db, clock, master);
  // The key that signs list cursors, the same on every instance sharing the master key (RFC 9865).
  const cursorSecret = deriveKey(master, 'list cursors').toString('base64url');

  // Every answer names its request id, the key that finds its log lines, and forbids content
  // sniffing (no answer of Rollcall is meant to be read as anything but its declared type).
  // A callback hook: an async one costs every answer a promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
  // Early answers (413, 401 before the body is read) wait for the body, so clients read them.
  registerDrain(app);
  // Every route registered from here on is kept for the OpenAPI document (http/openapi).
  const routes = collectRoutes(app);
  const metrics = createMetrics(storage);
  registerMetrics(app, metrics);
  registerPressure(metrics, { hashing: () => passwords.load, limiterKeys: () => limits.memoryKeys() });
  registerDocs(app, config.publicBaseUrl);
  await app.register(apiDocs, { baseUrl: config.publicBaseUrl });
  registerHealth(app, storage, () => (redis ? (redis.status === 'ready' ? 'redis' : 'degraded') : 'memory'));
  const lastUsed = new LastUsed(storage, clock, app.log);
  const journal = new RequestJournal(storage, clock, app.log);
  app.addHook('onClose', async () => {
    await lastUsed.close();
    await journal.close();
  });
  // On PostgreSQL, wait (briefly) for the LISTEN connection, so tokens are cached from the start;
  // if it is not up by then the cache stays off until it is (fail safe), and the app serves anyway.
  app.addHook('onReady', async () => void (await bearers.ready(2000)));
  // Extension attribute indexes are built here, after the schema change's request answered.
  const indexes = new ExtensionIndexBuilder({ storage, log: app.log, settings: deps.indexBuilder ?? {} });
  app.decorate('extensionIndexes', indexes);
  app.addHook('onReady', async () => indexes.start());
  app.addHook('onClose', async () => indexes.stop());
  // One gate of scans per instance: the API and the console's filter box share each team's places.
  const scans = deps.scans ?? new ScanGate();
  const types = new TeamTypesCache();
  // Asynchronous requests (RFC 9967): accepted by the SCIM plugin, run by this instance's worker.
  const asyncQueue = new AsyncQueue({ storage, clock });
  if (deps.asyncRequests !== false) {
    const worker = new AsyncWorker({
      storage, clock, baseUrl: config.publicBaseUrl, cursorSecret, passwords, types, scans, log: app.log, queue: asyncQueue,
      settings: { ...DEFAULT_ASYNC, ...leaseOf(config.asyncLeaseSeconds), ...deps.asyncRequests }, retentionDays: config.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS,
    });
    app.addHook('onReady', async () => worker.start());
    app.addHook('onClose', async () => worker.stop());
  }
  const scimOptions = { storage, clock, baseUrl: config.publicBaseUrl, cursorSecret, passwords, lastUsed, journal, types, discovery: deps.discovery ?? new DiscoveryCache(), bearers, scans, accessLog, bulks: deps.bulks ?? new ScanGate(), asyncQueue, eventRetentionDays: config.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS, ...(deps.deltaWalkRows !== undefined ? { deltaWalkRows: deps.deltaWalkRows } : {}) };
  await app.register(scimPlugin, { ...scimOptions, prefix: '/v2/scim' });
  await app.register(scimPlugin, { ...scimOptions, prefix: '/scim' });
  await app.register(adminPlugin, { storage, clock, baseUrl: config.publicBaseUrl, bearers, indexes, accessLog, prefix: '/v2/admin' });
  await app.register(oauthPlugin, { context: oauth, metrics });
  await app.register(oauthPages, { context: oauth, keys });
  await app.register(consolePages, { context: oauth, keys, baseUrl: config.publicBaseUrl, cursorSecret, receivers, scans, metrics, accessLog, types });

  // RFC 9967 events: the feed listing, the JWKS that verifies SETs, subscriptions (events-plugin.ts).
  const signer = new SetSigner(keys);
  await app.register(eventsPlugin, { storage, clock, baseUrl: config.publicBaseUrl, signer, bearers, receivers, accessLog, box: keys.box(WEBHOOK_SECRETS) });
  // The SSF 1.0 transmitter (issue 33): its configuration and the stream management API (ssf-plugin.ts).
  await app.register(ssfPlugin, { storage, clock, baseUrl: config.publicBaseUrl, bearers, receivers, accessLog, box: keys.box(STREAM_SECRETS) });
  // SSF streams' poll delivery (RFC 8936, issue 33): /v2/ssf/poll/{stream id}, a bearer token of the stream's team with scope ssf.
  await app.register(ssfPollPlugin, { storage, clock, baseUrl: config.publicBaseUrl, signer, bearers, accessLog, latency: metrics });
  // Effective access (issue 31): what the application reads to decide what a user may do.
  await app.register(accessPlugin, { storage, clock, baseUrl: config.publicBaseUrl, cursorSecret, passwords, bearers, types, accessLog, prefix: '/v2/access' });
  // Push delivery: this instance's worker, stopped (requests in flight aborted, leases released) on close.
  if (deps.delivery !== false) {
    const leaseMs = (config.eventLeaseSeconds ?? DEFAULT_DELIVERY.leaseMs / 1000) * 1000;
    const settings = { ...DEFAULT_DELIVERY, leaseMs, timeoutMs: Math.min(DEFAULT_DELIVERY.timeoutMs, leaseMs / 2), ...deps.delivery };
    const webhooks = new WebhookSigner({ db: storage.db, clock, box: keys.box(WEBHOOK_SECRETS), issuer: config.publicBaseUrl });
    const worker = new DeliveryWorker({ storage, clock, signer, webhooks, issuer: config.publicBaseUrl, log: app.log, settings, receivers, streams: keys.box(STREAM_SECRETS), latency: metrics, failures: metrics });
    app.addHook('onReady', async () => worker.start());
    app.addHook('onClose', async () => worker.stop());
  }
  // The change feed's retention: pruned in the background, stopped on close.
  startPruner(app, { storage, clock, retentionDays: config.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS });

  await app.register(openapiPlugin, { routes, baseUrl: config.publicBaseUrl, version: '0.1.0', storage, bearers, types });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: 'not_found', detail: `No route ${request.method} ${request.url.split('?')[0]}` }),
  );
  return app;
}
