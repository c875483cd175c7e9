/**
 * One GET against the API, done carefully: a per-attempt timeout that also covers reading the body,
 * a response size cap, conditional requests from a cache, bounded retries of 5xx, 429 and network
 * failures (honouring `Retry-After`), no redirects, and errors that never carry the token.
 */
import type { ResponseCache } from './cache.ts';
import { PodiumApiError, PodiumTransportError } from './errors.ts';

/** Passed to `onRetry` before each wait. */
export interface RetryInfo {
  /** The retry about to be made: 1 for the first retry. */
  attempt: number;
  /** How long the client waits first: the server's `Retry-After` when it sent one, else backoff. */
  delayMs: number;
  /** The HTTP status that caused the retry, absent for network errors and timeouts. */
  status?: number;
  code: string;
  path: string;
}

export interface TransportOptions {
  root: string;
  token: string;
  fetch: (input: string, init: RequestInit) => Promise<Response>;
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  maxRetryAfterMs: number;
  maxResponseBytes: number;
  cache: ResponseCache | undefined;
  onRetry: ((info: RetryInfo) => void) | undefined;
}

const ERROR_BODY_BYTES = 64 * 1024;
const MAX_BACKOFF_MS = 30_000;
const API_CODE = /^[a-z][a-z0-9_]{0,63}$/;

type Attempt =
  | { kind: 'response'; status: number; headers: Headers; text: string }
  | { kind: 'failed'; error: PodiumTransportError; retryable: boolean };

/** Sleeps, waking early (with the abort reason) when the caller's signal fires. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `Retry-After` as milliseconds from now: delta-seconds or an HTTP date; undefined when absent or invalid. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^[0-9]{1,9}$/.test(v)) return Number(v) * 1000;
  // HTTP-date (IMF-fixdate, RFC 9110 §5.6.7); Date.parse alone would accept almost anything.
  if (!/^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/.test(v))
    return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

async function readCapped(res: Response, cap: number): Promise<string> {
  const declared = res.headers.get('content-length');
  if (declared !== null && /^[0-9]+$/.test(declared) && Number(declared) > cap) {
    await res.body?.cancel();
    throw new PodiumTransportError('response_too_large', `response larger than ${cap} bytes`);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel();
      throw new PodiumTransportError('response_too_large', `response larger than ${cap} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new PodiumTransportError('invalid_response', 'response body is not valid UTF-8');
  }
}

export class Transport {
  private fingerprint: Promise<string> | undefined;

  constructor(private readonly o: TransportOptions) {}

  /**
   * GET `path` (relative to the API root) and parse the body of a 200, or of the cached copy on 304.
   * `parse` throws on a malformed body; only bodies it accepts are cached.
   */
  async get<T>(path: string, parse: (text: string) => T, signal: AbortSignal | undefined): Promise<T> {
    const key = this.o.cache ? `${await this.tokenFingerprint()} ${path}` : undefined;
    const cached = key ? await this.cacheGet(key) : undefined;
    for (let attempt = 0; ; attempt++) {
      const result = await this.attempt(path, cached?.etag, signal);
      let retryable: boolean;
      let error: PodiumApiError | PodiumTransportError;
      let status: number | undefined;
      let retryAfterMs: number | undefined;
      if (result.kind === 'failed') {
        ({ error, retryable } = result);
      } else {
        status = result.status;
        if (status === 200) {
          const parsed = parse(result.text);
          const etag = result.headers.get('etag');
          if (key && etag) await this.cacheSet(key, { etag, body: result.text });
          return parsed;
        }
        if (status === 304) {
          if (cached) return parse(cached.body);
          throw new PodiumTransportError(
            'invalid_response',
            `GET ${path} answered 304 to an unconditional request`,
          );
        }
        if (status === 0 || (status >= 300 && status < 400)) {
          // fetch runs with redirect: 'manual', so the token is never replayed to another address.
          throw new PodiumTransportError(
            'unexpected_redirect',
            `GET ${path} answered a redirect (${status})`,
          );
        }
        if (status < 300) {
          throw new PodiumTransportError(
            'invalid_response',
            `GET ${path} answered unexpected status ${status}`,
          );
        }
        retryAfterMs = parseRetryAfter(result.headers.get('retry-after'));
        error = this.apiError(status, path, result.text, retryAfterMs);
        retryable = status === 429 || status >= 500;
      }
      if (!retryable || attempt >= this.o.retries) throw error;
      if (retryAfterMs !== undefined && retryAfterMs > this.o.maxRetryAfterMs) throw error;
      const delayMs = retryAfterMs ?? this.backoff(attempt);
      this.o.onRetry?.({
        attempt: attempt + 1,
        delayMs,
        ...(status === undefined ? {} : { status }),
        code: error.code,
        path,
      });
      await sleep(delayMs, signal);
    }
  }

  /** Exponential backoff with full jitter, so many clients that failed together do not return together. */
  private backoff(attempt: number): number {
    const ceiling = Math.min(MAX_BACKOFF_MS, this.o.retryBaseMs * 2 ** attempt);
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  private async attempt(
    path: string,
    etag: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    if (signal?.aborted) throw signal.reason;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.o.timeoutMs);
    const forward = () => controller.abort();
    signal?.addEventListener('abort', forward, { once: true });
    try {
      const headers: Record<string, string> = {
        accept: 'application/json',
        authorization: `Bearer ${this.o.token}`,
      };
      if (etag) headers['if-none-match'] = etag;
      const res = await this.o.fetch(this.o.root + path, {
        method: 'GET',
        headers,
        redirect: 'manual',
        signal: controller.signal,
      });
      const cap = res.status >= 400 ? ERROR_BODY_BYTES : this.o.maxResponseBytes;
      let text: string;
      try {
        text = res.status === 304 ? '' : await readCapped(res, cap);
      } catch (e) {
        // An oversize error page is still an error answer: keep its status, drop its body.
        if (res.status >= 400 && e instanceof PodiumTransportError && e.code === 'response_too_large')
          text = '';
        else throw e;
      }
      return { kind: 'response', status: res.status, headers: res.headers, text };
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (timedOut) {
        return {
          kind: 'failed',
          retryable: true,
          error: new PodiumTransportError('timeout', `GET ${path} timed out after ${this.o.timeoutMs} ms`),
        };
      }
      if (e instanceof PodiumTransportError) return { kind: 'failed', retryable: false, error: e };
      // Network failures carry no server text; the cause is kept for debugging (it never holds headers).
      return {
        kind: 'failed',
        retryable: true,
        error: new PodiumTransportError('network_error', `GET ${path} failed: network error`, { cause: e }),
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }

  private apiError(status: number, path: string, text: string, retryAfterMs: number | undefined) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const b = body as { code?: unknown; message?: unknown; details?: unknown } | undefined;
    if (
      b &&
      typeof b === 'object' &&
      typeof b.code === 'string' &&
      API_CODE.test(b.code) &&
      typeof b.message === 'string'
    ) {
      const details =
        b.details && typeof b.details === 'object' && !Array.isArray(b.details)
          ? (b.details as Record<string, unknown>)
          : undefined;
      return new PodiumApiError(status, b.code, this.scrub(b.message).slice(0, 500), details, retryAfterMs);
    }
    return new PodiumApiError(
      status,
      `http_${status}`,
      `GET ${path} answered HTTP ${status}`,
      undefined,
      retryAfterMs,
    );
  }

  /** Server text is kept in errors, so a server that echoes the token must not leak it into logs. */
  private scrub(text: string): string {
    return text.split(this.o.token).join('[redacted]');
  }

  /** A short SHA-256 of the token: separates cache entries per site without storing the token. */
  private tokenFingerprint(): Promise<string> {
    this.fingerprint ??= crypto.subtle
      .digest('SHA-256', new TextEncoder().encode(this.o.token))
      .then((d) =>
        Array.from(new Uint8Array(d).slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join(''),
      );
    return this.fingerprint;
  }

  private async cacheGet(key: string) {
    try {
      const hit = await this.o.cache!.get(key);
      return hit && typeof hit.etag === 'string' && typeof hit.body === 'string' ? hit : undefined;
    } catch {
      return undefined;
    }
  }

  private async cacheSet(key: string, value: { etag: string; body: string }) {
    try {
      await this.o.cache!.set(key, value);
    } catch {
      // A failing cache store only costs the next conditional request.
    }
  }
}
