import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { directLineWriter, lazyChildLogger, loggerOptions } from '../lib/logger.ts';
import { logRequest, type RequestLine } from './request-log.ts';

/** A stream keeping each line written to it (raw). */
function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

/** A pino logger with the service's options writing into `lines`. */
function logger(extra: pino.LoggerOptions = {}) {
  const { lines, stream } = sink();
  const options = { ...(loggerOptions(loadConfig({})) as pino.LoggerOptions), ...extra };
  return { log: pino(options, stream) as unknown as FastifyBaseLogger, lines };
}

/**
 * The same options with a pass-through stream hook, which keeps `logRequest` on pino's own path:
 * what it writes there is the reference the direct line must equal.
 */
function viaPino() {
  const options = loggerOptions(loadConfig({})) as pino.LoggerOptions;
  const reference = logger({ hooks: { ...options.hooks, streamWrite: (s: string) => s } });
  expect(directLineWriter(reference.log)).toBeUndefined();
  return reference;
}

const untimed = (lines: string[]) => lines.map((l) => l.replace(/"time":\d+/, '"time":0'));

const requests: RequestLine[] = [
  { reqId: '01M8ACYF2DJ03PC6PXKNBAQK39', method: 'GET', route: '/go/:slug', status: 302, ms: 2.345 },
  { reqId: 'r-1', method: 'GET', route: '/api/v1/toplists/by-slug/:slug', status: 304, ms: 0.04, siteId: 7 },
  { reqId: 'a:b.c', method: 'POST', route: '/x/"q"\\é', status: 422, ms: 12, adminTokenId: 3, siteId: 0 },
];

describe('logRequest', () => {
  it('writes the bytes pino writes, bindings included, without going through pino', () => {
    for (const make of [(l: FastifyBaseLogger) => l, (l: FastifyBaseLogger) => l.child({ worker: 2 })]) {
      const direct = logger();
      const reference = viaPino();
      const [a, b] = [make(direct.log), make(reference.log)];
      expect(directLineWriter(a)).toBeTypeOf('function');
      for (const r of requests) {
        logRequest(a, r);
        logRequest(b, r);
      }
      expect(untimed(direct.lines)).toEqual(untimed(reference.lines));
      expect(direct.lines).toHaveLength(requests.length);
    }
  });

  it('writes directly through the logger Fastify makes from the service options', async () => {
    const { lines, stream } = sink();
    const app = Fastify({ logger: { ...(loggerOptions(loadConfig({})) as object), stream } });
    try {
      expect(directLineWriter(app.log)).toBeTypeOf('function');
      const reference = viaPino();
      logRequest(app.log, requests[1]!);
      logRequest(reference.log, requests[1]!);
      expect(untimed(lines)).toEqual(untimed(reference.lines));
    } finally {
      await app.close();
    }
  });

  it('honours the level, and leaves 5xx lines (level error) to pino', () => {
    const quiet = logger({ level: 'warn' });
    logRequest(quiet.log, requests[0]!);
    expect(quiet.lines).toEqual([]);
    logRequest(quiet.log, { ...requests[0]!, status: 503 });
    expect(JSON.parse(quiet.lines[0]!)).toMatchObject({ level: 50, status: 503, msg: 'request' });
  });

  it('leaves to pino a logger whose output it could not reproduce', () => {
    const mixed = logger({ mixin: () => ({ region: 'eu' }) });
    expect(directLineWriter(mixed.log)).toBeUndefined();
    logRequest(mixed.log, requests[0]!);
    expect(JSON.parse(mixed.lines[0]!)).toMatchObject({ region: 'eu', reqId: requests[0]!.reqId });
    const timed = logger({ timestamp: pino.stdTimeFunctions.isoTime });
    expect(directLineWriter(timed.log)).toBeUndefined();
    const levels = logger({ formatters: { level: (label) => ({ level: label }) } });
    expect(directLineWriter(levels.log)).toBeUndefined();
    logRequest(levels.log, requests[0]!);
    expect(JSON.parse(levels.lines[0]!)).toMatchObject({ level: 'info' });
    expect(directLineWriter(lazyChildLogger(logger().log, { reqId: 'x' }, {}))).toBeUndefined();
  });
});
