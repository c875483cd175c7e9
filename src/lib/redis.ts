import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

export type { Redis };

/** ioredis, loaded only when a Redis URL is configured (see loadPg in db/index.ts). */
const loadIoredis = () => createRequire(import.meta.url)('ioredis') as typeof import('ioredis');

/**
 * A client of the fleet's Redis, connecting in the background. Commands fail fast while Redis is
 * down (no offline queue, one attempt), so an outage — even at start — degrades the features that
 * use it (they fail open) instead of hanging requests or refusing to start; it keeps reconnecting.
 */
export function openRedis(url: string, onError: (err: Error) => void): Redis {
  const redis = new (loadIoredis().Redis)(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  // Errors repeat on every reconnect attempt; report a failure once until the link is back.
  let reported = false;
  redis.on('error', (err: Error) => {
    if (!reported) onError(err);
    reported = true;
  });
  redis.on('ready', () => {
    reported = false;
  });
  redis.connect().catch(() => {});
  return redis;
}
