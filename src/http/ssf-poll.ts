/**
 * Poll delivery of SSF streams (issue 33, DESIGN.md section 14; SSF 1.0 section 6.1.2, RFC
 * 8936): `POST /v2/ssf/poll/{stream id}`, the `endpoint_url` of a stream created with the poll
 * method. The caller is the stream's receiver, authorised by a bearer token of the stream's team
 * with the `ssf` scope (the team's token, not a per-subscription `rce_` token as
 * `/v2/events/poll`). Checks in order, before the body is read: the token (401, or 403 without
 * the scope), the stream (404 when the token's team has no SSF stream of that id, so another
 * team's stream is indistinguishable from none; 400 when it is a push stream, which has no poll
 * endpoint). Then events/poll.ts `poll()` answers, with RFC 8936's bodies, also for errors
 * (`err`, `description`; a 401 or 403 keeps its WWW-Authenticate challenge, RFC 6750 section 3).
 * It parses and authenticates; the rules live in src/events.
 */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { parsePollRequest, poll, PollError } from '../events/poll.ts';
import type { SetSigner } from '../events/set.ts';
import type { SignalLatency } from '../events/ssf/latency.ts';
import type { BearerCache } from '../oauth/bearer-cache.ts';
import { scimErrorOf } from '../scim/errors.ts';
import type { Storage } from '../storage/connect.ts';
import { subscriptionById } from '../storage/repos/subscriptions.ts';
import type { SubscriptionRow } from '../storage/repos/subscriptions.ts';
import type { AccessLog } from './access-log.ts';
import { requireBearer, untilClientGone } from './events-plugin.ts';
import { addJsonBodyParser } from './json-body.ts';
import { documented } from './openapi/route-doc.ts';
import { ssfPollDocs } from './openapi/routes-other.ts';
import { addComponentSchemas } from './openapi/body-validation.ts';

export interface SsfPollOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  readonly signer: SetSigner;
  readonly bearers: BearerCache;
  readonly accessLog?: AccessLog;
  /** Told each acknowledged signal's commit-to-acknowledgement time (http/metrics.ts). */
  readonly latency?: SignalLatency;
}

/** An RFC 8936 error that carries headers too (the bearer challenge of a 401 or 403). */
class PollAuthError extends PollError {
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, err: string, description: string, headers: Readonly<Record<string, string>>) {
    super(status, err, description);
    this.headers = headers;
  }
}

const invalid = (message: string) => new PollError(400, 'invalid_request', message);

/** The stream the URL names, for the bearer's team: a poll SSF stream, or the RFC 8936 error. */
async function pollStream(options: SsfPollOptions, request: FastifyRequest): Promise<SubscriptionRow> {
  let teamId: string;
  try {
    teamId = (await requireBearer(options, request, 'ssf')).team.id;
  } catch (error) {
    const known = scimErrorOf(error);
    if (known === undefined || (known.status !== 401 && known.status !== 403)) throw error;
    // RFC 8935 section 2.4's codes, which RFC 8936 section 2.4 reuses.
    throw new PollAuthError(known.status, known.status === 401 ? 'authentication_failed' : 'access_denied', known.message, known.headers);
  }
  const { streamId } = request.params as { streamId: string };
  const stream = await subscriptionById(options.storage.db, teamId, streamId);
  if (stream === undefined || stream.format !== 'ssf') throw new PollError(404, 'invalid_request', `the team has no SSF stream ${streamId}`);
  if (stream.method !== 'poll') throw invalid(`stream ${streamId} delivers by push (urn:ietf:rfc:8935): it has no poll endpoint`);
  return stream;
}

export async function ssfPollPlugin(app: FastifyInstance, options: SsfPollOptions): Promise<void> {
  addComponentSchemas(app);
  // Text no database stores is refused too (setErrs descriptions are logged).
  addJsonBodyParser(app, (why, message) => (why === 'syntax' ? undefined : (invalid(message) as unknown as Error)));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if ((error as unknown) instanceof PollError) {
      const e = error as unknown as PollError;
      if (e instanceof PollAuthError) reply.headers(e.headers);
      return reply.code(e.status).header('content-type', 'application/json').send(e.toBody());
    }
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) return reply.code(status).header('content-type', 'application/json').send({ err: 'invalid_request', description: error.message });
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).header('content-type', 'application/json').send({ err: 'server_error', description: 'Internal server error' });
  });

  // A long poll answers at once when the server begins to close, so shutdown never waits on it.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  const pollDeps = { storage: options.storage, clock: options.clock, signer: options.signer, issuer: options.baseUrl, ...(options.latency ? { latency: options.latency } : {}) };
  const streams = new WeakMap<FastifyRequest, SubscriptionRow>();
  const route = documented(ssfPollDocs.poll, (message) => invalid(message));

  app.post('/v2/ssf/poll/:streamId', {
    ...route,
    // Who may poll, and which stream, is settled before the body is validated (401 before any 400).
    preValidation: async (request: FastifyRequest) => {
      streams.set(request, await pollStream(options, request));
    },
  }, async (request, reply) => {
    const stream = streams.get(request) ?? (await pollStream(options, request));
    const body = parsePollRequest(request.body);
    const answer = await untilClientGone(request, closing.signal, (stop) => poll(pollDeps, stream, body, stop));
    return reply.code(200).header('content-type', 'application/json').send(answer);
  });
}
