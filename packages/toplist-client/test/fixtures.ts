import type { Geo, Toplist } from '../src/index.ts';

/** A complete, schema-valid toplist of template `templateId` with the given geo and no items. */
export function toplist(id: number, geo: Geo, templateId = 7): Toplist {
  return {
    type: 'toplist',
    id,
    name: `List ${id}`,
    status: 'published',
    locked: false,
    version: '1',
    owner: { id: 1, name: 'Editorial' },
    createdAt: '2026-11-01T10:00:00+00:00',
    updatedAt: '2026-11-02T10:00:00+00:00',
    publishedAt: '2026-11-02T10:00:00+00:00',
    template: {
      type: 'listTemplate',
      id: templateId,
      name: 'Best Casinos',
      productTypeId: 1,
      productType: 'Casino',
      listClassificationTypeId: 1,
      listClassificationType: 'Real money',
    },
    site: { id: 1, domain: 'casinoguide.example' },
    geo,
    slug: `list-${id}`,
    currentPeriod: 'November 2026',
    shortcode: null,
    items: [],
  };
}

export const country = (code: string): Geo => ({
  geo_type: 'country',
  name: code,
  code,
  coveredCountries: null,
});
export const market = (code: string, covered: string[]): Geo => ({
  geo_type: 'market',
  name: code,
  code,
  coveredCountries: covered,
});
export const global: Geo = { geo_type: 'global', name: 'Worldwide', code: 'ROW', coveredCountries: null };
