import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseImportDocument } from '../src/modules/catalog/import-schema.ts';
import { DB_KIND, type TestApp, testApp } from './helpers.ts';

const small = () =>
  JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'import-small.json'), 'utf8'));

describe(`catalog bulk import (${DB_KIND})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());
  const count = async (table: string) =>
    (await t.db.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n;

  it('upserts on external ids: a second run updates in place and creates nothing', async () => {
    const catalog = t.app.services.catalog;
    await catalog.importer.importCatalog(parseImportDocument(small()));
    const doc = small();
    doc.brands[0].name = 'Renamed Brand';
    doc.offers[0].trackers[0].landingUrl = 'https://new.example/v2?c={click_id}';
    const summary = await catalog.importer.importCatalog(parseImportDocument(doc));
    expect(summary.brands).toEqual({ created: 0, updated: 1 });
    expect(await count('brands')).toBe(1);
    expect(await count('offers')).toBe(1);
    expect(await count('trackers')).toBe(1);
    const [brand] = await t.db.query<{ name: string }>('SELECT name FROM brands');
    expect(brand!.name).toBe('Renamed Brand');
    const [tracker] = await t.db.query<{ landing_url: string }>('SELECT landing_url FROM trackers');
    expect(tracker!.landing_url).toBe('https://new.example/v2?c={click_id}');
  });

  it('writes nothing when a later row fails', async () => {
    const doc = small();
    doc.brands.push({ ...doc.brands[0], externalId: 'brand-second', slug: 'brand-second' });
    doc.offers.push({ ...doc.offers[0], externalId: 'offer-orphan', brand: 'no-such-brand', trackers: [] });
    const before = await count('brands');
    await expect(
      t.app.services.catalog.importer.importCatalog(parseImportDocument(doc)),
    ).rejects.toMatchObject({
      status: 422,
      details: { field: 'offers.1.brand' },
    });
    expect(await count('brands')).toBe(before);
    expect(await count('offers')).toBe(1);
  });

  it.each([
    [{ brands: [{}] }, 'brands.0'],
    [{ offers: 'x' }, 'offers'],
    [{ unknown: [] }, 'unknown'],
  ])('rejects malformed documents naming the field (%j)', (doc, field) => {
    expect(() => parseImportDocument(doc)).toThrow(expect.objectContaining({ status: 422 }));
    try {
      parseImportDocument(doc);
    } catch (e) {
      expect((e as { details: { field: string } }).details.field.startsWith(field)).toBe(true);
    }
  });
});
