import { describe, expect, it } from 'vitest';
import { landingUrl, type MacroValues, unknownMacros } from './landing.ts';

const values: MacroValues = {
  click_id: 'c 1&x',
  affiliate_id: 'aff',
  site_id: '3',
  toplist_id: '7',
  position: '2',
  sub_id: '',
};

describe('landing URLs', () => {
  it('fills macros URL-encoded in the landing URL and appends the programme parameters', () => {
    const url = new URL(
      landingUrl('https://op.example/l?c={click_id}', 'btag={affiliate_id}_{click_id}', values)!,
    );
    expect(url.origin + url.pathname).toBe('https://op.example/l');
    expect([...url.searchParams]).toEqual([
      ['c', 'c 1&x'],
      ['btag', 'aff_c 1&x'],
    ]);
  });

  it('lets a programme parameter replace the landing URL parameter of the same name', () => {
    const url = new URL(
      landingUrl(
        'https://op.example/l?btag={click_id}&aff=x&tag=1&tag=2',
        'btag=p_{click_id}&tag=a&tag=b',
        values,
      )!,
    );
    expect([...url.searchParams]).toEqual([
      ['aff', 'x'],
      ['btag', 'p_c 1&x'],
      ['tag', 'a'],
      ['tag', 'b'],
    ]);
  });

  it('leaves unknown macros as they are and names them', () => {
    expect(unknownMacros('a={click_id}&b={nope}&c={also_not}')).toEqual(['nope', 'also_not']);
    expect(unknownMacros('{click_id}{position}')).toEqual([]);
    expect(landingUrl('https://op.example/{nope}', '', values)).toBe('https://op.example/%7Bnope%7D');
  });

  it('refuses anything but an absolute http(s) result, whatever a macro holds', () => {
    expect(landingUrl('javascript:alert(1)', '', values)).toBeUndefined();
    expect(landingUrl('{click_id}', '', { ...values, click_id: 'https://evil.example' })).toBeUndefined();
    expect(landingUrl('not a url', '', values)).toBeUndefined();
    // A macro in the host or port would let its value pick the host: a sub_id may hold dots.
    const steered = { ...values, sub_id: 'evil.example' };
    expect(landingUrl('https://{sub_id}/l', '', steered)).toBeUndefined();
    expect(landingUrl('https://op.example:{position}/l', '', steered)).toBeUndefined();
    expect(landingUrl('https://{sub_id}@op.example/l', '', steered)).toBeUndefined();
    expect(landingUrl('https://op.example/{sub_id}?s={sub_id}#{sub_id}', '', steered)).toBe(
      'https://op.example/evil.example?s=evil.example#evil.example',
    );
  });
});
