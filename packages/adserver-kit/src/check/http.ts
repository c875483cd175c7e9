import { Agent, request } from 'undici';

// The checker's HTTP client, configured like the marketplace's: no redirects followed,
// 10 s connect / 30 s total, capped response size, the key only in the Authorization header.

/** Largest response body read (bytes); a bigger one is a failure, not a memory problem. */
export const MAX_BODY = 5 * 1024 * 1024;

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  ms: number;
}

export interface HttpClient {
  /** Calls `path` below the base URL; resolves to the answer, or rejects on transport failure. */
  send(
    method: 'GET' | 'POST',
    path: string,
    opts?: {
      key?: string | null;
      body?: unknown;
      query?: Record<string, string>;
      headers?: Record<string, string>;
    },
  ): Promise<HttpResult>;
  close(): Promise<void>;
}

/** Appends the endpoint path to the base URL, keeping a query string of the base after it. */
export function endpointUrl(base: string, path: string, query: Record<string, string> = {}): string {
  const u = new URL(base);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}${path}`;
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u.toString();
}

/** A client bound to a base URL and default key; `ca` adds trusted certificates (sandboxes). */
export function httpClient(base: string, apiKey: string, ca?: string | Buffer): HttpClient {
  const agent = new Agent({
    connect: { timeout: 10_000, ...(ca ? { ca } : {}) },
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  return {
    async send(method, path, opts = {}) {
      const key = opts.key === undefined ? apiKey : opts.key;
      const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      }
      const started = performance.now();
      const res = await request(endpointUrl(base, path, opts.query), {
        method,
        headers,
        body,
        dispatcher: agent,
        signal: AbortSignal.timeout(30_000),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += chunk.length;
        if (size > MAX_BODY) {
          res.body.destroy();
          throw new Error(`response body larger than ${MAX_BODY} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      return { status: res.statusCode, headers: flat, text, json, ms: performance.now() - started };
    },
    close: () => agent.close(),
  };
}
