import { describe, expect, it } from 'vitest';
import {
  hashToken,
  mintToken,
  parseBearer,
  sameBytes,
  sameChars,
  TOKEN_PREFIX,
  tokenHint,
} from './tokens.ts';

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

describe('sameChars', () => {
  it('is true for equal strings only: a difference anywhere, a length, a case or a non-ASCII character tells', () => {
    const header = `Bearer ${mintToken('site')}`;
    expect(sameChars(header, [...header].join(''))).toBe(true);
    expect(sameChars('', '')).toBe(true);
    for (const i of [0, 7, header.length - 1]) {
      const other = header.slice(0, i) + (header[i] === 'x' ? 'y' : 'x') + header.slice(i + 1);
      expect(sameChars(header, other)).toBe(false);
    }
    expect(sameChars(header, header.slice(0, -1))).toBe(false);
    expect(sameChars(header, `${header}=`)).toBe(false);
    expect(sameChars('Bearer ab', 'bearer ab')).toBe(false);
    expect(sameChars('é', 'e')).toBe(false);
    expect(sameChars('\u0100', '\u0000')).toBe(false);
  });
});
