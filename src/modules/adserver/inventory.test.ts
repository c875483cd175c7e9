import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../lib/outbound.ts';
import { checkSlot, walkInventory } from './inventory.ts';

const slot = (id: string, extra: Record<string, unknown> = {}) => ({
  inventory_id: id,
  name: id,
  sizes: ['300x250'],
  ...extra,
});
const page = (data: unknown[], next_cursor?: string | null): Outcome => ({
  kind: 'ok',
  status: 200,
  headers: {},
  json: { data, next_cursor },
});

/** A fake ad server answering by cursor. */
function pages(map: Record<string, Outcome>) {
  const asked: (string | undefined)[] = [];
  return {
    asked,
    fetch: async (cursor: string | undefined) => {
      asked.push(cursor);
      return map[cursor ?? ''] ?? page([]);
    },
  };
}

describe('walkInventory', () => {
  it('follows cursors to the last page', async () => {
    const f = pages({
      '': page([slot('a')], 'c1'),
      c1: page([slot('b')], 'c2'),
      c2: page([slot('c')], null),
    });
    const r = await walkInventory(f.fetch);
    expect(r).toMatchObject({ complete: true, pages: 3, problems: [] });
    expect(r.slots.map((s) => s.inventory_id)).toEqual(['a', 'b', 'c']);
    expect(f.asked).toEqual([undefined, 'c1', 'c2']);
  });

  it('stops on a cursor loop', async () => {
    const f = pages({
      '': page([slot('a')], 'c1'),
      c1: page([slot('b')], 'c2'),
      c2: page([slot('c')], 'c1'),
    });
    const r = await walkInventory(f.fetch);
    expect(r.complete).toBe(false);
    expect(r.problems[0]).toMatch(/cursor loop/);
    expect(f.asked).toHaveLength(3);
  });

  it('stops on a page that repeats an earlier one under a fresh cursor', async () => {
    let n = 0;
    const r = await walkInventory(async () => page([slot('a'), slot('b')], `fresh-${n++}`));
    expect(r.complete).toBe(false);
    expect(r.pages).toBe(2);
    expect(r.problems[0]).toMatch(/repeats an earlier page/);
  });

  it('stops at the page cap on a never-ending walk', async () => {
    let n = 0;
    const r = await walkInventory(async () => page([slot(`s${n}`)], `c${n++}`), 5);
    expect(r).toMatchObject({ complete: false, pages: 5 });
    expect(r.problems).toEqual(['stopped after 5 pages (page cap)']);
  });

  it('refuses duplicate ids and slots breaking the field rules, keeping the rest', async () => {
    const f = pages({
      '': page(
        [
          slot('a'),
          slot('a', { name: 'again' }),
          slot('b', { sizes: ['300X250'] }),
          slot('c', { sizes: ['0x250'] }),
          slot('d', { status: 'paused' }),
          slot('e', { status: 'archived' }),
          { name: 'no id', sizes: ['1x1'] },
          slot('f', { sizes: [] }),
          'text',
        ],
        null,
      ),
    });
    const r = await walkInventory(f.fetch);
    expect(r.complete).toBe(true);
    expect(r.slots.map((s) => [s.inventory_id, s.status, s.name])).toEqual([
      ['a', 'active', 'a'],
      ['e', 'archived', 'e'],
    ]);
    expect(r.problems).toHaveLength(7);
    expect(r.problems.join('\n')).toMatch(/duplicate inventory_id "a"/);
    expect(r.problems.join('\n')).toMatch(/"300X250" is not WIDTHxHEIGHT/);
  });

  it('stops on a failed call or an answer without data', async () => {
    const failed: Outcome = { kind: 'timeout', message: 'GET /inventory: no complete answer' };
    expect(await walkInventory(async () => failed)).toMatchObject({
      complete: false,
      failure: failed,
      pages: 1,
    });
    const noData = await walkInventory(async () => ({
      kind: 'ok',
      status: 200,
      headers: {},
      json: { items: [] },
    }));
    expect(noData.problems).toEqual(['GET /inventory: answer has no data array']);
  });

  it('checkSlot defaults status to active and keeps format', () => {
    expect(checkSlot(slot('x', { format: 'video' }))).toEqual({
      slot: { inventory_id: 'x', name: 'x', sizes: ['300x250'], format: 'video', status: 'active' },
    });
  });
});
