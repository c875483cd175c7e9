import { describe, expect, it } from 'vitest';
import { snippet } from './search.ts';

const filler = (words: number, word = 'lorem') => Array.from({ length: words }, () => word).join(' ');

describe('snippet', () => {
  it('shows the stretch holding the most query terms, not the first match', () => {
    const text = `alpha ${filler(80)} alpha beta gamma ${filler(80)}`;
    const s = snippet(text, ['alpha', 'beta', 'gamma'], ['alpha', 'beta', 'gamma']);
    expect(s).toContain('alpha beta gamma');
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
  });

  it('weighs a query term by its length, and the word itself above a near miss', () => {
    const text = `rollap ${filler(80)} rollup ${filler(80)}`;
    const s = snippet(text, ['rollap', 'rollup'], ['rollup']);
    expect(s).toContain('rollup');
    expect(s).not.toContain('rollap');
    // Each window holds one exact query term: the longer one's wins, though the shorter comes first.
    const longer = `xy ${filler(80)} abcdefgh ${filler(80)}`;
    const t = snippet(longer, ['xy', 'abcdefgh'], ['xy', 'abcdefgh']);
    expect(t).toContain('abcdefgh');
    expect(t).not.toContain('xy');
  });

  it('keeps the first of equally good stretches', () => {
    const text = `${filler(10, 'one')} beta ${filler(80, 'two')} beta ${filler(80, 'three')}`;
    const s = snippet(text, ['beta'], ['beta']);
    expect(s).toContain('one beta two');
    expect(s).not.toContain('three');
  });

  it('counts a term in a window only when the whole of it fits (220 characters from 50 before a match)', () => {
    // alpha's window runs from 50 characters before it to 170 after. With a gap of 160 spaces
    // gamma ends exactly at that window's end: alpha and gamma (10) beat gamma's own window, gamma
    // and beta (9). One space more and gamma no longer fits: alpha's window scores 5, gamma's wins.
    const text = (gap: number) => `${'x'.repeat(60)} alpha${' '.repeat(gap)}gamma beta ${filler(60)}`;
    const fits = text(160);
    expect(fits.indexOf('gamma') + 'gamma'.length).toBe(fits.indexOf('alpha') - 50 + 220);
    const terms = ['alpha', 'gamma', 'beta'];
    expect(snippet(fits, terms, terms).startsWith('xxx')).toBe(true);
    expect(snippet(text(161), terms, terms).startsWith('…gamma beta')).toBe(true);
  });

  it('starts at the beginning when nothing matches, and widens to whole words', () => {
    const text = `Idempotency-Key headers ${filler(100)}`;
    const s = snippet(text, ['absent'], ['absent']);
    expect(s.startsWith('Idempotency-Key headers')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
    expect(
      s
        .slice(0, -1)
        .split(' ')
        .every((w) => w === 'lorem' || /^[A-Z]/.test(w) || w === 'headers'),
    ).toBe(true);
  });

  it('looks at no more than 50 occurrences of a term', () => {
    // 60 lone alphas, then the one place alpha and beta meet: the 61st alpha is never looked at,
    // so beta's window holds beta alone (4) and the first alpha's (5) wins.
    const text = `${Array.from({ length: 60 }, () => `alpha ${filler(50)}`).join(' ')} beta alpha ${filler(50)}`;
    const s = snippet(text, ['alpha', 'beta'], ['alpha', 'beta']);
    expect(s.startsWith('alpha')).toBe(true);
    expect(s).not.toContain('beta');
  });
});
