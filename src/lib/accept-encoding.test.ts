import { describe, expect, it } from 'vitest';
import { acceptsGzip } from './accept-encoding.ts';

describe('acceptsGzip', () => {
  it('reads the codings clients send', () => {
    // curl --compressed, browsers and Node's fetch, WordPress's HTTP API, a bare client.
    expect(acceptsGzip('deflate, gzip, br, zstd')).toBe(true);
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('deflate;q=1.0, compress;q=0.5, gzip;q=0.5')).toBe(true);
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('br')).toBe(false);
  });

  it('honours q=0, x-gzip, the wildcard and case', () => {
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip; q=0.000, *')).toBe(false);
    expect(acceptsGzip('GZIP;Q=0.2')).toBe(true);
    expect(acceptsGzip('x-gzip')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('*;q=0')).toBe(false);
    expect(acceptsGzip('br, *;q=0.1')).toBe(true);
  });

  it('answers a repeated header the same, and refuses an overlong one', () => {
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip(`${'x,'.repeat(600)}gzip`)).toBe(false);
  });
});
