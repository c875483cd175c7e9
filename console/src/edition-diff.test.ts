import { describe, expect, it } from 'vitest';
import type { WireItem, WireToplist } from './api.ts';
import { diffEditions } from './edition-diff.ts';

const item = (id: number, position: number, brand: number, offer: number, extra = {}): WireItem => ({
  id,
  position,
  brand: { id: brand, name: `Brand ${brand}`, rating: 8 },
  offer: { id: offer, offerText: `Offer ${offer}`, bonus_code: null, ...extra },
});
const edition = (version: string, items: WireItem[], name = 'List'): WireToplist => ({
  version,
  name,
  publishedAt: '2026-01-01T00:00:00+00:00',
  items,
});

describe('diffEditions', () => {
  it('no changes between equal item lists', () => {
    const items = [item(1, 1, 10, 100), item(2, 2, 20, 200)];
    expect(diffEditions(edition('1', items), edition('2', items))).toEqual([]);
  });

  it('moves, a brand swap on a kept item, an offer swap and changed offer terms', () => {
    const older = edition('1', [
      item(1, 1, 10, 100),
      item(2, 2, 20, 200),
      item(3, 3, 30, 300),
      item(4, 4, 40, 400, { bonus_code: 'OLD' }),
    ]);
    const newer = edition('2', [
      item(2, 1, 20, 200),
      item(1, 2, 10, 101),
      item(3, 3, 35, 350),
      item(4, 4, 40, 400, { bonus_code: 'NEW' }),
    ]);
    expect(diffEditions(older, newer)).toEqual([
      { kind: 'changed', position: 1, brand: 'Brand 20', details: ['moved from position 2 to 1'] },
      {
        kind: 'changed',
        position: 2,
        brand: 'Brand 10',
        details: ['moved from position 1 to 2', 'offer: #100 “Offer 100” → #101 “Offer 101”'],
      },
      {
        kind: 'changed',
        position: 3,
        brand: 'Brand 35',
        details: ['brand: Brand 30 → Brand 35', 'offer: #300 “Offer 300” → #350 “Offer 350”'],
      },
      { kind: 'changed', position: 4, brand: 'Brand 40', details: ['bonus code: OLD → NEW'] },
    ]);
  });

  it('a brand removed and re-added under a new item id is a move, not remove + add; others are added/removed', () => {
    const older = edition('1', [item(1, 1, 10, 100), item(2, 2, 20, 200)]);
    const newer = edition('2', [item(9, 1, 20, 200), item(8, 2, 30, 300)]);
    expect(diffEditions(older, newer)).toEqual([
      { kind: 'changed', position: 1, brand: 'Brand 20', details: ['moved from position 2 to 1'] },
      { kind: 'removed', position: 1, brand: 'Brand 10', details: ['#100 “Offer 100”'] },
      { kind: 'added', position: 2, brand: 'Brand 30', details: ['#300 “Offer 300”'] },
    ]);
  });
});
