/**
 * Every setting Rollcall reads: name, type, default and validation, in one table. The only
 * reader of process.env. Flags passed by the CLI override the environment. A bad value stops
 * start-up with one clear line naming the setting.
 */
import { isIP } from 'node:net';

export interface Config {
  readonly databaseUrl: string;
  readonly host: string;
  readonly port: number;
  /** Scheme, host and optional path prefix that meta.location and Location headers start with. */
  readonly publicBaseUrl: string;
  readonly accessTokenTtl: number;
  readonly refreshTokenTtl: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** The resource owner password grant (on by default: the contract offers it; RFC 9700 advises against it). */
  readonly passwordGrant: boolean;
  /** Redis for state shared by instances (rate limits); in-process memory when unset. */
  readonly redisUrl: string | undefined;
  /**
   * Which X-Forwarded-For entries name the client (docs/SECURITY.md 13.6): false (ignore the
   * header), a number of proxy hops in front of Rollcall (the client is that many entries from
   * the right), or the proxies' addresses and CIDR ranges (entries are walked from the right
   * while they are proxies). Never "believe the left-most entry": the client writes that one.
   */
  readonly trustProxy: TrustProxy;
  /**
   * The instance secret (SECRET_KEY) that the master key is derived from (keys/master.ts); the
   * same on every instance. Required with PostgreSQL; an SQLite file keeps a key file otherwise.
   */
  readonly secretKey: string | undefined;
  /** How long the change feed keeps events (EVENT_RETENTION_DAYS, default 30); older ones are pruned. */
  readonly eventRetentionDays: number;
  /**
   * How long an instance's claim on a subscription's delivery lasts without renewal
   * (EVENT_LEASE_SECONDS, default 30): a killed instance's subscriptions are taken over after
   * at most this long. A receiver gets min(10 s, half of it) to answer, so a claim never
   * lapses while its request is in flight.
   */
  readonly eventLeaseSeconds: number;
  /**
   * How long an instance's claim on an asynchronous request lasts without renewal
   * (ASYNC_LEASE_SECONDS, default 30, renewed every third of it while the request runs): a
   * killed instance's requests are taken over after at most this long.
   */
  readonly asyncLeaseSeconds?: number;
  /**
   * How long a verified access token is served from memory (BEARER_CACHE_SECONDS, default 30,
   * 0 turns the cache off). Revocations reach it at once (docs/SECURITY.md); this only bounds it.
   */
  readonly bearerCacheSeconds: number;
  /**
   * Receivers an operator allows on addresses push delivery otherwise refuses (ALLOW_RECEIVERS,
   * default none; events/receivers.ts): loopback, link-local, private, unique-local and
   * unspecified ones, for tests and receivers on the operator's own network.
   */
  readonly allowReceivers: readonly AllowedReceiver[];
}

/**
 * One ALLOW_RECEIVERS entry: an address or CIDR range (`10.1.2.3`, `10.0.0.0/8`, `fd00::/8`), or
 * a host name (`hooks.internal`: whatever it resolves to), each optionally for one port only
 * (`127.0.0.1:8443`, `[::1]:8443`, `hooks.internal:8443`).
 */
export type AllowedReceiver =
  | { readonly kind: 'network'; readonly address: string; readonly prefix: number; readonly family: 4 | 6; readonly port?: number }
  | { readonly kind: 'name'; readonly name: string; readonly port?: number };

export type TrustProxy = false | number | readonly string[];

export class ConfigError extends Error {
  constructor(setting: string, problem: string) {
    super(`${setting}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_EVENT_RETENTION_DAYS = 30;

export const DEFAULT_DATABASE_URL = 'sqlite:./data/rollcall.db';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(setting: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(setting, `expected a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(setting, `expected ${min}..${max}, got ${n}`);
  return n;
}

function baseUrl(setting: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(setting, `expected an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(setting, `expected an http(s) URL, got "${raw}"`);
  }
  if (url.search || url.hash) throw new ConfigError(setting, 'must not carry a query or fragment');
  return raw.replace(/\/+$/, '');
}

/** The names proxy-addr (Fastify's trustProxy) accepts for address ranges, besides addresses and CIDRs. */
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** One proxy address or range: an IPv4/IPv6 address, optionally /prefix, or a range name. */
function proxyEntry(entry: string): boolean {
  if (PROXY_RANGES.has(entry)) return true;
  const [address = '', prefix, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY: off, on (one hop: exactly one proxy appends to X-Forwarded-For), a hop count, or
 * a comma-separated list of proxy addresses and CIDR ranges.
 */
function trustProxy(raw: string): TrustProxy {
  const value = raw.trim().toLowerCase();
  if (value === 'off' || value === '0') return false;
  if (value === 'on') return 1;
  if (/^\d+$/.test(value)) return integer('TRUST_PROXY', value, 0, 10) || false;
  const entries = value.split(',').map((e) => e.trim());
  const bad = entries.find((e) => !proxyEntry(e));
  if (bad !== undefined) {
    throw new ConfigError('TRUST_PROXY', `expected off, on (one proxy), a hop count 1..10, or proxy addresses/CIDRs separated by commas; "${bad}" is none of these`);
  }
  return entries;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** One ALLOW_RECEIVERS entry, or undefined when it is none of the forms AllowedReceiver names. */
function allowedReceiver(entry: string): AllowedReceiver | undefined {
  let rest = entry.toLowerCase();
  let port: number | undefined;
  // A port: after a bracketed IPv6 address, or after the only colon (an IPv4 address or a name).
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(rest);
  if (bracketed) {
    rest = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (rest.split(':').length === 2) {
    const [head = '', tail = ''] = rest.split(':');
    if (!/^\d{1,5}$/.test(tail)) return undefined;
    rest = head;
    port = Number(tail);
  }
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const withPort = port === undefined ? {} : { port };
  const [address = '', prefix, extra] = rest.split('/');
  const family = isIP(address);
  if (family === 4 || family === 6) {
    if (extra !== undefined) return undefined;
    const bits = family === 4 ? 32 : 128;
    if (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits)) return undefined;
    // A range with a port would read ambiguously: a port only with one address.
    if (prefix !== undefined && port !== undefined) return undefined;
    return { kind: 'network', address, prefix: prefix === undefined ? bits : Number(prefix), family, ...withPort };
  }
  const name = rest.replace(/\.$/, '');
  return prefix === undefined && HOST_NAME.test(name) && !/^[\d.]+$/.test(name) ? { kind: 'name', name, ...withPort } : undefined;
}

/** ALLOW_RECEIVERS: receivers allowed on addresses otherwise refused, separated by commas. */
function allowReceivers(raw: string): AllowedReceiver[] {
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  return entries.map((entry) => {
    const parsed = allowedReceiver(entry);
    if (!parsed) {
      throw new ConfigError('ALLOW_RECEIVERS', `expected addresses, CIDR ranges or host names, each optionally with a port (127.0.0.1:8443, [::1]:8443, 10.0.0.0/8, hooks.internal), separated by commas; "${entry}" is none of these`);
    }
    return parsed;
  });
}

export type ConfigOverrides = Partial<Record<'databaseUrl' | 'host' | 'port' | 'publicBaseUrl', string>>;

/** Builds the configuration from `env` (process.env by default) and CLI flags. */
export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const pick = (flag: string | undefined, name: string): string | undefined =>
    flag ?? (env[name] !== undefined && env[name] !== '' ? env[name] : undefined);

  const databaseUrl = pick(overrides.databaseUrl, 'DATABASE_URL') ?? DEFAULT_DATABASE_URL;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', `expected sqlite:<path> or postgres://..., got "${databaseUrl}"`);
  }
  const host = pick(overrides.host, 'HOST') ?? '127.0.0.1';
  const rawPort = pick(overrides.port, 'PORT');
  const port = rawPort === undefined ? 8080 : integer('PORT', rawPort, 0, 65535);
  const rawBase = pick(overrides.publicBaseUrl, 'PUBLIC_BASE_URL');
  const publicBaseUrl = rawBase === undefined
    ? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    : baseUrl('PUBLIC_BASE_URL', rawBase);
  const rawAccess = pick(undefined, 'ACCESS_TOKEN_TTL');
  const accessTokenTtl = rawAccess === undefined ? 3600 : integer('ACCESS_TOKEN_TTL', rawAccess, 60, 86_400);
  const rawRefresh = pick(undefined, 'REFRESH_TOKEN_TTL');
  const refreshTokenTtl = rawRefresh === undefined ? 30 * 86_400 : integer('REFRESH_TOKEN_TTL', rawRefresh, 60, 365 * 86_400);
  const rawLevel = pick(undefined, 'LOG_LEVEL') ?? 'info';
  const logLevel = LOG_LEVELS.find((l) => l === rawLevel);
  if (!logLevel) throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got "${rawLevel}"`);
  const rawGrant = (pick(undefined, 'PASSWORD_GRANT') ?? 'on').toLowerCase();
  if (rawGrant !== 'on' && rawGrant !== 'off') throw new ConfigError('PASSWORD_GRANT', `expected on or off, got "${rawGrant}"`);
  const redisUrl = pick(undefined, 'REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL', `expected redis://..., got "${redisUrl}"`);
  const proxy = trustProxy(pick(undefined, 'TRUST_PROXY') ?? 'off');
  const secretKey = pick(undefined, 'SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < 32) throw new ConfigError('SECRET_KEY', `expected at least 32 characters (e.g. from openssl rand -base64 32), got ${secretKey.length}`);
  const rawRetention = pick(undefined, 'EVENT_RETENTION_DAYS');
  const eventRetentionDays = rawRetention === undefined ? DEFAULT_EVENT_RETENTION_DAYS : integer('EVENT_RETENTION_DAYS', rawRetention, 1, 3650);
  const rawLease = pick(undefined, 'EVENT_LEASE_SECONDS');
  const eventLeaseSeconds = rawLease === undefined ? 30 : integer('EVENT_LEASE_SECONDS', rawLease, 2, 600);
  const rawAsyncLease = pick(undefined, 'ASYNC_LEASE_SECONDS');
  const asyncLeaseSeconds = rawAsyncLease === undefined ? 30 : integer('ASYNC_LEASE_SECONDS', rawAsyncLease, 2, 600);
  const rawBearerCache = pick(undefined, 'BEARER_CACHE_SECONDS');
  const bearerCacheSeconds = rawBearerCache === undefined ? 30 : integer('BEARER_CACHE_SECONDS', rawBearerCache, 0, 300);
  const allowed = allowReceivers(pick(undefined, 'ALLOW_RECEIVERS') ?? '');
  return { databaseUrl, host, port, publicBaseUrl, accessTokenTtl, refreshTokenTtl, logLevel, passwordGrant: rawGrant === 'on', redisUrl, trustProxy: proxy, secretKey, eventRetentionDays, eventLeaseSeconds, asyncLeaseSeconds, bearerCacheSeconds, allowReceivers: allowed };
}

/**
 * The configuration of a serving process (`rollcall serve`, `npm start`). On PostgreSQL several
 * instances share one database, and each signs its events with PUBLIC_BASE_URL as the issuer
 * (`iss`): a default made from each instance's own HOST and PORT would give every instance a
 * different issuer, and receivers would reject the others' SETs. So PostgreSQL needs it set, the
 * same on every instance, as it needs SECRET_KEY.
 */
export function loadServeConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const config = loadConfig(overrides, env);
  const rawBase = overrides.publicBaseUrl ?? (env.PUBLIC_BASE_URL !== undefined && env.PUBLIC_BASE_URL !== '' ? env.PUBLIC_BASE_URL : undefined);
  if (rawBase === undefined && !config.databaseUrl.startsWith('sqlite:')) {
    throw new ConfigError('PUBLIC_BASE_URL', 'required with PostgreSQL (the same value on every instance: the URL clients reach Rollcall at, which is also the issuer of its signed events), e.g. --public-base-url https://rollcall.example');
  }
  return config;
}

/** `rollcall user set-password` reads the new password here, so it stays out of the process list. */
export function passwordFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.ROLLCALL_PASSWORD;
  return value !== undefined && value !== '' ? value : undefined;
}
