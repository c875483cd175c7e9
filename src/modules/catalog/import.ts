import type { Db } from '../../db/index.ts';
import { invalidField } from '../../lib/errors.ts';
import { guard } from './crud.ts';
import { ImportRepository } from './import-repository.ts';
import type { ImportDocumentT } from './import-schema.ts';
import { brandColumns, checkDecimals, checkRating, offerColumns, trackerColumns } from './input.ts';
import type { ColumnValues } from './rows.ts';

export interface ImportProgress {
  section: string;
  done: number;
  total: number;
}

/** Rows created and updated per section of an import. */
export type ImportSummary = Partial<
  Record<'owners' | 'templates' | 'brands' | 'offers', { created: number; updated: number }>
>;

/** Bulk import of owners, templates, brands and offers (with trackers) from a JSON document. */
export class CatalogImport {
  private readonly repo: ImportRepository;

  constructor(private readonly db: Db) {
    this.repo = new ImportRepository(db);
  }

  /** Runs `fn` in a transaction, turning constraint violations into client errors. */
  private tx<T>(fn: (repo: ImportRepository) => Promise<T>): Promise<T> {
    return guard(this.db.tx((q) => fn(this.repo.with(q))));
  }

  /**
   * Upserts a validated import document in one transaction, matching rows on `externalId`:
   * a second run of the same file updates rows in place and creates nothing. Offers name
   * their brand by external id (from this file or already in the catalog).
   */
  async importCatalog(
    doc: ImportDocumentT,
    progress: (p: ImportProgress) => void = () => {},
  ): Promise<ImportSummary> {
    const summary: ImportSummary = {};
    const total =
      (doc.owners?.length ?? 0) +
      (doc.templates?.length ?? 0) +
      (doc.brands?.length ?? 0) +
      (doc.offers?.length ?? 0);
    let done = 0;
    const step = (section: keyof ImportSummary, created: boolean) => {
      const s = summary[section] ?? { created: 0, updated: 0 };
      summary[section] = s;
      if (created) s.created++;
      else s.updated++;
      done++;
      if (done % 500 === 0 || done === total) progress({ section, done, total });
    };
    // Finds the row by external id: updates it with `values`, or creates it with `insert`.
    const upsert = async <T extends 'owners' | 'list_templates' | 'brands' | 'offers'>(
      repo: ImportRepository,
      table: T,
      externalId: string,
      values: ColumnValues<T>,
      insert: () => Promise<number>,
    ): Promise<{ id: number; created: boolean }> => {
      const id = await repo.findIdByExternalId(table, externalId);
      if (id === undefined) return { id: await insert(), created: true };
      await repo.update(table, id, values);
      return { id, created: false };
    };

    await this.tx(async (repo) => {
      for (const o of doc.owners ?? []) {
        const r = await upsert(repo, 'owners', o.externalId, { name: o.name }, () => repo.insertOwner(o));
        step('owners', r.created);
      }
      for (const t of doc.templates ?? []) {
        const values = {
          name: t.name,
          externalId: t.externalId,
          productTypeId: await repo.ensureNamedType('product_types', t.productType),
          classificationTypeId: await repo.ensureNamedType('classification_types', t.classificationType),
        };
        const r = await upsert(repo, 'list_templates', t.externalId, values, () =>
          repo.insertTemplate(values),
        );
        step('templates', r.created);
      }
      for (const [i, b] of (doc.brands ?? []).entries()) {
        checkRating(b, `brands.${i}.`);
        const columns = brandColumns(b, `brands.${i}.`);
        const r = await upsert(repo, 'brands', b.externalId, columns, () =>
          repo.insertBrand(columns as Required<ColumnValues<'brands'>>),
        );
        step('brands', r.created);
      }
      for (const [i, o] of (doc.offers ?? []).entries()) {
        checkDecimals(o, `offers.${i}.`);
        const brandId = await repo.findIdByExternalId('brands', o.brand);
        if (brandId === undefined)
          throw invalidField(`offers.${i}.brand`, `no brand with externalId "${o.brand}"`);
        const { brand: _b, offerType, trackers, ...rest } = o;
        const columns = offerColumns({
          ...rest,
          brandId,
          offerTypeId: await repo.ensureNamedType('offer_types', offerType),
        });
        const r = await upsert(repo, 'offers', o.externalId, columns, () =>
          repo.insertOffer(columns as Required<ColumnValues<'offers'>>),
        );
        for (const [k, t] of (trackers ?? []).entries()) {
          const trackerId = await repo.findIdByExternalId('trackers', t.externalId);
          const tcols = trackerColumns(t, `offers.${i}.trackers.${k}.`);
          if (trackerId === undefined) {
            await repo.insertTracker(r.id, tcols as Required<ColumnValues<'trackers'>>);
          } else if (await repo.trackerBelongsTo(r.id, trackerId)) {
            await repo.update('trackers', trackerId, tcols);
          } else {
            throw invalidField(
              `offers.${i}.trackers.${k}.externalId`,
              'belongs to a tracker of another offer',
            );
          }
        }
        step('offers', r.created);
      }
    });
    return summary;
  }
}
