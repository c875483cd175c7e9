import { describe, expect, it } from 'vitest';
import { ulid } from '../../lib/ids.ts';
import { compileLanding, LandingTemplate, landingUrl, type MacroValues, unknownMacros } from './landing.ts';

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

  it('refuses a macro in the host of a special scheme written without slashes', () => {
    expect(landingUrl('http:{sub_id}/l', '', { ...values, sub_id: 'evil.example' })).toBeUndefined();
    expect(landingUrl('{sub_id}:evil.example/l', '', { ...values, sub_id: 'https' })).toBeUndefined();
  });
});

describe('a compiled landing template', () => {
  const fixed = { affiliate_id: 'aff 1%', site_id: '3', toplist_id: '', position: '2' };
  const bases = [
    'https://op.example/l?c={click_id}',
    'https://op.example/{sub_id}/{click_id}?s={sub_id}#{click_id}',
    'https://op.example/.{sub_id}./x/{sub_id}/../{click_id}',
    'https://op.example/%{sub_id}/%2{click_id}',
    'https://op.example/a%20b/{click_id}?q=%41{sub_id}+x',
    'https://op.example/l?btag={click_id}&aff=x&tag=1&tag=2',
    'HTTPS://OP.example:443/\\{click_id}?a={affiliate_id}&p={position}&t={toplist_id}',
    'https://op.example/{nope}/{click_id}',
    'https://op.example/l#frag={sub_id}&{click_id}',
    'http:{sub_id}/l',
    '{sub_id}:evil.example/l',
    'https://{sub_id}.example/l',
  ];
  const params = [
    '',
    'btag={affiliate_id}_{click_id}&s={sub_id}',
    'tag=a&tag={sub_id}',
    'a=%{sub_id}&{click_id}=q',
  ];
  const clickIds = [ulid(), 'ABC123', 'c 1&x', '..', 'a.b', ''];
  const subIds = [
    '',
    'home-top',
    'x.y_z',
    '.',
    '..',
    '2e',
    '41',
    '~t',
    'a b',
    'ÄÖ',
    'https',
    'evil.example',
    '%2e',
  ];

  it('gives what landingUrl gives for every template, parameters and value', () => {
    let checked = 0;
    for (const base of bases)
      for (const p of params) {
        const template = new LandingTemplate(base, p, fixed);
        for (const clickId of clickIds)
          for (const subId of subIds) {
            const expected = landingUrl(base, p, { ...fixed, click_id: clickId, sub_id: subId });
            expect(template.url(clickId, subId), `${base} + ${p} with ${clickId}, ${subId}`).toBe(expected);
            checked++;
          }
      }
    expect(checked).toBe(bases.length * params.length * clickIds.length * subIds.length);
  });

  it('is compiled for ordinary templates and not where a value could change the structure', () => {
    const compiled = (base: string, p = '') => compileLanding(base, p, fixed, true) !== null;
    expect(compiled(bases[0]!)).toBe(true);
    expect(compiled(bases[1]!, params[1])).toBe(true);
    expect(compiled(bases[4]!, params[3])).toBe(true);
    // `%` then a value could make an escape; a value in the host is lowercased or refused.
    expect(compiled(bases[3]!)).toBe(false);
    expect(compiled('https://op.example/x?q=%{click_id}')).toBe(false);
    expect(compiled(bases[9]!)).toBe(false);
    expect(compiled(bases[11]!)).toBe(false);
    const pieces = compileLanding(bases[1]!, '', fixed, true)!;
    expect(pieces.filter((p) => p === 0)).toHaveLength(2);
    expect(pieces.filter((p) => p === 1)).toHaveLength(2);
  });
});
