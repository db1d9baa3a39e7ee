/**
 * The Redis connection behind the shared rate limits (REDIS_URL). Unreachable Redis is not an
 * outage: the limiters fall back to memory (oauth/limits.ts insuranceLimiter) and /readyz says
 * "degraded". So the log gets one warning line when Redis goes away and one when it is back,
 * never ioredis's "Unhandled error event" stack per attempt, and reconnection is retried
 * quietly with a capped backoff.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

export function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    // Up to 5 s between attempts, forever: Redis may come back at any time.
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log.warn(`Redis at ${redactUrl(url)} is unreachable (${error.message}); rate limits are counted per instance until it is back (retrying quietly)`);
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info('Redis is reachable again; rate limits are shared again');
  });
  return redis;
}

/**
 * Resolves once `redis` is ready, or after `ms`, or at once if the connection was closed for good
 * ('end'). An app waits for this before it serves (app.ts onReady), so that an instance starting
 * next to others counts sign-in failures with them from its first request rather than in its own
 * memory until the connection is up. Errors do not end the wait: a Redis that starts alongside the
 * app, or restarts, refuses the first attempts and answers a retry later. An unreachable Redis
 * holds the start for `ms`, then the limits fall back to memory as they would at any other time.
 */
export function redisReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready' || redis.status === 'end') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('end', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
    redis.once('end', done);
  });
}

/** The URL without its password, for the log. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'REDIS_URL';
  }
}
