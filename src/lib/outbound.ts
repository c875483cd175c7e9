import type { Socket } from 'node:net';
import type { Agent, buildConnector, request } from 'undici';
import type { Config } from '../config.ts';
import { protectSecret, redact } from './redact.ts';
import {
  allowSet,
  BlockedAddressError,
  checkEndpoint,
  checkHostName,
  endpointKey,
  guardedLookup,
  normaliseAddress,
  type Resolver,
  systemResolver,
} from './ssrf.ts';

/**
 * Podium's one client for calls to servers operators name (publishers' ad servers, affiliate
 * operators): https only, SSRF-guarded on every address actually connected to, no redirects,
 * connect and total timeouts, a response size cap, no proxy, and the API key only in the
 * Authorization header and scrubbed by value from every message it produces.
 */

export interface OutboundOptions {
  connectTimeoutMs?: number;
  totalTimeoutMs?: number;
  maxBodyBytes?: number;
  /** Local address every socket is bound to (`PODIUM_OUTBOUND_ADDRESS`); unset: the system's choice. */
  localAddress?: string;
  /**
   * The local-only allowance (`PODIUM_OUTBOUND_LOOPBACK_ALLOW`): exact loopback `address:port`
   * pairs reachable although not public, over plain http too (the demo's reference ad server).
   */
  loopbackAllow?: readonly string[];
  /** Told how every call ended (metrics): never the URL, never the key. */
  onOutcome?: (report: { target: string; kind: OutcomeKind; seconds: number }) => void;
  /** Escape hatches for tests on loopback. Never wired to configuration. */
  testOnly?: {
    /** Accept `http://` base URLs (fixtures without TLS). */
    allowHttp?: boolean;
    /** Exact addresses accepted although not public (e.g. `127.0.0.1`). */
    allowAddresses?: readonly string[];
    /** DNS replacement (rebinding and split-answer tests). */
    resolver?: Resolver;
  };
}

export interface OutboundRequest {
  method: 'GET' | 'POST';
  /** Base URL as the operator entered it; its query string is kept after the endpoint path. */
  baseUrl: string;
  /** Endpoint path appended to the base path, e.g. `/health`. */
  path: string;
  query?: Record<string, string>;
  /** JSON body already serialised (retries send these exact bytes). */
  body?: string;
  /** Sent only as `Authorization: Bearer …` and redacted from everything this client reports. */
  apiKey?: string;
  headers?: Record<string, string>;
  /** Caller's cancellation (job shutdown). */
  signal?: AbortSignal;
  /** Which kind of peer this is (`adserver`, `operator`), for metrics. */
  target?: string;
}

type Headers = Record<string, string>;

/** How a call ended. Only `ok` carries a body the caller should trust; every `message` is redacted. */
export type Outcome =
  | { kind: 'ok'; status: number; headers: Headers; json: unknown }
  | { kind: 'http_status'; status: number; headers: Headers; json: unknown; message: string }
  | { kind: 'redirect'; status: number; message: string }
  | { kind: 'invalid_json'; status: number; message: string }
  | {
      kind: 'invalid_url' | 'blocked_address' | 'timeout' | 'refused' | 'too_large' | 'network' | 'aborted';
      message: string;
    };

export type OutcomeKind = Outcome['kind'];

/** How a file download ended: its bytes, or why there are none (every `message` redacted). */
export type Download =
  | { kind: 'ok'; status: number; contentType: string | undefined; bytes: Buffer }
  | { kind: Exclude<OutcomeKind, 'ok' | 'invalid_json'>; message: string };

/** The outbound settings of a running Podium. */
export function outboundOptionsFrom(
  config: Config,
  testOnly?: OutboundOptions['testOnly'],
  onOutcome?: OutboundOptions['onOutcome'],
): OutboundOptions {
  return {
    connectTimeoutMs: config.outboundConnectTimeoutMs,
    totalTimeoutMs: config.outboundTimeoutMs,
    maxBodyBytes: config.outboundMaxBytes,
    localAddress: config.outboundAddress,
    loopbackAllow: config.outboundLoopbackAllow,
    onOutcome,
    testOnly,
  };
}

/** Appends `path` to the base URL's path, keeping the base's query string after it; an empty path leaves the URL as given (webhooks). */
export function endpointUrl(base: URL, path: string, query: Record<string, string> = {}): URL {
  const u = new URL(base.toString());
  if (path) u.pathname = `${u.pathname.replace(/\/+$/, '')}${path}`;
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u;
}

export class OutboundClient {
  /** Made for the first call: undici adds ~20 MB of RSS to a process that never calls out. */
  private agent: Promise<{ agent: Agent; request: typeof request }> | undefined;
  private readonly allow: ReadonlySet<string>;
  private readonly loopback: ReadonlySet<string>;
  private readonly connectMs: number;
  private readonly totalMs: number;
  private readonly maxBytes: number;

  constructor(private readonly options: OutboundOptions = {}) {
    this.connectMs = options.connectTimeoutMs ?? 10_000;
    this.totalMs = options.totalTimeoutMs ?? 30_000;
    this.maxBytes = options.maxBodyBytes ?? 5 * 1024 * 1024;
    this.allow = allowSet(options.testOnly?.allowAddresses);
    this.loopback = new Set(options.loopbackAllow ?? []);
  }

  /** Validates a base URL as the operator entered it; returns the parsed URL or a reason. */
  checkBaseUrl(
    raw: string,
  ): { ok: true; url: URL } | { ok: false; kind: 'invalid_url' | 'blocked_address'; message: string } {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return { ok: false, kind: 'invalid_url', message: 'base_url is not an absolute URL' };
    }
    const literal = normaliseAddress(url.hostname);
    const port = defaultPort(url.protocol, url.port);
    // A pair of the loopback allowance may be plain http: its traffic never leaves the machine.
    const allowed = literal !== undefined && this.loopback.has(endpointKey(literal, port));
    const httpOk = (this.options.testOnly?.allowHttp === true || allowed) && url.protocol === 'http:';
    const bad = (message: string) => ({ ok: false as const, kind: 'invalid_url' as const, message });
    if (url.protocol !== 'https:' && !httpOk) return bad('base_url must start with https://');
    if (url.username || url.password) return bad('base_url must not carry credentials');
    if (url.hash) return bad('base_url must not carry a fragment');
    if (!url.hostname) return bad('base_url has no host');
    const verdict =
      literal === undefined
        ? checkHostName(url.hostname)
        : checkEndpoint(literal, port, this.allow, this.loopback);
    if (!verdict.ok)
      return { ok: false, kind: 'blocked_address', message: `base_url host ${verdict.reason}` };
    return { ok: true, url };
  }

  /** The SSRF-guarded agent, with undici loaded for it. */
  private async makeAgent() {
    const { Agent, buildConnector, request } = await import('undici');
    const base = buildConnector({
      timeout: this.connectMs,
      lookup: guardedLookup(this.options.testOnly?.resolver ?? systemResolver, this.allow),
    } as buildConnector.BuildOptions);
    const allow = this.allow;
    const loopback = this.loopback;
    const agent = new Agent({
      headersTimeout: this.totalMs,
      bodyTimeout: this.totalMs,
      maxResponseSize: this.maxBytes,
      ...(this.options.localAddress ? { localAddress: this.options.localAddress } : {}),
      connect(opts, callback) {
        // IP literals never reach `lookup`: check them here, before any packet is sent.
        const literal = normaliseAddress(opts.hostname);
        const port = defaultPort(opts.protocol, opts.port);
        if (literal !== undefined) {
          const verdict = checkEndpoint(literal, port, allow, loopback);
          if (!verdict.ok) return callback(new BlockedAddressError(verdict.reason), null);
        }
        base(opts, (err, socket) => {
          if (err || !socket) return callback(err ?? new Error('no socket'), null);
          // Defence in depth: the address the socket really reached must pass as well.
          const { remoteAddress: remote, remotePort } = socket as Socket;
          const verdict = remote
            ? checkEndpoint(remote, remotePort ?? port, allow, loopback)
            : { ok: false as const, reason: 'no address' };
          if (!verdict.ok) {
            socket.destroy();
            return callback(new BlockedAddressError(verdict.reason), null);
          }
          callback(null, socket);
        });
      },
    });
    return { agent, request };
  }

  /** Sends one request; never throws, always an Outcome. */
  async send(req: OutboundRequest): Promise<Outcome> {
    const started = performance.now();
    const outcome = await this.attempt(req);
    this.options.onOutcome?.({
      target: req.target ?? 'other',
      kind: outcome.kind,
      seconds: (performance.now() - started) / 1000,
    });
    return outcome;
  }

  private async attempt(req: OutboundRequest): Promise<Outcome> {
    const secrets = req.apiKey ? [req.apiKey] : [];
    if (req.apiKey) protectSecret(req.apiKey);
    const say = (text: string) => redact(text, secrets);
    const base = this.checkBaseUrl(req.baseUrl);
    if (!base.ok) return { kind: base.kind, message: say(base.message) };
    const url = endpointUrl(base.url, req.path, req.query);
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    if (req.apiKey) headers.authorization = `Bearer ${req.apiKey}`;
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    const where = `${req.method} ${req.path}`;
    try {
      const res = await this.open(url, { method: req.method, headers, body: req.body }, req.signal);
      const flat: Headers = {};
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) flat[k] = say(Array.isArray(v) ? v.join(', ') : v);
      if (res.statusCode >= 300 && res.statusCode < 400) {
        res.body.destroy();
        return {
          kind: 'redirect',
          status: res.statusCode,
          message: `${where}: HTTP ${res.statusCode} redirect (not followed)`,
        };
      }
      const declared = Number(res.headers['content-length']);
      if (declared > this.maxBytes) {
        res.body.destroy();
        return { kind: 'too_large', message: `${where}: answer larger than ${this.maxBytes} bytes` };
      }
      const text = (await this.readBody(res.body, this.maxBytes)).toString('utf8');
      // The whole body, never cut: only the key (in any echoed form) and credential shapes go.
      const json = parseJson(redact(text, secrets, Number.POSITIVE_INFINITY));
      if (res.statusCode >= 200 && res.statusCode < 300) {
        if (json === undefined)
          return {
            kind: 'invalid_json',
            status: res.statusCode,
            message: `${where}: HTTP ${res.statusCode} answer is not JSON`,
          };
        return { kind: 'ok', status: res.statusCode, headers: flat, json };
      }
      return {
        kind: 'http_status',
        status: res.statusCode,
        headers: flat,
        json,
        message: say(`${where}: HTTP ${res.statusCode}${errorSummary(json)}`),
      };
    } catch (err) {
      return this.failure(err, where, say, req.signal);
    }
  }

  /**
   * A WHATWG `fetch` over the same guard, for a library that speaks HTTP itself (the OpenID
   * Connect client): the URL is checked as a base URL is, redirects come back unfollowed, the
   * timeouts and the answer cap hold. A refused or failed call rejects with the outcome's message.
   */
  async fetch(url: string, init: FetchInit = {}, target = 'other'): Promise<Response> {
    const started = performance.now();
    let kind: OutcomeKind = 'ok';
    try {
      const base = this.checkBaseUrl(url);
      if (!base.ok) {
        kind = base.kind;
        throw new Error(base.message.replace(/^base_url/, 'URL'));
      }
      const method = (init.method ?? 'GET').toUpperCase();
      try {
        const res = await this.open(
          base.url,
          { method: method as 'GET', headers: init.headers ?? {}, body: fetchBody(init.body) },
          init.signal,
        );
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers))
          for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) headers.append(k, one);
        const redirect = res.statusCode >= 300 && res.statusCode < 400;
        if (redirect) kind = 'redirect';
        else if (res.statusCode >= 400) kind = 'http_status';
        const empty = redirect || res.statusCode < 200 || [204, 205].includes(res.statusCode);
        if (empty) res.body.destroy();
        else if (Number(res.headers['content-length']) > this.maxBytes) {
          res.body.destroy();
          throw Object.assign(new Error('too large'), { code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' });
        }
        const body = empty ? null : await this.readBody(res.body, this.maxBytes);
        return new Response(body === null ? null : new Uint8Array(body), { status: res.statusCode, headers });
      } catch (err) {
        const failed = this.failure(err, `${method} ${base.url.pathname}`, (t) => redact(t), init.signal);
        kind = failed.kind;
        throw new Error(failed.kind === 'ok' ? 'unexpected' : (failed as { message: string }).message);
      }
    } finally {
      this.options.onOutcome?.({ target, kind, seconds: (performance.now() - started) / 1000 });
    }
  }

  /**
   * Downloads one file by GET (a buyer's creative asset): the same guard on every address, https
   * only, no redirects, the same timeouts, and at most `maxBytes` read (more is `too_large`).
   */
  async download(rawUrl: string, maxBytes: number, signal?: AbortSignal): Promise<Download> {
    const started = performance.now();
    const outcome = await this.fetchFile(rawUrl, Math.min(maxBytes, this.maxBytes), signal);
    this.options.onOutcome?.({
      target: 'asset',
      kind: outcome.kind,
      seconds: (performance.now() - started) / 1000,
    });
    return outcome;
  }

  private async fetchFile(rawUrl: string, maxBytes: number, caller?: AbortSignal): Promise<Download> {
    const base = this.checkBaseUrl(rawUrl);
    if (!base.ok) return { kind: base.kind, message: base.message.replace('base_url', 'the URL') };
    const where = 'GET asset';
    const say = (t: string) => redact(t, []);
    try {
      const res = await this.open(base.url, { method: 'GET', headers: { accept: 'image/*' } }, caller);
      if (res.statusCode >= 300 && res.statusCode < 400) {
        res.body.destroy();
        return { kind: 'redirect', message: `${where}: HTTP ${res.statusCode} redirect (not followed)` };
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        res.body.destroy();
        return { kind: 'http_status', message: `${where}: HTTP ${res.statusCode}` };
      }
      if (Number(res.headers['content-length']) > maxBytes) {
        res.body.destroy();
        return { kind: 'too_large', message: `${where}: larger than ${maxBytes} bytes` };
      }
      const bytes = await this.readBody(res.body, maxBytes);
      const type = res.headers['content-type'];
      return { kind: 'ok', status: res.statusCode, contentType: Array.isArray(type) ? type[0] : type, bytes };
    } catch (err) {
      const failed = this.failure(err, where, say, caller);
      if (failed.kind === 'too_large')
        return { kind: 'too_large', message: `${where}: larger than ${maxBytes} bytes` };
      return failed as Download;
    }
  }

  /**
   * Sends one request through the SSRF-guarded agent, bounded by the total timeout and the
   * caller's signal. Errors of a body thrown away on purpose are expected: never unhandled.
   */
  private async open(
    url: string | URL,
    opts: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | Uint8Array | undefined },
    caller?: AbortSignal,
  ) {
    const timeout = AbortSignal.timeout(this.totalMs);
    const signal = caller ? AbortSignal.any([timeout, caller]) : timeout;
    this.agent ??= this.makeAgent();
    const { agent, request } = await this.agent;
    const res = await request(url, { ...opts, dispatcher: agent, signal });
    res.body.on('error', () => {});
    return res;
  }

  private async readBody(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > limit) {
        body.destroy();
        throw Object.assign(new Error('too large'), { code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' });
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  private failure(err: unknown, where: string, say: (t: string) => string, caller?: AbortSignal): Outcome {
    const codes = causeChain(err);
    if (codes.includes('ERR_PODIUM_BLOCKED_ADDRESS')) {
      const blocked = findCause(err, (e) => e instanceof BlockedAddressError);
      return {
        kind: 'blocked_address',
        message: say(`${where}: refused to connect: ${blocked?.message ?? 'non-public address'}`),
      };
    }
    if (caller?.aborted) return { kind: 'aborted', message: `${where}: cancelled` };
    if (codes.includes('UND_ERR_RES_EXCEEDED_MAX_SIZE'))
      return { kind: 'too_large', message: `${where}: answer larger than ${this.maxBytes} bytes` };
    if (codes.some((c) => c === 'UND_ERR_CONNECT_TIMEOUT'))
      return { kind: 'timeout', message: `${where}: no connection within ${this.connectMs} ms` };
    if (codes.some((c) => /TIMEOUT|TimeoutError|AbortError|ABORT/i.test(c)))
      return { kind: 'timeout', message: `${where}: no complete answer within ${this.totalMs} ms` };
    if (codes.includes('ECONNREFUSED')) return { kind: 'refused', message: `${where}: connection refused` };
    if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN'))
      return { kind: 'network', message: `${where}: host name does not resolve` };
    const detail = (err as Error)?.message ?? String(err);
    return { kind: 'network', message: say(`${where}: ${detail}`) };
  }

  async close(): Promise<void> {
    if (this.agent) await (await this.agent).agent.close();
  }
}

/** What `OutboundClient.fetch` takes of a fetch call's options. */
export interface FetchInit {
  method?: string | undefined;
  headers?: Record<string, string> | undefined;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/** A fetch body as undici's `request` sends it: text and bytes only (no streams). */
function fetchBody(body: unknown): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('outbound fetch: only string, URLSearchParams and byte bodies are sent');
}

/** The port a URL's scheme implies when it names none. */
function defaultPort(protocol: string, port: string | number | undefined): number {
  return Number(port) || (protocol === 'http:' ? 80 : 443);
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** ` code: message` of a contract error body, for the operator-facing message. */
function errorSummary(json: unknown): string {
  if (!json || typeof json !== 'object') return '';
  const { code, message } = json as { code?: unknown; message?: unknown };
  const parts = [typeof code === 'string' ? code : '', typeof message === 'string' ? message : ''].filter(
    Boolean,
  );
  return parts.length ? ` ${parts.join(': ')}` : '';
}

/** Codes and names of an error and its causes (undici wraps socket errors). */
function causeChain(err: unknown): string[] {
  const out: string[] = [];
  let e = err as { code?: unknown; name?: unknown; cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; e && depth < 6; depth++) {
    if (typeof e.code === 'string') out.push(e.code);
    if (typeof e.name === 'string') out.push(e.name);
    if (Array.isArray(e.errors)) for (const inner of e.errors) out.push(...causeChain(inner));
    e = e.cause as typeof e;
  }
  return out;
}

function findCause(err: unknown, test: (e: unknown) => boolean): Error | undefined {
  let e = err as { cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; e && depth < 6; depth++) {
    if (test(e)) return e as unknown as Error;
    if (Array.isArray(e.errors)) {
      const inner = e.errors.find(test);
      if (inner) return inner as Error;
    }
    e = e.cause as typeof e;
  }
  return undefined;
}
