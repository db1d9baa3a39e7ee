/**
 * The SCIM request log an admin reads in the console (DESIGN.md section 9): per
 * authenticated SCIM request, the method, path (credential parameters redacted), status,
 * scimType, latency, time, connection (the OAuth client, or the provisioning token) and the
 * request body with every password, secret and token value replaced and its size bounded (what
 * is secret, read the way the SCIM parsers read names, is log-redaction.ts's to say).
 *
 * Never on the request path: the response hook only pushes a row into memory; a timer writes the
 * rows in one multi-row INSERT per batch, a second later at most. The memory is bounded (rows
 * past MAX_PENDING are dropped and counted), and a write failure is logged and dropped, never a
 * failed request. Every team's log is pruned (console/request-log.ts keeps the retention) at most
 * once a minute per team. One journal per app; no module-level state; no SQL.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { timeOrderedId } from '../ids.ts';
import { pruneTeamRequestLog, RETENTION_DAYS, writeRequestLog } from '../console/request-log.ts';
import type { RequestLogRow } from '../console/request-log.ts';
import type { Storage } from '../storage/connect.ts';
import type { TeamTypes } from '../scim/schema/extensions.ts';
import { neverReturned, redactBody, redactUrlFilter, secretNames } from './log-redaction.ts';
import type { SecretName } from './log-redaction.ts';
import { redactUrl } from './request-log.ts';

/** The stored body (JSON text) is cut at this many characters. */
export const MAX_BODY_CHARS = 4096;
const MAX_PENDING = 5000;
const BATCH_ROWS = 200;
const FLUSH_MS = 1000;
const PRUNE_EVERY_MS = 60_000;

/** The `detail` of an error answer is kept to this many characters. */
export const MAX_DETAIL_CHARS = 300;

/** scimType and detail of an error body (small: error bodies are a few hundred bytes). */
function errorOf(payload: unknown): { scimType: string | null; detail: string | null } {
  if (!Buffer.isBuffer(payload) || payload.length > 8192) return { scimType: null, detail: null };
  try {
    const parsed = JSON.parse(payload.toString('utf8')) as { scimType?: unknown; detail?: unknown };
    return {
      scimType: typeof parsed.scimType === 'string' ? parsed.scimType.slice(0, 40) : null,
      detail: typeof parsed.detail === 'string' ? parsed.detail.slice(0, MAX_DETAIL_CHARS) : null,
    };
  } catch {
    return { scimType: null, detail: null };
  }
}

interface Caller {
  readonly teamId: string;
  readonly clientId: string | null;
  readonly tokenHash: string | null;
  /** The connection whose token or client made the request (oauth/connections.ts). */
  readonly connectionId?: string | null;
  /** The team's resource types: their `returned: never` attributes are redacted. */
  readonly types: TeamTypes;
}

export class RequestJournal {
  readonly #storage: Storage;
  readonly #clock: Clock;
  readonly #log: FastifyBaseLogger;
  readonly #callers = new WeakMap<FastifyRequest, Caller>();
  readonly #errors = new WeakMap<FastifyRequest, { scimType: string | null; detail: string | null }>();
  readonly #prunedAt = new Map<string, number>();
  readonly #secrets = new WeakMap<TeamTypes, SecretName>();
  #pending: RequestLogRow[] = [];
  #dropped = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(storage: Storage, clock: Clock, log: FastifyBaseLogger) {
    this.#storage = storage;
    this.#clock = clock;
    this.#log = log;
  }

  /** How many rows were dropped because the writer fell behind (metrics, tests). */
  get dropped(): number {
    return this.#dropped;
  }

  /** The SCIM plugin names the caller once the bearer is checked: only those requests are logged. */
  authenticated(request: FastifyRequest, caller: Caller): void {
    this.#callers.set(request, caller);
  }

  /** Hooks of the SCIM plugin's scope: note an error's scimType as it is sent, the row once answered. */
  register(app: FastifyInstance): void {
    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode >= 400 && this.#callers.has(request)) {
        this.#errors.set(request, errorOf(payload));
      }
      done(null, payload);
    });
    app.addHook('onResponse', (request, reply, done) => {
      this.#record(request, reply);
      done();
    });
  }

  #record(request: FastifyRequest, reply: FastifyReply): void {
    const caller = this.#callers.get(request);
    if (!caller) return;
    if (this.#pending.length >= MAX_PENDING) {
      this.#dropped++;
      return;
    }
    const now = this.#clock.now();
    const secret = this.#secretsOf(caller.types);
    this.#pending.push({
      id: timeOrderedId(now.getTime()),
      team_id: caller.teamId,
      at: now.toISOString(),
      method: request.method.slice(0, 10),
      path: redactUrlFilter(redactUrl(request.url), secret).slice(0, 1024),
      status: reply.statusCode,
      scim_type: this.#errors.get(request)?.scimType ?? null,
      detail: this.#errors.get(request)?.detail ?? null,
      latency_ms: Math.round(reply.elapsedTime),
      client_id: caller.clientId,
      token_hash: caller.clientId === null ? caller.tokenHash : null,
      request_id: request.id,
      body: request.method === 'GET' ? null : redactBody(request.body, secret, MAX_BODY_CHARS),
      connection_id: caller.connectionId ?? null,
    });
    this.#timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  /** What is secret for a team's types, worked out once per version of its schemas. */
  #secretsOf(types: TeamTypes): SecretName {
    let secret = this.#secrets.get(types);
    if (!secret) {
      secret = secretNames(neverReturned(types));
      this.#secrets.set(types, secret);
    }
    return secret;
  }

  /** Writes what is pending, in batches, then prunes the teams written to (at most once a minute each). */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const rows = this.#pending;
    this.#pending = [];
    if (rows.length === 0) return this.#writing;
    this.#writing = this.#writing
      .then(async () => {
        for (let i = 0; i < rows.length; i += BATCH_ROWS) {
          if (i > 0) await nextTurn();
          await writeRequestLog(this.#storage, rows.slice(i, i + BATCH_ROWS));
        }
        const now = this.#clock.now().getTime();
        const cutoff = new Date(now - RETENTION_DAYS * 86_400_000).toISOString();
        for (const teamId of new Set(rows.map((r) => r.team_id))) {
          const last = this.#prunedAt.get(teamId);
          if (last !== undefined && now - last < PRUNE_EVERY_MS) continue;
          this.#prunedAt.set(teamId, now);
          await pruneTeamRequestLog(this.#storage, teamId, cutoff);
        }
      })
      .catch((error: unknown) => this.#log.warn({ err: error, rows: rows.length }, 'could not write the SCIM request log'));
    return this.#writing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
