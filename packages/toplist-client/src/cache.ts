/** Storage for conditional requests: the last body and ETag seen per request. */

/** One stored response: its ETag and the raw JSON text it came with. */
export interface CachedResponse {
  etag: string;
  body: string;
}

/**
 * Where the client keeps bodies for `If-None-Match`. Any key/value store fits (memory, Redis, a KV
 * namespace, WordPress transients behind an API); both methods may be sync or async. Keys carry a
 * fingerprint of the token, never the token. A failing store only costs the conditional request.
 */
export interface ResponseCache {
  get(key: string): CachedResponse | undefined | Promise<CachedResponse | undefined>;
  set(key: string, value: CachedResponse): void | Promise<void>;
}

/** An in-process cache that keeps the `maxEntries` most recently used responses. */
export function memoryCache(options: { maxEntries?: number } = {}): ResponseCache {
  const max = options.maxEntries ?? 256;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxEntries must be a positive integer');
  const entries = new Map<string, CachedResponse>();
  return {
    get(key) {
      const hit = entries.get(key);
      if (hit) {
        // Map keeps insertion order: re-inserting marks the entry as most recently used.
        entries.delete(key);
        entries.set(key, hit);
      }
      return hit;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > max) entries.delete(entries.keys().next().value!);
    },
  };
}
