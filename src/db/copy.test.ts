import { describe, expect, it } from 'vitest';
import { foreignKeyOrder } from './copy.ts';
import type { ForeignKey } from './copy-repository.ts';

const fk = (table: string, references: string): ForeignKey => ({
  table,
  references,
  name: `${table}_${references}_fkey`,
  definition: `FOREIGN KEY (x) REFERENCES ${references}(id)`,
});

describe('foreignKeyOrder', () => {
  it('puts referenced tables first and defers nothing when no cycle exists', () => {
    const r = foreignKeyOrder(
      ['offers', 'brands', 'trackers'],
      [fk('trackers', 'offers'), fk('offers', 'brands')],
    );
    expect(r).toEqual({ order: ['brands', 'offers', 'trackers'], deferred: [] });
  });

  it('defers a self-reference and one key of each cycle, and still orders the rest', () => {
    const keys = [
      fk('admin_tokens', 'admin_tokens'),
      fk('editions', 'toplists'),
      fk('toplists', 'editions'),
      fk('toplists', 'sites'),
      fk('toplist_items', 'toplists'),
    ];
    const r = foreignKeyOrder(['toplist_items', 'toplists', 'editions', 'sites', 'admin_tokens'], keys);
    expect(r.order).toEqual(['sites', 'admin_tokens', 'editions', 'toplists', 'toplist_items']);
    expect(r.deferred.map((k) => k.name)).toEqual([
      'editions_toplists_fkey',
      'admin_tokens_admin_tokens_fkey',
    ]);
  });

  it('ignores keys to tables outside the copy', () => {
    expect(foreignKeyOrder(['a'], [fk('a', 'elsewhere')])).toEqual({ order: ['a'], deferred: [] });
  });
});
