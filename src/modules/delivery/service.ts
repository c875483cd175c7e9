import { createHash } from 'node:crypto';
import type { ChangeBus } from '../../db/changes.ts';
import type { Db } from '../../db/index.ts';
import { isCountryCode } from '../../lib/geo.ts';
import { type GzipOf, gzipOnce } from '../../lib/gzip-once.ts';
import { pageMeta } from '../../lib/paging.ts';
import { DeliveryRepository, type VariantRow } from './repository.ts';
import type { WireBrand, WireOffer, WireSiteBrand, WireToplist } from './schemas.ts';
import { MEMO_BUDGET_BYTES, MemoBudget, SetMemo } from './set-memo.ts';

/** One live edition of a site, held in memory with its stored wire bytes. */
interface LiveEntry {
  id: number;
  slug: string;
  templateId: number;
  geoType: string;
  geoCode: string;
  /** Countries a market covers (empty for country and global rows). */
  covered: ReadonlySet<string>;
  updatedAtMs: number;
  liveFromMs: number | null;
  liveUntilMs: number | null;
  editionId: number;
  /** The stored wire document: a view into its answer's body, `{"data":<document>}`, no copy. */
  doc: Buffer;
  etag: string;
  /** The parsed document, on first use by `GET /brands`. */
  parsed?: WireToplist;
  /** Its answer to by-slug, by-id and resolve, built once at load: a read allocates nothing for it. */
  rendered: Rendered;
  /** Bytes of its gzip once made, 0 until then (for metrics). */
  gzipBytes: number;
  /**
   * What a visitor of each of these countries gets instead when the cascade reaches this (global)
   * row: the stored variant without the items that may not be advertised there.
   */
  forVisitors: Map<string, Rendered>;
}

/** A site's live editions, newest-updated first (`updated_at DESC, id DESC`). */
interface SiteSet {
  ordered: LiveEntry[];
  byId: Map<number, LiveEntry>;
  bySlug: Map<string, LiveEntry>;
  /** Each geo family (template id) of the set: resolve reads only its own rows. */
  byTemplate: Map<number, LiveEntry[]>;
  /** List pages and the brands listing computed from the set, until a publish window opens or closes. */
  memo: SetMemo;
}

/** An answer's bytes, its strong ETag and its gzip (compressed once, on first ask). */
export interface Rendered {
  body: Buffer;
  etag: string;
  gzip: GzipOf;
}

/** Why the visitor cascade picked nothing (the `details.reason` of the 404). */
export type NoVariant = {
  reason: 'ambiguous' | 'no_variant' | 'unknown_country';
  /** Ids of the rows that tie, for `ambiguous`. */
  candidates: number[];
};

/** A page of a listing: its number (from 1) and size. */
export interface PageParams {
  page: number;
  perPage: number;
}

/** A page of the toplist listing and its filters. */
export interface ListParams extends PageParams {
  templateId?: number | undefined;
  geoType?: string | undefined;
  geoCode?: string | undefined;
}

/** What a single toplist's answer puts around its stored document. */
const DATA_OPEN = '{"data":';
const DATA_CLOSE = '}';
const LIST_OPEN = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

const strongTag = (parts: string) => `"${createHash('sha1').update(parts).digest('base64url').slice(0, 22)}"`;

/**
 * The read path. Serves the wire bytes stored at publish time, from a per-site in-memory set of
 * live editions. The set is loaded on first use and dropped when the site changes (publish,
 * unpublish, window edits) in this or any other process; publish windows are evaluated per
 * request against the clock.
 */
export class DeliveryService {
  private readonly repo: DeliveryRepository;
  private readonly sets = new Map<number, Promise<SiteSet>>();
  /** The sets of `sets` that have finished loading (their memos are emptied on invalidation). */
  private readonly loaded = new Map<number, SiteSet>();
  private readonly generations = new Map<number, number>();
  private stats = { hits: 0, misses: 0 };
  /** What every site set's memo of pages may hold together. */
  private readonly memoBudget = new MemoBudget(MEMO_BUDGET_BYTES);

  constructor(
    db: Db,
    bus: ChangeBus,
    private readonly now: () => Date,
    /** Absolute base of the public API (`https://host/api/v1`), for `links`. */
    private readonly apiBase: string,
    /** Told when compressing an answer failed (it then goes out plain). */
    private readonly onGzipError: (err: unknown) => void = () => {},
  ) {
    this.repo = new DeliveryRepository(db);
    bus.subscribe((c) => {
      if (c.kind === 'site') this.invalidate(c.siteId);
      else if (c.kind === 'all') this.invalidateAll();
    });
  }

  /** Cache hit/miss counters (for metrics). */
  cacheStats(): { hits: number; misses: number } {
    return { ...this.stats };
  }

  invalidate(siteId: number): void {
    this.generations.set(siteId, (this.generations.get(siteId) ?? 0) + 1);
    this.loaded.get(siteId)?.memo.clear();
    this.sets.delete(siteId);
    this.loaded.delete(siteId);
  }

  invalidateAll(): void {
    for (const siteId of this.sets.keys()) this.invalidate(siteId);
  }

  private siteSet(siteId: number): Promise<SiteSet> {
    const cached = this.sets.get(siteId);
    if (cached) {
      this.stats.hits++;
      return cached;
    }
    this.stats.misses++;
    const generation = this.generations.get(siteId) ?? 0;
    const loading = this.load(siteId);
    this.sets.set(siteId, loading);
    loading.then(
      (set) => {
        // An invalidation during the load means these rows may be stale: do not keep them.
        if (this.sets.get(siteId) !== loading) return;
        if ((this.generations.get(siteId) ?? 0) !== generation) this.sets.delete(siteId);
        else this.loaded.set(siteId, set);
      },
      () => {
        if (this.sets.get(siteId) === loading) this.sets.delete(siteId);
      },
    );
    return loading;
  }

  /** An answer's bytes `{"data":<document>}` with its ETag and gzip (made on first ask). */
  private answer(document: string, etag: string, onGzip: (bytes: number) => void): Rendered {
    const body = Buffer.from(`${DATA_OPEN}${document}${DATA_CLOSE}`, 'utf8');
    return { body, etag, gzip: gzipOnce(body, this.onGzipError, onGzip) };
  }

  private async load(siteId: number): Promise<SiteSet> {
    const rows = await this.repo.liveEditions(siteId);
    const variants = new Map<number, VariantRow[]>();
    for (const v of await this.repo.liveVariants(siteId))
      variants.set(v.editionId, [...(variants.get(v.editionId) ?? []), v]);
    const ordered = rows
      .map((r): LiveEntry => {
        const single = Buffer.from(`${DATA_OPEN}${r.document}${DATA_CLOSE}`, 'utf8');
        const etag = r.renderRev
          ? `"t${r.toplistId}e${r.editionId}r${r.renderRev}"`
          : `"t${r.toplistId}e${r.editionId}"`;
        const doc = single.subarray(DATA_OPEN.length, single.length - DATA_CLOSE.length);
        const gzip = gzipOnce(single, this.onGzipError, (bytes) => {
          entry.gzipBytes = bytes;
        });
        const entry: LiveEntry = {
          id: r.toplistId,
          slug: r.slug,
          templateId: r.templateId,
          geoType: r.geoType,
          geoCode: r.geoCode,
          covered: new Set(r.coveredCountries ?? []),
          updatedAtMs: r.updatedAt.getTime(),
          liveFromMs: r.liveFrom ? r.liveFrom.getTime() : null,
          liveUntilMs: r.liveUntil ? r.liveUntil.getTime() : null,
          editionId: r.editionId,
          doc,
          etag,
          rendered: { body: single, etag, gzip },
          gzipBytes: 0,
          forVisitors: new Map(),
        };
        for (const v of variants.get(r.editionId) ?? []) {
          const rendered = this.answer(
            v.document,
            `"t${r.toplistId}e${r.editionId}v${v.id}r${v.rev}"`,
            () => {},
          );
          for (const c of v.countries) entry.forVisitors.set(c, rendered);
        }
        return entry;
      })
      .sort((a, b) => b.updatedAtMs - a.updatedAtMs || b.id - a.id);
    const byTemplate = new Map<number, LiveEntry[]>();
    for (const e of ordered) {
      const family = byTemplate.get(e.templateId);
      if (family) family.push(e);
      else byTemplate.set(e.templateId, [e]);
    }
    return {
      ordered,
      byId: new Map(ordered.map((e) => [e.id, e])),
      bySlug: new Map(ordered.map((e) => [e.slug, e])),
      byTemplate,
      memo: new SetMemo(
        ordered.flatMap((e) => [e.liveFromMs, e.liveUntilMs].filter((ms) => ms !== null)),
        this.memoBudget,
      ),
    };
  }

  private visible(e: LiveEntry, nowMs: number): boolean {
    return (
      (e.liveFromMs === null || e.liveFromMs <= nowMs) && (e.liveUntilMs === null || nowMs < e.liveUntilMs)
    );
  }

  private single(e: LiveEntry | undefined): Rendered | undefined {
    if (!e || !this.visible(e, this.now().getTime())) return undefined;
    return e.rendered;
  }

  /**
   * Single toplists of the loaded sets held gzipped, and their bytes (for metrics; pages of the
   * lists count theirs in the memo budget).
   */
  gzipStats(): { documents: number; bytes: number } {
    let documents = 0;
    let bytes = 0;
    for (const set of this.loaded.values())
      for (const e of set.ordered)
        if (e.gzipBytes > 0) {
          documents++;
          bytes += e.gzipBytes;
        }
    return { documents, bytes };
  }

  async byId(siteId: number, id: number): Promise<Rendered | undefined> {
    return this.single((await this.siteSet(siteId)).byId.get(id));
  }

  async bySlug(siteId: number, slug: string): Promise<Rendered | undefined> {
    return this.single((await this.siteSet(siteId)).bySlug.get(slug));
  }

  /**
   * The variant of a geo family a visitor from `country` gets (DESIGN, "Geo"): the exact country
   * row, else the one market covering the country (two or more: ambiguous, nothing), else the
   * global row. A code that names no country (`XX`, `EU`) only gets the global row. Serves the
   * same stored bytes and ETag as by-id, or the row's stored variant for the visitor's country
   * (without the brands that may not be advertised there) with its own ETag.
   */
  async resolve(siteId: number, templateId: number, country: string): Promise<Rendered | NoVariant> {
    return this.cascade(await this.siteSet(siteId), templateId, country);
  }

  private cascade(set: SiteSet, templateId: number, country: string): Rendered | NoVariant {
    const nowMs = this.now().getTime();
    const family = (set.byTemplate.get(templateId) ?? []).filter((e) => this.visible(e, nowMs));
    const code = country.trim().toUpperCase();
    const known = isCountryCode(code);
    const pick = (rows: LiveEntry[]): Rendered | NoVariant | undefined =>
      rows.length === 1
        ? (rows[0]!.forVisitors.get(code) ?? rows[0]!.rendered)
        : rows.length > 1
          ? { reason: 'ambiguous', candidates: rows.map((e) => e.id).sort((a, b) => a - b) }
          : undefined;
    const found =
      (known ? pick(family.filter((e) => e.geoType === 'country' && e.geoCode === code)) : undefined) ??
      (known ? pick(family.filter((e) => e.geoType === 'market' && e.covered.has(code))) : undefined) ??
      pick(family.filter((e) => e.geoType === 'global'));
    return found ?? { reason: known ? 'no_variant' : 'unknown_country', candidates: [] };
  }

  /**
   * One page of the site's visible toplists with `links` and `meta`, built once per site set and
   * publish window (a sync client walks every page on each run).
   */
  async list(siteId: number, p: ListParams): Promise<Rendered> {
    return this.listOf(await this.siteSet(siteId), p);
  }

  private listOf(set: SiteSet, p: ListParams): Rendered {
    const nowMs = this.now().getTime();
    const key = JSON.stringify([
      'toplists',
      p.templateId,
      p.geoType,
      p.geoCode?.toUpperCase(),
      p.page,
      p.perPage,
    ]);
    return set.memo.get(
      key,
      nowMs,
      () => this.listPage(set, p, nowMs),
      (r) => r.body.length,
    );
  }

  private listPage(set: SiteSet, p: ListParams, nowMs: number): Rendered {
    const code = p.geoCode?.toUpperCase();
    const matching = set.ordered.filter(
      (e) =>
        this.visible(e, nowMs) &&
        (p.templateId === undefined || e.templateId === p.templateId) &&
        (p.geoType === undefined || (e.geoType === p.geoType && e.geoCode === code)),
    );
    const meta = pageMeta(matching.length, p.page, p.perPage);
    const start = (p.page - 1) * p.perPage;
    const onPage = matching.slice(start, start + p.perPage);
    const links = this.links('toplists', p, meta.last_page);
    const tail = Buffer.from(`],"links":${JSON.stringify(links)},"meta":${JSON.stringify(meta)}}`);
    const parts: Buffer[] = [LIST_OPEN];
    onPage.forEach((e, i) => {
      if (i) parts.push(COMMA);
      parts.push(e.doc);
    });
    parts.push(tail);
    const etag = strongTag(`${onPage.map((e) => e.etag).join('.')}|${tail.toString('latin1')}`);
    return this.rendered(set, Buffer.concat(parts), etag);
  }

  /** A page's answer; its gzip, once made, is counted in the memo that keeps the page. */
  private rendered(set: SiteSet, body: Buffer, etag: string): Rendered {
    return { body, etag, gzip: gzipOnce(body, this.onGzipError, (bytes) => set.memo.charge(bytes)) };
  }

  /**
   * One page of the brands in the site's visible toplists, A–Z, in the shape the WordPress
   * plugins sync: the brand of its newest edition, `brandStatus: "Active"`, the product types and
   * top geos of the toplists that rank it, and its offers there (newest edition wins) with trackers.
   */
  async brands(siteId: number, p: PageParams): Promise<Rendered> {
    return this.brandsOf(await this.siteSet(siteId), p);
  }

  private brandsOf(set: SiteSet, p: PageParams): Rendered {
    const nowMs = this.now().getTime();
    return set.memo.get(
      JSON.stringify(['brands', p.page, p.perPage]),
      nowMs,
      () => this.brandPage(set, p, nowMs),
      (r) => r.body.length,
    );
  }

  private brandPage(set: SiteSet, p: PageParams, nowMs: number): Rendered {
    // Every page reads the whole listing: built once per window, as its pages are.
    const all = set.memo.get(
      JSON.stringify(['brands']),
      nowMs,
      () => this.allBrands(set, nowMs),
      // Its objects as JSON is about what they hold beyond the parsed toplists they point into.
      (brands) => JSON.stringify(brands).length,
    );
    const meta = pageMeta(all.length, p.page, p.perPage);
    const start = (p.page - 1) * p.perPage;
    const body = Buffer.from(
      JSON.stringify({
        data: all.slice(start, start + p.perPage),
        links: this.links('brands', p, meta.last_page),
        meta,
      }),
    );
    return this.rendered(set, body, strongTag(body.toString('utf8')));
  }

  /** The brands of the set's visible toplists, A–Z, as every page of `GET /brands` lists them. */
  private allBrands(set: SiteSet, nowMs: number): WireSiteBrand[] {
    const acc = new Map<
      number,
      {
        brand: WireBrand;
        products: Set<string>;
        countries: Set<string>;
        markets: Set<string>;
        offers: Map<number, WireOffer>;
      }
    >();
    for (const e of set.ordered) {
      if (!this.visible(e, nowMs)) continue;
      e.parsed ??= JSON.parse(e.doc.toString('utf8')) as WireToplist;
      const t = e.parsed;
      for (const item of t.items) {
        let b = acc.get(item.brand.id);
        if (!b) {
          b = {
            brand: item.brand,
            products: new Set(),
            countries: new Set(),
            markets: new Set(),
            offers: new Map(),
          };
          acc.set(item.brand.id, b);
        }
        b.products.add(t.template.productType);
        if (t.geo.geo_type === 'country') b.countries.add(t.geo.code);
        else if (t.geo.geo_type === 'market') b.markets.add(t.geo.code);
        if (!b.offers.has(item.offer.id)) b.offers.set(item.offer.id, item.offer);
      }
    }
    const sorted = (xs: Set<string>) => [...xs].sort();
    const all: WireSiteBrand[] = [...acc.values()]
      .sort((a, b) =>
        a.brand.name < b.brand.name ? -1 : a.brand.name > b.brand.name ? 1 : a.brand.id - b.brand.id,
      )
      .map((b) => {
        const offers = [...b.offers.values()].sort((x, y) => x.id - y.id);
        return {
          ...b.brand,
          brandStatus: 'Active',
          productTypes: sorted(b.products),
          topGeos: { countries: sorted(b.countries), markets: sorted(b.markets) },
          offers,
          offersCount: offers.length,
        };
      });
    return all;
  }

  private links(
    path: 'toplists' | 'brands',
    p: Partial<ListParams> & { page: number; perPage: number },
    lastPage: number,
  ) {
    const url = (page: number) => {
      const q = new URLSearchParams();
      if (p.templateId !== undefined) q.set('template_id', String(p.templateId));
      if (p.geoType !== undefined) q.set('geo_type', p.geoType);
      if (p.geoCode !== undefined) q.set('geo_code', p.geoCode.toUpperCase());
      q.set('per_page', String(p.perPage));
      q.set('page', String(page));
      return `${this.apiBase}/${path}?${q}`;
    };
    return {
      first: url(1),
      last: url(lastPage),
      prev: p.page > 1 ? url(Math.min(p.page - 1, lastPage)) : null,
      next: p.page < lastPage ? url(p.page + 1) : null,
    };
  }
}
