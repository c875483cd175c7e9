import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface LoopbackServer {
  /** `http://HOST:PORT` */
  origin: string;
  port: number;
  /** Requests received, in order (method, url, headers, body). */
  hits: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  /** Replaces the handler (one server, many behaviours). */
  handle(fn: Handler): void;
  close(): Promise<void>;
}

/** A plain HTTP server on loopback whose behaviour each test sets with `handle`. */
export async function loopbackServer(host = '127.0.0.1'): Promise<LoopbackServer> {
  let handler: Handler = (_req, res) => json(res, 200, {});
  const hits: LoopbackServer['hits'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    hits,
    handle: (fn) => {
      handler = fn;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Writes a JSON answer. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** A raw TCP server: `onSocket` gets each connection (drips, black holes, half answers). */
export async function rawServer(
  onSocket: (s: Socket) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: NetServer = createNetServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Writes `text` one byte at a time every `everyMs` until the socket closes. */
export function drip(s: Socket, text: string, everyMs: number): void {
  let i = 0;
  const t = setInterval(() => {
    if (s.destroyed || i >= text.length) return clearInterval(t);
    s.write(text[i++]!);
  }, everyMs);
  s.on('close', () => clearInterval(t));
}
