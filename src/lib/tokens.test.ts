import { describe, expect, it } from 'vitest';
import { hashToken, mintToken, parseBearer, sameBytes, TOKEN_PREFIX, tokenHint } from './tokens.ts';

describe('parseBearer', () => {
  it('takes the token of a Bearer header, any case of the scheme, trailing spaces allowed', () => {
    expect(parseBearer('Bearer pds_abc')).toBe('pds_abc');
    expect(parseBearer('bearer  pda_x.y~z+/=')).toBe('pda_x.y~z+/=');
    expect(parseBearer('Bearer tok  ')).toBe('tok');
  });

  it('refuses a missing header, another scheme, an empty token, odd characters and over-long tokens', () => {
    expect(parseBearer(undefined)).toBeUndefined();
    expect(parseBearer('')).toBeUndefined();
    expect(parseBearer('Basic dXNlcjpwYXNz')).toBeUndefined();
    expect(parseBearer('Bearer ')).toBeUndefined();
    expect(parseBearer('Bearer a b')).toBeUndefined();
    expect(parseBearer('Bearer tok\u0000')).toBeUndefined();
    expect(parseBearer(`Bearer ${'a'.repeat(512)}`)).toBe('a'.repeat(512));
    expect(parseBearer(`Bearer ${'a'.repeat(513)}`)).toBeUndefined();
  });
});

describe('minted tokens', () => {
  it('carry their kind prefix, differ every time and hash to 32 bytes compared in constant time', () => {
    const a = mintToken('site');
    const b = mintToken('site');
    expect(a.startsWith(TOKEN_PREFIX.site)).toBe(true);
    expect(a).not.toBe(b);
    expect(hashToken(a)).toHaveLength(32);
    expect(sameBytes(hashToken(a), hashToken(a))).toBe(true);
    expect(sameBytes(hashToken(a), hashToken(b))).toBe(false);
    expect(tokenHint(a).length).toBeLessThan(a.length);
  });
});
