import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';

/** The server settings Fastify applies to a server it creates itself (its processed options). */
interface ServerSettings {
  http?: ServerOptions;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
  maxRequestsPerSocket?: number;
}

/**
 * An HTTP/1 server for Fastify's `serverFactory`, set up exactly as Fastify sets up its own
 * (keep-alive and request timeouts, connection timeout, requests per socket), so taking over
 * the factory to put a fast path in front of Fastify changes nothing else.
 */
export function httpServer(opts: ServerSettings, listener: RequestListener): Server {
  const server = createServer(opts.http ?? {}, listener);
  if (opts.keepAliveTimeout !== undefined) server.keepAliveTimeout = opts.keepAliveTimeout;
  if (opts.requestTimeout !== undefined) server.requestTimeout = opts.requestTimeout;
  server.setTimeout(opts.connectionTimeout ?? 0);
  if (opts.maxRequestsPerSocket && opts.maxRequestsPerSocket > 0)
    server.maxRequestsPerSocket = opts.maxRequestsPerSocket;
  return server;
}
