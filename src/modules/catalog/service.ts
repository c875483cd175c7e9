import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { ChangeBus } from '../../db/changes.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, conflict, invalidField, notFound } from '../../lib/errors.ts';
import { countryName, GLOBAL_CODE, isCountryCode, MARKET_CODE } from '../../lib/geo.ts';
import { type PageMeta, pageMeta, pageWindow } from '../../lib/paging.ts';
import type { ChangeEvents } from '../webhooks/service.ts';
import type { ToplistChange } from '../webhooks/types.ts';
import { renderEdition, retargetLinks } from './edition-render.ts';
import type { ImportDocumentT } from './import-schema.ts';
import { CatalogRepository, type ColumnValues } from './repository.ts';
import type {
  BrandInputT,
  GeoInputT,
  ItemInputT,
  OfferInputT,
  OwnerInputT,
  SiteInputT,
  TemplateInputT,
  ToplistInputT,
  TrackerInputT,
} from './schemas.ts';
import type {
  Brand,
  EditionMeta,
  Offer,
  Owner,
  ResolvedTrackingLink,
  Site,
  Template,
  Toplist,
} from './types.ts';

export interface ImportProgress {
  section: string;
  done: number;
  total: number;
}

/** Rows created and updated per section of an import. */
export type ImportSummary = Partial<
  Record<'owners' | 'templates' | 'brands' | 'offers', { created: number; updated: number }>
>;

export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

type NamedTable = 'product_types' | 'classification_types' | 'offer_types';

const FIELD_BY_CONSTRAINT: Record<string, string> = {
  toplists_site_id_slug_key: 'slug',
  toplists_site_id_template_id_geo_type_geo_code_key: 'geo',
  toplists_check: 'liveUntil',
};

/** A new public tracking-link slug: 12 URL-safe characters (72 random bits). */
const newLinkSlug = () => randomBytes(9).toString('base64url');

/**
 * The editorial catalog: sites, owners, templates, brands, offers, trackers,
 * toplists with their drafts, and publishing drafts into immutable editions.
 */
export class CatalogService {
  readonly repo: CatalogRepository;

  constructor(
    private readonly db: Db,
    private readonly bus: ChangeBus,
    private readonly config: Pick<Config, 'publicUrl'>,
    private readonly now: () => Date,
    /** Told of publishes and unpublishes inside their transaction (the webhooks outbox). */
    private readonly events?: ChangeEvents,
  ) {
    this.repo = new CatalogRepository(db);
  }

  /** Runs `fn` in a transaction, turning constraint violations into client errors. */
  private async tx<T>(fn: (repo: CatalogRepository, q: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.db.tx((q) => fn(this.repo.with(q), q));
    } catch (err) {
      throw fromDbError(err, FIELD_BY_CONSTRAINT) ?? err;
    }
  }

  private async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      throw fromDbError(err, FIELD_BY_CONSTRAINT) ?? err;
    }
  }

  private async page<T>(
    page: number | undefined,
    perPage: number | undefined,
    load: (w: { limit: number; offset: number }) => Promise<{ rows: T[]; total: number }>,
  ): Promise<Page<T>> {
    const p = page ?? 1;
    const pp = perPage ?? 15;
    const { rows, total } = await load(pageWindow(p, pp));
    return { data: rows, meta: pageMeta(total, p, pp) };
  }

  /* Owners */

  async createOwner(input: OwnerInputT): Promise<Owner> {
    const id = await this.guard(
      this.repo.insertOwner({ name: input.name, externalId: input.externalId ?? null }),
    );
    return (await this.repo.getOwner(id))!;
  }

  async updateOwner(id: number, patch: Partial<OwnerInputT>): Promise<Owner> {
    if (!(await this.guard(this.repo.update('owners', id, patch)))) throw notFound('Owner');
    return (await this.repo.getOwner(id))!;
  }

  async getOwner(id: number): Promise<Owner> {
    return (await this.repo.getOwner(id)) ?? Promise.reject(notFound('Owner'));
  }

  listOwners(page?: number, perPage?: number): Promise<Page<Owner>> {
    return this.page(page, perPage, (w) => this.repo.listOwners(w));
  }

  /* Sites */

  async createSite(input: SiteInputT): Promise<Site> {
    const id = await this.guard(this.repo.insertSite({ domain: input.domain, name: input.name ?? '' }));
    return (await this.repo.getSite(id))!;
  }

  async updateSite(id: number, patch: Partial<SiteInputT>): Promise<Site> {
    if (!(await this.guard(this.repo.update('sites', id, patch)))) throw notFound('Site');
    if (patch.trackingBaseUrl !== undefined) await this.retargetTrackingLinks(id);
    await this.bus.publish({ kind: 'site', siteId: id });
    return (await this.repo.getSite(id))!;
  }

  async getSite(id: number): Promise<Site> {
    return (await this.repo.getSite(id)) ?? Promise.reject(notFound('Site'));
  }

  listSites(page?: number, perPage?: number): Promise<Page<Site>> {
    return this.page(page, perPage, (w) => this.repo.listSites(w));
  }

  /** Whether a site with this id exists (tokens and tracking settings belong to sites). */
  siteExists(id: number): Promise<boolean> {
    return this.repo.exists('sites', id);
  }

  /* Named types */

  createNamedType(table: NamedTable, name: string) {
    return this.guard(this.repo.insertNamedType(table, name));
  }

  listNamedTypes(table: NamedTable) {
    return this.repo.listNamedTypes(table);
  }

  /* Templates */

  async createTemplate(input: TemplateInputT): Promise<Template> {
    const id = await this.guard(this.repo.insertTemplate({ ...input, externalId: input.externalId ?? null }));
    return (await this.repo.getTemplate(id))!;
  }

  async updateTemplate(id: number, patch: Partial<TemplateInputT>): Promise<Template> {
    if (!(await this.guard(this.repo.update('list_templates', id, patch)))) throw notFound('Template');
    return (await this.repo.getTemplate(id))!;
  }

  async getTemplate(id: number): Promise<Template> {
    return (await this.repo.getTemplate(id)) ?? Promise.reject(notFound('Template'));
  }

  listTemplates(page?: number, perPage?: number): Promise<Page<Template>> {
    return this.page(page, perPage, (w) => this.repo.listTemplates(w));
  }

  /* Brands */

  async createBrand(input: BrandInputT): Promise<Brand> {
    checkRating(input);
    const id = await this.guard(
      this.repo.insertBrand(brandColumns(input) as Required<ColumnValues<'brands'>>),
    );
    return (await this.repo.getBrand(id))!;
  }

  async updateBrand(id: number, patch: Partial<BrandInputT>): Promise<Brand> {
    checkRating(patch);
    if (!(await this.guard(this.repo.update('brands', id, brandColumns(patch))))) throw notFound('Brand');
    return (await this.repo.getBrand(id))!;
  }

  async getBrand(id: number): Promise<Brand> {
    return (await this.repo.getBrand(id)) ?? Promise.reject(notFound('Brand'));
  }

  listBrands(page?: number, perPage?: number): Promise<Page<Brand>> {
    return this.page(page, perPage, (w) => this.repo.listBrands(w));
  }

  /* Offers and trackers */

  /** Creates an offer with its trackers in one transaction. */
  async createOffer(input: OfferInputT): Promise<Offer> {
    checkDecimals(input);
    const id = await this.tx(async (repo) => {
      const offerId = await repo.insertOffer(offerColumns(input) as Required<ColumnValues<'offers'>>);
      for (const t of input.trackers ?? []) {
        await repo.insertTracker(offerId, trackerColumns(t) as Required<ColumnValues<'trackers'>>);
      }
      return offerId;
    });
    return (await this.repo.getOffer(id))!;
  }

  async updateOffer(id: number, patch: Partial<OfferInputT>): Promise<Offer> {
    checkDecimals(patch);
    if (!(await this.guard(this.repo.update('offers', id, offerColumns(patch))))) throw notFound('Offer');
    return (await this.repo.getOffer(id))!;
  }

  async getOffer(id: number): Promise<Offer> {
    return (await this.repo.getOffer(id)) ?? Promise.reject(notFound('Offer'));
  }

  listOffers(page?: number, perPage?: number, brandId?: number): Promise<Page<Offer>> {
    return this.page(page, perPage, (w) => this.repo.listOffers(w, brandId));
  }

  async addTracker(offerId: number, input: TrackerInputT): Promise<Offer> {
    if (!(await this.repo.exists('offers', offerId))) throw notFound('Offer');
    await this.guard(
      this.repo.insertTracker(offerId, trackerColumns(input) as Required<ColumnValues<'trackers'>>),
    );
    return (await this.repo.getOffer(offerId))!;
  }

  async updateTracker(offerId: number, trackerId: number, patch: Partial<TrackerInputT>): Promise<Offer> {
    if (!(await this.repo.trackerBelongsTo(offerId, trackerId))) throw notFound('Tracker');
    await this.guard(this.repo.update('trackers', trackerId, trackerColumns(patch)));
    return (await this.repo.getOffer(offerId))!;
  }

  async deleteTracker(offerId: number, trackerId: number): Promise<Offer> {
    if (!(await this.guard(this.repo.deleteTracker(offerId, trackerId)))) throw notFound('Tracker');
    return (await this.repo.getOffer(offerId))!;
  }

  /* Toplists */

  async createToplist(input: ToplistInputT): Promise<Toplist> {
    const geo = normaliseGeo(input.geo);
    checkWindow(input.liveFrom ?? null, input.liveUntil ?? null);
    const id = await this.guard(
      this.repo.insertToplist({
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
      }),
    );
    return (await this.repo.getToplist(id))!;
  }

  /** Updates toplist settings. Changing the publish window takes effect on the live edition at once. */
  async updateToplist(id: number, patch: Partial<Omit<ToplistInputT, 'siteId'>>): Promise<Toplist> {
    const current = await this.getToplist(id);
    const geo = patch.geo ? normaliseGeo(patch.geo) : undefined;
    const liveFrom = patch.liveFrom === undefined ? current.liveFrom : patch.liveFrom;
    const liveUntil = patch.liveUntil === undefined ? current.liveUntil : patch.liveUntil;
    checkWindow(liveFrom, liveUntil);
    await this.guard(
      this.repo.update('toplists', id, {
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
      }),
    );
    if (patch.liveFrom !== undefined || patch.liveUntil !== undefined) {
      await this.bus.publish({ kind: 'site', siteId: current.siteId });
    }
    return (await this.repo.getToplist(id))!;
  }

  async getToplist(id: number): Promise<Toplist> {
    return (await this.repo.getToplist(id)) ?? Promise.reject(notFound('Toplist'));
  }

  listToplists(
    f: { siteId?: number; templateId?: number; geoType?: string; geoCode?: string },
    page?: number,
    perPage?: number,
  ): Promise<Page<Toplist>> {
    return this.page(page, perPage, (w) => this.repo.listToplists(w, f));
  }

  /**
   * Replaces a toplist's draft items. Items carrying an `id` keep it (so the wire item id is
   * stable across editions); the others are new. A locked toplist refuses edits.
   */
  async replaceItems(toplistId: number, items: ItemInputT[]): Promise<Toplist> {
    const seen = new Set<number>();
    for (const [i, it] of items.entries()) {
      if (seen.has(it.position))
        throw invalidField(`items.${i}.position`, `position ${it.position} is used twice`);
      seen.add(it.position);
    }
    await this.tx(async (repo) => {
      if (!(await repo.lockToplist(toplistId))) throw notFound('Toplist');
      const t = await repo.getToplist(toplistId);
      if (t!.locked)
        throw conflict('Toplist is locked: unlock it (PATCH locked=false) before editing its items');
      const ownIds = await repo.itemIdsOf(toplistId);
      for (const [i, it] of items.entries()) {
        if (it.id !== undefined && !ownIds.has(it.id))
          throw invalidField(`items.${i}.id`, `item ${it.id} does not belong to this toplist`);
        const brandOfOffer = await repo.offerBrand(it.offerId);
        if (brandOfOffer === undefined)
          throw invalidField(`items.${i}.offerId`, `offer ${it.offerId} does not exist`);
        if (brandOfOffer !== it.brandId)
          throw invalidField(
            `items.${i}.offerId`,
            `offer ${it.offerId} belongs to brand ${brandOfOffer}, not ${it.brandId}`,
          );
      }
      await repo.replaceItems(
        toplistId,
        items.map((it) => ({ ...it, dealId: it.dealId ?? 0, isLocked: it.isLocked ?? false })),
      );
    });
    return this.getToplist(toplistId);
  }

  /**
   * Freezes the draft into a new immutable edition (version = previous + 1), renders its wire
   * document once, and makes it the live edition. Caches everywhere drop the site's entry
   * after the commit.
   */
  async publish(
    toplistId: number,
    opts: { by?: number | null; liveFrom?: string | null; liveUntil?: string | null } = {},
  ): Promise<{ toplist: Toplist; version: string; publishedAt: string }> {
    const publishedAt = this.now();
    const result = await this.tx(async (repo, q) => {
      if (!(await repo.lockToplist(toplistId))) throw notFound('Toplist');
      if (opts.liveFrom !== undefined || opts.liveUntil !== undefined) {
        const current = (await repo.getToplist(toplistId))!;
        const liveFrom = opts.liveFrom === undefined ? current.liveFrom : opts.liveFrom;
        const liveUntil = opts.liveUntil === undefined ? current.liveUntil : opts.liveUntil;
        checkWindow(liveFrom, liveUntil);
        await repo.update('toplists', toplistId, { liveFrom, liveUntil });
      }
      const snapshot = (await repo.editionSnapshot(toplistId))!;
      const t = snapshot.toplist;
      const wanted = t.items.flatMap((i) =>
        (snapshot.offers.get(i.offerId)?.trackers ?? []).map((tr) => ({
          trackerId: tr.id,
          position: i.position,
          slug: newLinkSlug(),
        })),
      );
      const linkSlugs = await repo.ensureTrackingLinks(t.siteId, t.id, wanted);
      const version = await repo.nextVersion(toplistId);
      const trackingBase = snapshot.siteTrackingBase ?? this.config.publicUrl;
      const document = JSON.stringify(
        renderEdition({ snapshot, version, publishedAt, linkSlugs, publicUrl: trackingBase }),
      );
      const editionId = await repo.insertEdition({
        toplistId,
        version,
        document,
        publishedAt,
        publishedBy: opts.by ?? null,
        trackingBase,
      });
      await repo.setLiveEdition(toplistId, editionId, publishedAt);
      await this.events?.record(q, toplistChange('toplist.published', t, String(version), publishedAt));
      return { siteId: t.siteId, version };
    });
    this.events?.committed();
    await this.bus.publish({ kind: 'site', siteId: result.siteId });
    return {
      toplist: await this.getToplist(toplistId),
      version: String(result.version),
      publishedAt: publishedAt.toISOString(),
    };
  }

  /**
   * Re-renders the tracker links of live editions whose stored document was rendered with another
   * base than their site's tracking base (the site setting, else this server's public URL): the
   * stored bytes change, reads keep serving stored bytes, and every process drops its cache of
   * the sites touched. Runs on a site's setting change and at every start (a server moved to
   * another host or port). Returns the number of sites touched.
   */
  async retargetTrackingLinks(siteId?: number): Promise<number> {
    const touched = await this.tx(async (repo) => {
      const sites = new Set<number>();
      for (const e of await repo.staleLiveEditions(siteId, this.config.publicUrl)) {
        await repo.rerenderEdition(e.editionId, retargetLinks(e.document, e.base), e.base);
        sites.add(e.siteId);
      }
      return sites;
    });
    for (const s of touched) await this.bus.publish({ kind: 'site', siteId: s });
    return touched.size;
  }

  /** The tracking link behind a `/go/{slug}`; undefined when no such link is registered. */
  resolveTrackingLink(slug: string): Promise<ResolvedTrackingLink | undefined> {
    return this.repo.resolveTrackingLink(slug);
  }

  /** Fails with a 422 on `field` unless every tracker id exists. */
  async assertTrackersExist(ids: readonly number[], field: string): Promise<void> {
    const found = new Set(await this.repo.existingTrackerIds(ids));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw invalidField(field, `tracker ${missing} does not exist`);
  }

  /** Takes the live edition down: the toplist disappears from the list and 404s. Idempotent. */
  async unpublish(toplistId: number): Promise<Toplist> {
    const t = await this.tx(async (repo, q) => {
      if (!(await repo.lockToplist(toplistId))) throw notFound('Toplist');
      const current = (await repo.getToplist(toplistId))!;
      if (current.liveVersion === null) return current;
      await repo.setLiveEdition(toplistId, null, null);
      await this.events?.record(
        q,
        toplistChange('toplist.unpublished', current, current.liveVersion, this.now()),
      );
      return current;
    });
    this.events?.committed();
    await this.bus.publish({ kind: 'site', siteId: t.siteId });
    return this.getToplist(toplistId);
  }

  /** Publish windows of live editions that opened or closed in (since, until], as change events. */
  async windowChanges(since: Date, until: Date): Promise<ToplistChange[]> {
    const out: ToplistChange[] = [];
    for (const t of await this.repo.windowBoundaries(since, until, 1000)) {
      for (const [type, at] of [
        ['toplist.window_opened', t.liveFrom],
        ['toplist.window_closed', t.liveUntil],
      ] as const) {
        const ms = at ? Date.parse(at) : Number.NaN;
        if (ms > since.getTime() && ms <= until.getTime())
          out.push(toplistChange(type, t, t.liveVersion!, new Date(ms)));
      }
    }
    return out;
  }

  async listEditions(toplistId: number): Promise<EditionMeta[]> {
    await this.getToplist(toplistId);
    return this.repo.listEditions(toplistId);
  }

  /** The stored wire document of one edition, parsed. */
  async getEdition(toplistId: number, version: number): Promise<unknown> {
    const doc = await this.repo.getEditionDocument(toplistId, version);
    if (doc === undefined) throw notFound('Edition');
    return JSON.parse(doc);
  }
  /* Bulk import */

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
    const upsert = async (
      repo: CatalogRepository,
      table: 'owners' | 'list_templates' | 'brands' | 'offers',
      externalId: string,
      update: (id: number) => Promise<unknown>,
      insert: () => Promise<number>,
    ): Promise<{ id: number; created: boolean }> => {
      const id = await repo.findIdByExternalId(table, externalId);
      if (id === undefined) return { id: await insert(), created: true };
      await update(id);
      return { id, created: false };
    };

    await this.tx(async (repo) => {
      for (const o of doc.owners ?? []) {
        const r = await upsert(
          repo,
          'owners',
          o.externalId,
          (id) => repo.update('owners', id, { name: o.name }),
          () => repo.insertOwner(o),
        );
        step('owners', r.created);
      }
      for (const t of doc.templates ?? []) {
        const values = {
          name: t.name,
          externalId: t.externalId,
          productTypeId: await repo.ensureNamedType('product_types', t.productType),
          classificationTypeId: await repo.ensureNamedType('classification_types', t.classificationType),
        };
        const r = await upsert(
          repo,
          'list_templates',
          t.externalId,
          (id) => repo.update('list_templates', id, values),
          () => repo.insertTemplate(values),
        );
        step('templates', r.created);
      }
      for (const [i, b] of (doc.brands ?? []).entries()) {
        checkRating(b, `brands.${i}.`);
        const columns = brandColumns(b);
        const r = await upsert(
          repo,
          'brands',
          b.externalId,
          (id) => repo.update('brands', id, columns),
          () => repo.insertBrand(columns as Required<ColumnValues<'brands'>>),
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
        const r = await upsert(
          repo,
          'offers',
          o.externalId,
          (id) => repo.update('offers', id, columns),
          () => repo.insertOffer(columns as Required<ColumnValues<'offers'>>),
        );
        for (const [k, t] of (trackers ?? []).entries()) {
          const trackerId = await repo.findIdByExternalId('trackers', t.externalId);
          const tcols = trackerColumns(t);
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

/** A toplist change as the webhooks outbox records it (names the toplist, never its content). */
function toplistChange(type: ToplistChange['type'], t: Toplist, version: string, at: Date): ToplistChange {
  return {
    type,
    toplistId: t.id,
    siteId: t.siteId,
    slug: t.slug,
    templateId: t.templateId,
    geo: { geo_type: t.geo.type, code: t.geo.code },
    version,
    liveFrom: t.liveFrom ? new Date(t.liveFrom) : null,
    liveUntil: t.liveUntil ? new Date(t.liveUntil) : null,
    occurredAt: at,
  };
}

/* Input → column mapping and validation that JSON schema cannot express. */

function brandColumns(b: Partial<BrandInputT>): ColumnValues<'brands'> {
  return {
    externalId: b.externalId,
    name: b.name,
    slug: b.slug,
    rating: b.rating,
    logoRectangular: b.logo?.rectangular,
    logoSquare: b.logo?.square,
    logoBackgroundColor: b.logo?.backgroundColor,
    licenses: b.licenses,
    paymentMethods: b.paymentMethods,
    restrictedCountries: b.restrictedCountries,
    classificationTypes: b.classificationTypes,
    languagesWebsite: b.languages?.website,
    languagesSupport: b.languages?.support,
    languagesLivechat: b.languages?.livechat,
  };
}

function offerColumns(o: Partial<OfferInputT>): ColumnValues<'offers'> {
  return {
    externalId: o.externalId,
    brandId: o.brandId,
    offerTypeId: o.offerTypeId,
    offerText: o.offerText,
    currencies: o.currencies,
    hasFreeSpins: o.hasFreeSpins,
    bonusWageringRequirement: o.bonusWageringRequirement,
    bonusExpiryDate: o.bonusExpiryDate,
    bonusCode: o.bonusCode,
    minimumDeposit: o.minimumDeposit,
    freeTickets: o.freeTickets,
    maxBonusAmount: o.maxBonusAmount,
    maxPayout: o.maxPayout,
    minimumOdds: o.minimumOdds,
    freeBetValue: o.freeBetValue,
    tournamentTicketValue: o.tournamentTicketValue,
    rakebackPercentage: o.rakebackPercentage,
    isStickyBonus: o.isStickyBonus,
    stakeReturned: o.stakeReturned,
    betType: o.betType,
    geoCountries: o.geos?.countries,
    geoMarkets: o.geos?.markets,
  };
}

function trackerColumns(t: Partial<TrackerInputT>): ColumnValues<'trackers'> {
  return {
    externalId: t.externalId,
    campaignName: t.campaignName,
    landingUrl: t.landingUrl,
    tcLink: t.tcLink,
    pageType: t.pageType,
    geoCountries: t.geos?.countries,
    geoMarkets: t.geos?.markets,
  };
}

/** A percentage cannot exceed 100; the schema already limits digits and decimals of every decimal. */
/** JSON Schema's multipleOf fails on binary fractions (8.35 % 0.01 ≠ 0), so the two-decimal rule lives here. */
function checkRating(b: Partial<BrandInputT>, prefix = ''): void {
  if (b.rating !== undefined && Number(b.rating.toFixed(2)) !== b.rating) {
    throw invalidField(`${prefix}rating`, 'must have at most two decimals');
  }
}

function checkDecimals(o: Partial<OfferInputT>, prefix = ''): void {
  const v = o.rakebackPercentage;
  if (typeof v === 'string' && Number(v) > 100)
    throw invalidField(`${prefix}rakebackPercentage`, 'must be at most 100');
}

function checkWindow(from: string | null | undefined, until: string | null | undefined): void {
  if (from && until && Date.parse(until) <= Date.parse(from)) {
    throw invalidField('liveUntil', 'must be later than liveFrom');
  }
}

/** Applies the geo rules of the design: country / market / global. */
export function normaliseGeo(g: GeoInputT): {
  type: GeoInputT['type'];
  code: string;
  name: string;
  coveredCountries: string[] | null;
} {
  switch (g.type) {
    case 'country': {
      if (!isCountryCode(g.code))
        throw invalidField('geo.code', `${JSON.stringify(g.code)} is not an ISO 3166-1 alpha-2 country code`);
      if (g.coveredCountries?.length)
        throw invalidField('geo.coveredCountries', 'must be null for a country toplist');
      return { type: 'country', code: g.code, name: g.name ?? countryName(g.code)!, coveredCountries: null };
    }
    case 'market': {
      if (!MARKET_CODE.test(g.code))
        throw invalidField('geo.code', 'a market code is 2-32 uppercase letters, digits or _ (e.g. NORDICS)');
      if (!g.coveredCountries?.length)
        throw invalidField('geo.coveredCountries', 'a market must list the countries it covers');
      for (const [i, c] of g.coveredCountries.entries()) {
        if (!isCountryCode(c))
          throw invalidField(
            `geo.coveredCountries.${i}`,
            `${JSON.stringify(c)} is not an ISO 3166-1 alpha-2 country code`,
          );
      }
      return {
        type: 'market',
        code: g.code,
        name: g.name ?? g.code,
        coveredCountries: [...g.coveredCountries],
      };
    }
    case 'global': {
      if (g.code !== GLOBAL_CODE)
        throw invalidField('geo.code', `a global toplist has the code ${GLOBAL_CODE}`);
      if (g.coveredCountries?.length)
        throw invalidField('geo.coveredCountries', 'must be null for a global toplist');
      return { type: 'global', code: GLOBAL_CODE, name: g.name ?? 'Rest of World', coveredCountries: null };
    }
    default:
      throw new AppError('validation_failed', 'geo.type must be country, market or global', {
        field: 'geo.type',
      });
  }
}
