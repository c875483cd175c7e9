import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDbUnavailable } from '../lib/db-errors.ts';
import { AppError, ERRORS, type ErrorCode } from '../lib/errors.ts';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns an AJV issue into a dotted field path (`query.per_page`, `body.items.0.brandId`). */
function fieldOf(context: string | undefined, issue: AjvIssue): string {
  const parts = issue.instancePath.split('/').filter(Boolean);
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    parts.push(issue.params.missingProperty);
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
    parts.push(issue.params.additionalProperty);
  }
  const path = parts.join('.');
  if (context === 'querystring' || context === 'params') return path || context;
  return path || 'body';
}

function describe(issue: AjvIssue): string {
  switch (issue.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an accepted field';
    case 'type':
      return `must be of type ${String(issue.params.type)}`;
    case 'maximum':
      return `must be at most ${String(issue.params.limit)}`;
    case 'minimum':
      return `must be at least ${String(issue.params.limit)}`;
    default:
      return issue.message ?? 'is invalid';
  }
}

/** Maps a Fastify/AJV validation failure to a 422 naming the first offending field. */
export function validationError(context: string | undefined, issues: AjvIssue[]): AppError {
  const first = issues[0];
  if (!first) return new AppError('validation_failed', 'Request is invalid');
  const field = fieldOf(context, first);
  const errors = issues.slice(0, 20).map((i) => ({ field: fieldOf(context, i), message: describe(i) }));
  return new AppError('validation_failed', `${field} ${describe(first)}`, { field, errors });
}

/**
 * Status → code, derived from the error catalog (the first code listed for a status wins).
 * Only client statuses and 503 are Fastify's to name; its other 5xx stay internal errors.
 */
const BY_STATUS: Partial<Record<number, ErrorCode>> = {};
for (const [code, status] of Object.entries(ERRORS) as [ErrorCode, number][]) {
  if ((status < 500 || status === 503) && BY_STATUS[status] === undefined) BY_STATUS[status] = code;
}

/** Fastify's `frameworkErrors` option: router-level failures (bad URL encoding, over-long parameter) in our body shape. */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const code = (err.statusCode && BY_STATUS[err.statusCode]) || 'bad_request';
  const out = new AppError(code, err.message);
  sendError(reply, out);
}

/** An error answer: the JSON body, which no browser may sniff into something else. */
function sendError(reply: FastifyReply, out: AppError): void {
  reply
    .status(out.status)
    .header('x-content-type-options', 'nosniff')
    .type('application/json; charset=utf-8')
    .send(out.toBody());
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before any route runs (headers
 * over the size limit, broken framing, a request that took too long) is answered in the same
 * `{code, message}` body as everything else, then the connection is closed.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const out =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large', 'The request line and headers are larger than this server reads')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout', 'The request was not received in time')
        : new AppError('bad_request', 'The request is not well-formed HTTP/1.1');
  const body = JSON.stringify(out.toBody());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${out.status} ${STATUS_CODES[out.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The path a 404 may repeat: a postback URL carries the programme's secret token, which is never echoed. */
function visiblePath(url: string): string {
  const path = url.split('?')[0]?.slice(0, 200) ?? '';
  return path.startsWith('/api/postback/') ? '/api/postback/…' : path;
}

/** Renders every error as `{code, message, details?}`; never a stack trace or internal text. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validationContext?: string }, request, reply) => {
    let out: AppError;
    if (err instanceof AppError) {
      out = err;
    } else if (err.validation) {
      out = validationError(err.validationContext, err.validation as AjvIssue[]);
    } else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500 && BY_STATUS[err.statusCode]) {
      // Fastify's own client errors (bad JSON, body too large, bad content type): their messages are safe.
      out = new AppError(BY_STATUS[err.statusCode]!, err.message);
    } else if (isDbUnavailable(err)) {
      request.log.warn({ err }, 'database unavailable');
      reply.header('retry-after', '5');
      out = new AppError('service_unavailable', 'The database is unavailable; retry in a few seconds');
    } else {
      request.log.error({ err }, 'unhandled error');
      out = new AppError('internal_error', 'Internal server error');
    }
    const retryAfter = out.code === 'rate_limited' ? out.details?.retryAfterSeconds : undefined;
    // A throttled authentication failure is not a challenge to send credentials again.
    if (typeof retryAfter === 'number')
      reply.header('retry-after', String(retryAfter)).removeHeader('www-authenticate');
    if (out.status === 401 && !reply.hasHeader('www-authenticate')) {
      reply.header('www-authenticate', 'Bearer');
    }
    sendError(reply, out);
  });

  app.setNotFoundHandler((request, reply) => {
    sendError(reply, new AppError('not_found', `No route for ${request.method} ${visiblePath(request.url)}`));
  });
}
