import { describe, expect, it } from 'vitest';
import { etagMatches } from './routes.ts';

describe('etagMatches (If-None-Match, RFC 9110 §13.1.2)', () => {
  const etag = '"abc"';
  it('matches the exact tag, a weak form of it, one of a list, and *', () => {
    expect(etagMatches('"abc"', etag)).toBe(true);
    expect(etagMatches('W/"abc"', etag)).toBe(true);
    expect(etagMatches('"x", "abc" ,"y"', etag)).toBe(true);
    expect(etagMatches(' * ', etag)).toBe(true);
  });
  it('does not match another tag, an unquoted one, or no header', () => {
    expect(etagMatches('"abd"', etag)).toBe(false);
    expect(etagMatches('abc', etag)).toBe(false);
    expect(etagMatches(undefined, etag)).toBe(false);
    expect(etagMatches('', etag)).toBe(false);
  });
});
