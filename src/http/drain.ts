/**
 * Early answers to requests whose body has not been read (a 413 for a body over the limit, a 401
 * before the body is parsed, any error raised while parsing): the answer waits until the rest of
 * the body has been read and discarded, up to DRAIN_LIMIT bytes and DRAIN_TIMEOUT_MS, and only
 * then goes out (with `Connection: close` when the body was abandoned). Closing the socket while
 * the client is still sending makes the kernel answer its data with a reset: a client that writes
 * its whole body before reading (curl, most SDKs, the raw-socket test) would see a broken pipe or
 * a reset instead of the 413 and its error body. It never buffers what it reads, and a body past
 * the bound, or one that stalls, still ends with the connection closed.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** What an early answer reads and discards at most before it goes out (2x the 1 MiB body limit, with room). */
export const DRAIN_LIMIT = 8 * 1024 * 1024;
/** How long an early answer waits for the rest of a body. */
export const DRAIN_TIMEOUT_MS = 10_000;

/** Resolves once `request`'s body has been read to its end, or the bound or the time is spent (false). */
function drain(request: FastifyRequest): Promise<boolean> {
  const raw = request.raw;
  return new Promise((resolve) => {
    let read = 0;
    const finish = (complete: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('error', onError);
      raw.off('close', onEnd);
      if (!complete) raw.pause();
      resolve(complete);
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_LIMIT) finish(false);
    };
    const onEnd = () => finish(raw.complete);
    const onError = () => finish(false);
    const timer = setTimeout(() => finish(false), DRAIN_TIMEOUT_MS);
    timer.unref();
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('error', onError);
    raw.once('close', onEnd);
    raw.resume();
  });
}

export function registerDrain(app: FastifyInstance): void {
  // A callback hook, and a test of one field for every other answer: nothing to wait for.
  app.addHook('onSend', (request, reply, payload, done) => {
    // `complete` is false only on a real socket whose body is still arriving (inject() leaves it unset).
    if (request.raw.complete !== false || request.raw.destroyed) {
      done(null, payload);
      return;
    }
    void drain(request).then((complete) => {
      if (!complete) reply.header('connection', 'close');
      done(null, payload);
    });
  });
}
