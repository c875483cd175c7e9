import type { Config } from '../../config.ts';
import type { ChangeBus } from '../../db/changes.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import { storedUrl } from '../../lib/stored-url.ts';
import type { ChangeEvents } from '../webhooks/service.ts';
import { Crud, guard } from './crud.ts';
import { EditorialRepository } from './editorial-repository.ts';
import { CatalogImport } from './import.ts';
import {
  brandColumns,
  checkDecimals,
  checkRating,
  checkWindow,
  normaliseGeo,
  offerColumns,
  trackerColumns,
} from './input.ts';
import { type PublishGuard, PublishingService } from './publishing.ts';
import type { ColumnValues } from './rows.ts';
import type {
  BrandInputT,
  OfferInputT,
  OwnerInputT,
  SiteInputT,
  TemplateInputT,
  ToplistInputT,
  TrackerInputT,
} from './schemas.ts';
import type { Brand, Offer, Owner, Site, Template, Toplist } from './types.ts';

type NamedTable = 'product_types' | 'classification_types' | 'offer_types';

/** Filters of the toplist list (admin API query parameters). */
export interface ToplistFilter {
  siteId?: number;
  /** Only these sites' toplists (a person limited to some sites). */
  siteIds?: readonly number[] | undefined;
  templateId?: number;
  geoType?: string;
  geoCode?: string;
}

/**
 * The editorial catalog: owners, sites, templates, brands, offers with their trackers and
 * toplist settings (each a {@link Crud}), named types; plus its two other sub-areas,
 * `publishing` (drafts into immutable editions) and `importer` (bulk upsert from JSON).
 */
export class CatalogService {
  readonly repo: EditorialRepository;
  readonly publishing: PublishingService;
  readonly importer: CatalogImport;

  readonly owners: Crud<Owner, OwnerInputT>;
  readonly sites: Crud<Site, SiteInputT, Partial<SiteInputT>, { siteIds?: readonly number[] | undefined }>;
  readonly templates: Crud<Template, TemplateInputT>;
  readonly brands: Crud<Brand, BrandInputT>;
  readonly offers: Crud<Offer, OfferInputT, Partial<OfferInputT>, { brandId?: number }>;
  readonly toplists: Crud<Toplist, ToplistInputT, Partial<Omit<ToplistInputT, 'siteId'>>, ToplistFilter>;

  constructor(
    private readonly db: Db,
    bus: ChangeBus,
    config: Pick<Config, 'publicUrl'>,
    now: () => Date,
    /** Told of publishes and unpublishes inside their transaction (the webhooks outbox). */
    events?: ChangeEvents,
    /** Asked before each publish (the compliance guard). */
    guard?: PublishGuard,
  ) {
    const repo = new EditorialRepository(db);
    this.repo = repo;
    this.publishing = new PublishingService(db, bus, config, now, events, guard);
    this.importer = new CatalogImport(db);

    this.owners = new Crud({
      entity: 'Owner',
      insert: (i) => repo.insertOwner({ name: i.name, externalId: i.externalId ?? null }),
      update: (id, p) => repo.update('owners', id, p),
      get: (id) => repo.getOwner(id),
      list: (w) => repo.listOwners(w),
    });
    this.sites = new Crud({
      entity: 'Site',
      insert: (i) =>
        repo.insertSite({
          domain: i.domain,
          name: i.name ?? '',
          complianceFallbackUrl: i.complianceFallbackUrl
            ? storedUrl('complianceFallbackUrl', i.complianceFallbackUrl)
            : null,
        }),
      update: async (id, p) => {
        const found = await repo.update('sites', id, {
          ...p,
          complianceFallbackUrl: p.complianceFallbackUrl
            ? storedUrl('complianceFallbackUrl', p.complianceFallbackUrl)
            : p.complianceFallbackUrl,
        });
        if (found && p.trackingBaseUrl !== undefined) await this.publishing.retargetTrackingLinks(id);
        if (found) await bus.publish({ kind: 'site', siteId: id });
        return found;
      },
      get: (id) => repo.getSite(id),
      list: (w, f) => repo.listSites(w, f?.siteIds),
    });
    this.templates = new Crud({
      entity: 'Template',
      insert: (i) => repo.insertTemplate({ ...i, externalId: i.externalId ?? null }),
      update: (id, p) => repo.update('list_templates', id, p),
      get: (id) => repo.getTemplate(id),
      list: (w) => repo.listTemplates(w),
    });
    this.brands = new Crud({
      entity: 'Brand',
      check: checkRating,
      insert: (i) => repo.insertBrand(brandColumns(i) as Required<ColumnValues<'brands'>>),
      // A brand's restrictions are rules: live editions are re-checked as soon as they change.
      update: async (id, p) => {
        const found = await repo.update('brands', id, brandColumns(p));
        if (found && p.restrictedCountries !== undefined) await guard?.rulesChanged();
        return found;
      },
      get: (id) => repo.getBrand(id),
      list: (w) => repo.listBrands(w),
    });
    this.offers = new Crud({
      entity: 'Offer',
      check: checkDecimals,
      // An offer and its trackers are created in one transaction.
      insert: (i) =>
        this.tx(async (r) => {
          const offerId = await r.insertOffer(offerColumns(i) as Required<ColumnValues<'offers'>>);
          for (const [k, t] of (i.trackers ?? []).entries()) {
            await r.insertTracker(
              offerId,
              trackerColumns(t, `trackers.${k}.`) as Required<ColumnValues<'trackers'>>,
            );
          }
          return offerId;
        }),
      update: (id, p) => repo.update('offers', id, offerColumns(p)),
      get: (id) => repo.getOffer(id),
      list: (w, f) => repo.listOffers(w, f?.brandId),
    });
    this.toplists = new Crud({
      entity: 'Toplist',
      insert: (input) => {
        const geo = normaliseGeo(input.geo);
        checkWindow(input.liveFrom ?? null, input.liveUntil ?? null);
        return repo.insertToplist({
          externalId: input.externalId ?? null,
          siteId: input.siteId,
          templateId: input.templateId,
          ownerId: input.ownerId,
          name: input.name,
          slug: input.slug,
          geoType: geo.type,
          geoCode: geo.code,
          geoName: geo.name,
          coveredCountries: geo.coveredCountries,
          currentPeriod: input.currentPeriod ?? '',
          locked: input.locked ?? false,
          liveFrom: input.liveFrom ?? null,
          liveUntil: input.liveUntil ?? null,
        });
      },
      // Changing the publish window takes effect on the live edition at once.
      update: async (id, patch) => {
        const current = await repo.getToplist(id);
        if (!current) return false;
        const geo = patch.geo ? normaliseGeo(patch.geo) : undefined;
        const liveFrom = patch.liveFrom === undefined ? current.liveFrom : patch.liveFrom;
        const liveUntil = patch.liveUntil === undefined ? current.liveUntil : patch.liveUntil;
        checkWindow(liveFrom, liveUntil);
        await repo.update('toplists', id, {
          externalId: patch.externalId,
          templateId: patch.templateId,
          ownerId: patch.ownerId,
          name: patch.name,
          slug: patch.slug,
          geoType: geo?.type,
          geoCode: geo?.code,
          geoName: geo?.name,
          coveredCountries: geo ? geo.coveredCountries : undefined,
          currentPeriod: patch.currentPeriod,
          locked: patch.locked,
          liveFrom: patch.liveFrom,
          liveUntil: patch.liveUntil,
        });
        if (patch.liveFrom !== undefined || patch.liveUntil !== undefined) {
          await bus.publish({ kind: 'site', siteId: current.siteId });
        }
        return true;
      },
      get: (id) => repo.getToplist(id),
      list: (w, f) => repo.listToplists(w, f ?? {}),
    });
  }

  /** Runs `fn` in a transaction, turning constraint violations into client errors. */
  private tx<T>(fn: (repo: EditorialRepository, q: Queryable) => Promise<T>): Promise<T> {
    return guard(this.db.tx((q) => fn(this.repo.with(q), q)));
  }

  /** Whether a site with this id exists (tokens and tracking settings belong to sites). */
  siteExists(id: number): Promise<boolean> {
    return this.repo.exists('sites', id);
  }

  /* Named types */

  createNamedType(table: NamedTable, name: string) {
    return guard(this.repo.insertNamedType(table, name));
  }

  listNamedTypes(table: NamedTable) {
    return this.repo.listNamedTypes(table);
  }

  /* Trackers of an offer */

  async addTracker(offerId: number, input: TrackerInputT): Promise<Offer> {
    if (!(await this.repo.exists('offers', offerId))) throw notFound('Offer');
    await guard(
      this.repo.insertTracker(offerId, trackerColumns(input) as Required<ColumnValues<'trackers'>>),
    );
    return (await this.repo.getOffer(offerId))!;
  }

  async updateTracker(offerId: number, trackerId: number, patch: Partial<TrackerInputT>): Promise<Offer> {
    if (!(await this.repo.trackerBelongsTo(offerId, trackerId))) throw notFound('Tracker');
    await guard(this.repo.update('trackers', trackerId, trackerColumns(patch)));
    return (await this.repo.getOffer(offerId))!;
  }

  async deleteTracker(offerId: number, trackerId: number): Promise<Offer> {
    if (!(await guard(this.repo.deleteTracker(offerId, trackerId)))) throw notFound('Tracker');
    return (await this.repo.getOffer(offerId))!;
  }

  /** Fails with a 422 on `field` unless every tracker id exists. */
  async assertTrackersExist(ids: readonly number[], field: string): Promise<void> {
    const found = new Set(await this.repo.existingTrackerIds(ids));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw invalidField(field, `tracker ${missing} does not exist`);
  }
}
