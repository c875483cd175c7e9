import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger, TRUSTED_LINE } from './logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

describe('lazyChildLogger', () => {
  it('makes the child only when something logs, with the bindings of a real child', () => {
    const { lines, stream } = capture();
    const root = pino({ level: 'info' }, stream);
    let made = 0;
    const child = root.child.bind(root);
    root.child = ((...a: Parameters<typeof child>) => {
      made++;
      return child(...a);
    }) as typeof root.child;
    const lazy = lazyChildLogger(root, { reqId: 'r-1' }, {});
    expect(made).toBe(0);
    expect(lazy.level).toBe('info');
    lazy.warn({ n: 1 }, 'first');
    lazy.error('second');
    expect(made).toBe(1);
    expect(lines.map((l) => [l.reqId, l.msg, l.level])).toEqual([
      ['r-1', 'first', 40],
      ['r-1', 'second', 50],
    ]);
  });

  it('honours a per-route level given in the options', () => {
    const { lines, stream } = capture();
    const lazy = lazyChildLogger(pino({ level: 'info' }, stream), { reqId: 'r-2' }, { level: 'warn' });
    expect(lazy.level).toBe('warn');
    lazy.info('dropped');
    lazy.warn('kept');
    expect(lines.map((l) => l.msg)).toEqual(['kept']);
  });
});

describe('TRUSTED_LINE', () => {
  it('is not written into the line', () => {
    const { lines, stream } = capture();
    pino({}, stream).info({ [TRUSTED_LINE]: true, route: '/x' }, 'request');
    expect(Object.keys(lines[0]!)).not.toContain('Symbol(podium.trustedLogLine)');
    expect(lines[0]).toMatchObject({ route: '/x', msg: 'request' });
  });
});
