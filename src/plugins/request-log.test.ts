import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { loggerOptions } from '../lib/logger.ts';
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

const _untimed = (lines: string[]) => lines.map((l) => l.replace(/"time":\d+/, '"time":0'));

const requests: RequestLine[] = [
  { reqId: '01M8ACYF2DJ03PC6PXKNBAQK39', method: 'GET', route: '/go/:slug', status: 302, ms: 2.345 },
  { reqId: 'r-1', method: 'GET', route: '/api/v1/toplists/by-slug/:slug', status: 304, ms: 0.04, siteId: 7 },
  { reqId: 'a:b.c', method: 'POST', route: '/x/"q"\\é', status: 422, ms: 12, adminTokenId: 3, siteId: 0 },
];

describe('logRequest', () => {
  it('writes one JSON line a request through pino, with the route pattern and the ids it has', () => {
    for (const make of [(l: FastifyBaseLogger) => l, (l: FastifyBaseLogger) => l.child({ worker: 2 })]) {
      const out = logger();
      const log = make(out.log);
      for (const r of requests) logRequest(log, r);
      const parsed = out.lines.map((l) => JSON.parse(l));
      expect(parsed).toHaveLength(requests.length);
      expect(parsed[0]).toMatchObject({
        level: 30,
        reqId: requests[0]!.reqId,
        route: '/go/:slug',
        status: 302,
        ms: 2.3,
        msg: 'request',
      });
      expect(parsed[1]).toMatchObject({ status: 304, ms: 0, siteId: 7 });
      expect(parsed[2]).toMatchObject({ route: '/x/"q"\\é', adminTokenId: 3, siteId: 0 });
      expect(parsed[0]).not.toHaveProperty('siteId');
      if (log !== out.log) for (const p of parsed) expect(p.worker).toBe(2);
    }
  });

  it('honours the level, and writes 5xx lines at level error', () => {
    const quiet = logger({ level: 'warn' });
    logRequest(quiet.log, requests[0]!);
    expect(quiet.lines).toEqual([]);
    logRequest(quiet.log, { ...requests[0]!, status: 503 });
    expect(JSON.parse(quiet.lines[0]!)).toMatchObject({ level: 50, status: 503, msg: 'request' });
  });

  it("keeps the logger's own options: a mixin, another level format", () => {
    const mixed = logger({ mixin: () => ({ region: 'eu' }) });
    logRequest(mixed.log, requests[0]!);
    expect(JSON.parse(mixed.lines[0]!)).toMatchObject({ region: 'eu', reqId: requests[0]!.reqId });
    const levels = logger({ formatters: { level: (label) => ({ level: label }) } });
    logRequest(levels.log, requests[0]!);
    expect(JSON.parse(levels.lines[0]!)).toMatchObject({ level: 'info' });
  });
});
