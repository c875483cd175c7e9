import type { Db } from '../../db/index.ts';
import { AppError, conflict, notFound } from '../../lib/errors.ts';
import type { OutboundClient } from '../../lib/outbound.ts';
import { hashToken, newToken } from '../../lib/tokens.ts';
import { monthFlight } from '../adserver/orders.ts';
import { discrepancyPct } from '../adserver/service.ts';
import type { BookingDelivery } from '../adserver/types.ts';
import type { Creative, CreativeService } from '../creatives/service.ts';
import { MAX_PRODUCT_MONTHS, type MarketService, monthsBetween } from '../market/service.ts';
import { sumText } from '../market/statement-repository.ts';
import type { Product, Reservation, ReservationStatus } from '../market/types.ts';
import {
  type AdvertiserToken,
  type BuyPackage,
  type MediaBuyRow,
  SalesAgentRepository,
} from './repository.ts';

/** Live tokens an advertiser may hold at once (rotation needs two). */
export const MAX_ADVERTISER_TOKENS = 10;
/** Packages in one media buy, and buys in one delivery answer. */
export const MAX_PACKAGES = 20;
export const MAX_BUYS = 50;
/** Creatives one sync_creatives call takes, and creatives one list_creatives page shows at most. */
export const MAX_SYNC_CREATIVES = 20;
export const MAX_LIST_CREATIVES = 100;

/**
 * What the agent needs beyond the marketplace: the creatives module and the SSRF-guarded client to
 * take a buyer's creatives, and a booking's delivery with Podium's own counts beside the ad server's.
 */
export interface AgentDeps {
  creatives: CreativeService;
  outbound: OutboundClient;
  /** The largest file fetched from a buyer's asset URL: the heaviest format's weight limit. */
  maxAssetBytes: number;
  bookingDelivery: (bookingId: string) => Promise<BookingDelivery>;
}

export interface SyncCreative {
  creative_id: string;
  name: string;
  format_id: { id: string; width?: number | null; height?: number | null };
  assets: Record<string, { url?: string; width?: number; height?: number; [k: string]: unknown }>;
}

export interface SyncRequest {
  creatives: SyncCreative[];
  assignments?: { creative_id: string; package_id: string }[] | null;
  dry_run?: boolean | null;
  delete_missing?: boolean | null;
}

export interface UpdateRequest {
  media_buy_id?: string | null;
  buyer_ref?: string | null;
  paused?: boolean | null;
  start_time?: unknown;
  end_time?: unknown;
  packages?:
    | {
        package_id?: string | null;
        buyer_ref?: string | null;
        budget?: number | null;
        impressions?: number | null;
        paused?: boolean | null;
        [k: string]: unknown;
      }[]
    | null;
}

/** AdCP's creative status for the moderation states of a creative's rows. */
function creativeStatus(rows: readonly Creative[]): string {
  if (rows.some((c) => c.status === 'approved')) return 'approved';
  if (rows.some((c) => c.status === 'pending' || c.status === 'approving')) return 'pending_review';
  if (rows.every((c) => c.status === 'rejected')) return 'rejected';
  return 'archived';
}

/**
 * The AdCP answer of a marketplace refusal: a hold that does not fit (409) is
 * `INSUFFICIENT_INVENTORY` with what remains, any other 4xx `INVALID_REQUEST`; a server error
 * stays an error.
 */
function refusalOf(err: unknown): unknown {
  if (!(err instanceof AppError) || err.status >= 500) return err;
  const field = (err.details as { field?: string } | undefined)?.field;
  return err.code === 'conflict'
    ? new AdcpRefusal('INSUFFICIENT_INVENTORY', err.message, field, err.details as Record<string, unknown>)
    : new AdcpRefusal('INVALID_REQUEST', err.message, field);
}

/**
 * Podium's own `/imp` and `/go` counts of a package's lines over the period, beside the ad
 * server's, with the discrepancy as on the publisher's delivery report: (ad server − Podium) / ad
 * server × 100, a two-decimal string, null while the ad server counted nothing.
 */
function ownCounts(d: BookingDelivery, lineNos: readonly number[], start: string, end: string) {
  const days = d.lines
    .filter((l) => lineNos.includes(l.line_no))
    .flatMap((l) => l.days)
    .filter((day) => day.date >= start && day.date <= end);
  const sum = (k: 'impressions' | 'clicks' | 'podium_impressions' | 'podium_clicks') =>
    days.reduce((n, day) => n + day[k], 0);
  return {
    podium_impressions: sum('podium_impressions'),
    podium_clicks: sum('podium_clicks'),
    impression_discrepancy_pct: discrepancyPct(sum('impressions'), sum('podium_impressions')),
    click_discrepancy_pct: discrepancyPct(sum('clicks'), sum('podium_clicks')),
    timezone: d.timezone,
  };
}

/** The buyer_ref of a media buy from one of its package ids (`<buyer_ref>:<n>`). */
const buyRefOf = (packageId: string) => packageId.slice(0, Math.max(0, packageId.lastIndexOf(':')));

/** The advertiser a sales-agent request acts for. */
export interface Buyer {
  advertiserId: string;
  tokenId: number;
}

/** A business refusal in AdCP's shape: `{ errors: [{ code, message, field? }] }`. */
export class AdcpRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export interface PackageRequest {
  buyer_ref: string;
  product_id: string;
  pricing_option_id: string;
  budget: number;
  impressions?: number | null;
  targeting_overlay?: { geo_countries?: string[] | null } | null;
}

export interface MediaBuyRequest {
  buyer_ref: string;
  buyer_campaign_ref?: string;
  start_time: string;
  end_time: string;
  packages?: PackageRequest[];
}

/** AdCP's media-buy status for a reservation's state. */
const BUY_STATUS: Record<ReservationStatus, string> = {
  held: 'pending_activation',
  approving: 'pending_activation',
  booked: 'active',
  rejected: 'rejected',
  expired: 'canceled',
};

/** Budget in cents, exactly, from AdCP's number (two decimals are all a budget carries). */
const cents = (n: number) => BigInt(Math.round(n * 100));
/** A decimal price string ("12.5000") in ten-thousandths. */
function tenThousandths(price: string): bigint {
  const [whole = '0', frac = ''] = price.split('.');
  return BigInt(whole) * 10_000n + BigInt(`${frac}0000`.slice(0, 4));
}
/** A product's `WIDTHxHEIGHT` sizes: what its display formats are named by. */
const displaySizes = (p: Product) => p.sizes.filter((z) => /^\d+x\d+$/.test(z));
/** Width and height of a `WIDTHxHEIGHT` size. */
const dimensions = (z: string) => z.split('x').map(Number) as [number, number];
/** A day of a `YYYY-MM-DD…` date-time, or the date itself. */
const dayOf = (t: string) => t.slice(0, 10);

/**
 * The AdCP sales agent on top of the marketplace: an advertiser's agent discovers products,
 * books media buys (each a reservation awaiting the publisher's approval) and reads delivery.
 */
export class SalesAgentService {
  private readonly repo: SalesAgentRepository;

  constructor(
    db: Db,
    private readonly market: MarketService,
    private readonly formatAgentUrl: string,
    private readonly now: () => Date,
    private readonly assets: AgentDeps,
  ) {
    this.repo = new SalesAgentRepository(db);
  }

  /* Tokens (admin API) */

  /** Mints a token for an advertiser; the token is in the answer once and stored only as a hash. */
  async createToken(advertiserId: string, name: string): Promise<AdvertiserToken & { token: string }> {
    await this.market.getAdvertiser(advertiserId);
    if ((await this.repo.liveTokenCount(advertiserId)) >= MAX_ADVERTISER_TOKENS)
      throw conflict(`At most ${MAX_ADVERTISER_TOKENS} live tokens per advertiser: revoke one first`);
    const { token, hash, hint } = newToken('advertiser');
    return { ...(await this.repo.insertToken(advertiserId, name.trim(), hash, hint)), token };
  }

  async listTokens(advertiserId: string): Promise<AdvertiserToken[]> {
    await this.market.getAdvertiser(advertiserId);
    return this.repo.listTokens(advertiserId);
  }

  async revokeToken(advertiserId: string, id: number): Promise<AdvertiserToken> {
    const row = await this.repo.revokeToken(advertiserId, id);
    if (!row) throw notFound('Advertiser token');
    return row;
  }

  /** The advertiser of a live token; undefined for anything else. */
  async authenticate(token: string): Promise<Buyer | undefined> {
    return this.repo.liveToken(hashToken(token), this.now());
  }

  /* Tasks */

  /** `get_adcp_capabilities`: what this agent sells and how. */
  capabilities(): Record<string, unknown> {
    return {
      adcp: { major_versions: [3] },
      supported_protocols: ['media_buy'],
      media_buy: {
        supported_pricing_models: ['cpm', 'flat_rate'],
        reporting: { supports_date_range: true, supports_daily_breakdown: false, supports_webhooks: false },
        features: { inline_creative_management: true, property_list_filtering: false },
      },
      extensions_supported: [],
    };
  }

  /** The advertiser's publisher's active products in the advertiser's currency. */
  private sellable(buyer: Buyer): Promise<Product[]> {
    return this.market.productsFor(buyer.advertiserId);
  }

  /** `get_products`: the advertiser's publisher's active products, each with its price. */
  async products(buyer: Buyer, brief?: string): Promise<{ products: Record<string, unknown>[] }> {
    const all = await this.sellable(buyer);
    const words = (brief ?? '')
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => w.length > 2);
    // A brief narrows by the words a product's name, sizes or countries carry; none matching: all.
    const matching = words.length
      ? all.filter((p) =>
          words.some((w) => `${p.name} ${p.sizes.join(' ')} ${p.geos.join(' ')}`.toLowerCase().includes(w)),
        )
      : [];
    const shown = matching.length ? matching : all;
    const domains = await this.repo.siteDomains(
      shown.flatMap((p) => (p.site_id === null ? [] : [p.site_id])),
    );
    return {
      products: shown.map((p) => this.product(p, p.site_id === null ? undefined : domains.get(p.site_id))),
    };
  }

  /** `list_creative_formats`: one display format per size any product takes. */
  async formats(buyer: Buyer): Promise<{ formats: Record<string, unknown>[] }> {
    const sizes = [...new Set((await this.sellable(buyer)).flatMap(displaySizes))].sort();
    return {
      formats: sizes.map((z) => {
        const [w, h] = dimensions(z);
        return {
          format_id: this.formatId(w, h),
          name: `Display ${w}×${h}`,
          type: 'display',
          description: `A ${w}×${h} image (PNG, JPEG, GIF or WebP), served from the marketplace's own CDN inside the publisher's tag`,
        };
      }),
    };
  }

  /**
   * `create_media_buy`: one reservation line per package and calendar month of the flight (the
   * marketplace sells whole months), held for the publisher's approval. The same `buyer_ref` again
   * answers the buy already made.
   */
  async createMediaBuy(buyer: Buyer, req: MediaBuyRequest): Promise<Record<string, unknown>> {
    const existing = await this.repo.buyByRef(buyer.advertiserId, req.buyer_ref);
    if (existing) return this.buyAnswer(existing, await this.market.getReservation(existing.reservation_id));
    const packages = req.packages ?? [];
    if (!packages.length)
      throw new AdcpRefusal('INVALID_REQUEST', 'packages: at least one package is needed', 'packages');
    if (packages.length > MAX_PACKAGES)
      throw new AdcpRefusal('INVALID_REQUEST', `packages: at most ${MAX_PACKAGES}`, 'packages');
    const months = this.flightMonths(req.start_time, req.end_time);
    const lines: { product_id: string; geo: string; month: string; impressions: number }[] = [];
    const planned: BuyPackage[] = [];
    for (const [i, pkg] of packages.entries()) {
      const field = (f: string) => `packages[${i}].${f}`;
      const product = await this.market.getProduct(pkg.product_id).catch(() => undefined);
      if (!product)
        throw new AdcpRefusal(
          'PRODUCT_NOT_FOUND',
          `${field('product_id')}: no product ${pkg.product_id}`,
          field('product_id'),
        );
      if (pkg.pricing_option_id !== this.pricingOptionId(product))
        throw new AdcpRefusal(
          'INVALID_REQUEST',
          `${field('pricing_option_id')}: ${product.id} is sold through pricing option ${this.pricingOptionId(product)}`,
          field('pricing_option_id'),
        );
      const geo = this.geoOf(product, pkg, field('targeting_overlay.geo_countries'));
      const impressions = this.impressionsOf(product, pkg, months.length, field);
      // Spread over the months, the remainder on the first: the sum is exactly what was asked.
      const each = Math.floor(impressions / months.length);
      const first = lines.length + 1;
      for (const [m, month] of months.entries())
        lines.push({
          product_id: product.id,
          geo,
          month,
          impressions: each + (m === 0 ? impressions - each * months.length : 0),
        });
      planned.push({
        package_id: `${req.buyer_ref}:${i + 1}`,
        buyer_ref: pkg.buyer_ref,
        product_id: product.id,
        pricing_option_id: pkg.pricing_option_id,
        geo,
        impressions,
        line_nos: months.map((_, m) => first + m),
      });
    }
    if (lines.some((l) => l.impressions <= 0))
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        'packages: each month of the flight needs at least one impression',
        'packages',
      );
    let reservation: Reservation;
    try {
      reservation = await this.market.reserve(
        {
          advertiser_id: buyer.advertiserId,
          campaign_name: (req.buyer_campaign_ref ?? req.buyer_ref).slice(0, 200),
          lines,
        },
        `advertiser-token:${buyer.tokenId}`,
      );
    } catch (err) {
      throw refusalOf(err);
    }
    const row = {
      reservation_id: reservation.id,
      advertiser_id: buyer.advertiserId,
      buyer_ref: req.buyer_ref,
      packages: planned,
    };
    await this.repo.insertBuy(row);
    return this.buyAnswer({ ...row, created_at: reservation.created_at }, reservation);
  }

  /** `get_media_buy_delivery`: per buy and package, the ad server's figures and the spend they make. */
  async delivery(
    buyer: Buyer,
    req: { media_buy_ids?: string[]; buyer_refs?: string[]; start_date?: string; end_date?: string },
  ): Promise<Record<string, unknown>> {
    const today = this.now().toISOString().slice(0, 10);
    const start = req.start_date ?? '2000-01-01';
    const end = req.end_date ?? today;
    if (start > end) throw new AdcpRefusal('INVALID_REQUEST', 'start_date: after end_date', 'start_date');
    const buys = await this.repo.buys(
      buyer.advertiserId,
      { ids: req.media_buy_ids, buyer_refs: req.buyer_refs },
      MAX_BUYS,
    );
    const adv = await this.market.getAdvertiser(buyer.advertiserId);
    const deliveries = [];
    for (const b of buys) {
      const r = await this.market.getReservation(b.reservation_id);
      const lines = await this.repo.delivery(b.reservation_id, start, end);
      const own = r.booking_id ? await this.assets.bookingDelivery(r.booking_id) : undefined;
      const byPackage = b.packages.map((p) => {
        const mine = lines.filter((l) => p.line_nos.includes(l.line_no));
        const line = r.lines.find((l) => l.line_no === p.line_nos[0]);
        return {
          ...(own ? { ext: { podium: ownCounts(own, p.line_nos, start, end) } } : {}),
          package_id: p.package_id,
          buyer_ref: p.buyer_ref,
          impressions: mine.reduce((n, l) => n + l.impressions, 0),
          clicks: mine.reduce((n, l) => n + l.clicks, 0),
          spend: Number(sumText(mine.map((l) => l.spend))),
          pricing_model: line?.pricing === 'flat' ? 'flat_rate' : 'cpm',
          rate: line ? Number(line.price) : undefined,
          currency: r.currency,
        };
      });
      deliveries.push({
        media_buy_id: b.reservation_id,
        buyer_ref: b.buyer_ref,
        status: this.statusOf(r),
        totals: {
          impressions: byPackage.reduce((n, p) => n + p.impressions, 0),
          clicks: byPackage.reduce((n, p) => n + p.clicks, 0),
          spend: Number(sumText(lines.map((l) => l.spend))),
        },
        by_package: byPackage,
      });
    }
    return {
      reporting_period: { start: `${start}T00:00:00Z`, end: `${end}T23:59:59Z` },
      currency: adv.currency,
      media_buy_deliveries: deliveries,
    };
  }

  /**
   * `sync_creatives`: each creative's image is fetched from its asset URL through the SSRF guard
   * (https, public addresses, no redirects, size and time limits), then checked and stored as an
   * upload for every reservation line of the packages it is assigned to, awaiting moderation.
   */
  async syncCreatives(buyer: Buyer, req: SyncRequest): Promise<Record<string, unknown>> {
    if (req.creatives.length > MAX_SYNC_CREATIVES)
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        `creatives: at most ${MAX_SYNC_CREATIVES} a call`,
        'creatives',
      );
    if (req.dry_run)
      throw new AdcpRefusal(
        'UNSUPPORTED_FEATURE',
        'dry_run: not supported; every sync is moderated anyway',
        'dry_run',
      );
    if (req.delete_missing)
      throw new AdcpRefusal(
        'UNSUPPORTED_FEATURE',
        'delete_missing: not supported; the publisher rejects what should not run',
        'delete_missing',
      );
    const results = [];
    for (const c of req.creatives) results.push(await this.syncOne(buyer, c, req.assignments ?? []));
    return { creatives: results };
  }

  private async syncOne(
    buyer: Buyer,
    c: SyncCreative,
    assignments: readonly { creative_id: string; package_id: string }[],
  ): Promise<Record<string, unknown>> {
    const failed = (message: string) => ({ creative_id: c.creative_id, action: 'failed', errors: [message] });
    const packages = [
      ...new Set(assignments.filter((a) => a.creative_id === c.creative_id).map((a) => a.package_id)),
    ];
    if (!packages.length)
      return failed(
        'assignments: assign the creative to a package of a media buy (the marketplace keeps creatives per booked line)',
      );
    const entries = Object.entries(c.assets);
    const image = entries.find(
      ([, a]) => typeof a.width === 'number' && typeof a.height === 'number' && a.url,
    );
    const click = entries.find(
      ([, a]) => a !== image?.[1] && typeof a.url === 'string' && a.width === undefined,
    );
    if (!image) return failed('assets: an image asset (url, width, height) is needed');
    if (!click)
      return failed('assets: a click-through URL asset (e.g. click_url) is needed: where a click lands');
    const got = await this.assets.outbound.download(String(image[1].url), this.assets.maxAssetBytes);
    if (got.kind !== 'ok')
      return failed(
        got.kind === 'too_large'
          ? `assets.${image[0]}.url: heavier than the ${this.assets.maxAssetBytes}-byte limit (rule weight)`
          : `assets.${image[0]}.url: not fetched: ${got.message}`,
      );
    const before = await this.creativesOf(buyer, { creative_ids: [c.creative_id] });
    const assigned: string[] = [];
    const assignmentErrors: Record<string, string> = {};
    const ids: string[] = [];
    let created = false;
    for (const packageId of packages) {
      const [buy] = await this.repo.buys(buyer.advertiserId, { buyer_refs: [buyRefOf(packageId)] });
      const pkg = buy?.packages.find((p) => p.package_id === packageId);
      if (!buy || !pkg) {
        assignmentErrors[packageId] = 'no such package in your media buys';
        continue;
      }
      try {
        for (const lineNo of pkg.line_nos) {
          const up = await this.assets.creatives.upload(
            {
              reservation_id: buy.reservation_id,
              line_no: lineNo,
              landing_url: String(click[1].url),
              name: c.name.slice(0, 200),
              buyer_creative_id: c.creative_id,
            },
            got.bytes,
            `advertiser-token:${buyer.tokenId}`,
          );
          created ||= up.created;
          ids.push(up.creative.id);
        }
        assigned.push(packageId);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        const rule = (err.details as { rule?: string } | undefined)?.rule;
        assignmentErrors[packageId] = `${rule ? `rule ${rule}: ` : ''}${err.message}`;
      }
    }
    const answer = {
      creative_id: c.creative_id,
      ...(Object.keys(assignmentErrors).length ? { assignment_errors: assignmentErrors } : {}),
      ext: { podium: { creative_ids: ids } },
    };
    if (!assigned.length) return { ...answer, action: 'failed', errors: Object.values(assignmentErrors) };
    const shown = ids.length ? await this.assets.creatives.get(ids[0]!) : undefined;
    return {
      ...answer,
      action: !created ? 'unchanged' : before.length ? 'updated' : 'created',
      assigned_to: assigned,
      ...(shown ? { preview_url: shown.url } : {}),
    };
  }

  /** The rows of the advertiser's media buys' creatives, newest first, optionally of some buyer ids or buys. */
  private async creativesOf(
    buyer: Buyer,
    f: { creative_ids?: readonly string[]; media_buy_ids?: readonly string[] },
  ): Promise<Creative[]> {
    const buys = await this.repo.buys(
      buyer.advertiserId,
      f.media_buy_ids ? { ids: [...f.media_buy_ids] } : {},
      500,
    );
    if (!buys.length) return [];
    const rows = await this.assets.creatives.list({
      reservation_ids: buys.map((b) => b.reservation_id),
      limit: 500,
    });
    const idOf = (r: Creative) => r.buyer_creative_id ?? r.id;
    return f.creative_ids ? rows.filter((r) => f.creative_ids!.includes(idOf(r))) : rows;
  }

  /** `list_creatives`: the creatives of the advertiser's media buys, one per buyer creative_id, with their moderation status. */
  async listCreatives(
    buyer: Buyer,
    req: {
      filters?: {
        creative_ids?: string[] | null;
        media_buy_ids?: string[] | null;
        statuses?: string[] | null;
      } | null;
      pagination?: { max_results?: number | null; cursor?: string | null } | null;
    },
  ): Promise<Record<string, unknown>> {
    const f = req.filters ?? {};
    const rows = await this.creativesOf(buyer, {
      creative_ids: f.creative_ids ?? undefined,
      media_buy_ids: f.media_buy_ids ?? undefined,
    });
    const buys = new Map(
      (await this.repo.buys(buyer.advertiserId, {}, 500)).map((b) => [b.reservation_id, b] as const),
    );
    const groups = new Map<string, Creative[]>();
    for (const r of rows) {
      const id = r.buyer_creative_id ?? r.id;
      groups.set(id, [...(groups.get(id) ?? []), r]);
    }
    const all = [...groups.entries()].map(([id, list]) => {
      const newest = list[0]!;
      const packages = new Map<string, { package_id: string; buyer_ref: string; assigned_date: string }>();
      for (const r of list) {
        const pkg = buys
          .get(r.reservation_id!)
          ?.packages.find((p) => p.line_nos.includes(r.reservation_line_no!));
        if (pkg && !packages.has(pkg.package_id))
          packages.set(pkg.package_id, {
            package_id: pkg.package_id,
            buyer_ref: pkg.buyer_ref,
            assigned_date: r.created_at,
          });
      }
      return {
        creative_id: id,
        name: newest.name,
        format_id: this.formatId(newest.width, newest.height),
        status: creativeStatus(list),
        created_date: list.at(-1)!.created_at,
        updated_date: list
          .map((r) => r.updated_at)
          .sort()
          .at(-1)!,
        assets: {
          image: { url: newest.url, width: newest.width, height: newest.height },
          click_url: { url: newest.landing_url },
        },
        assignments: { assignment_count: packages.size, assigned_packages: [...packages.values()] },
        ext: {
          podium: {
            lines: list.map((r) => ({
              id: r.id,
              media_buy_id: r.reservation_id,
              line_no: r.reservation_line_no,
              status: r.status,
              reason: r.reason,
            })),
          },
        },
      };
    });
    const statuses = f.statuses;
    const matching = statuses?.length ? all.filter((c) => statuses.includes(c.status)) : all;
    const max = Math.min(Math.max(1, req.pagination?.max_results ?? 50), MAX_LIST_CREATIVES);
    const offset = Math.max(0, Number.parseInt(req.pagination?.cursor ?? '0', 10) || 0);
    const page = matching.slice(offset, offset + max);
    const more = offset + max < matching.length;
    return {
      query_summary: { total_matching: matching.length, returned: page.length },
      pagination: {
        has_more: more,
        total_count: matching.length,
        ...(more ? { cursor: String(offset + max) } : {}),
      },
      creatives: page,
    };
  }

  /**
   * `update_media_buy`: before the publisher's approval, `paused: true` withdraws the buy (its
   * held impressions are freed) and a package's budget or impressions may change (its hold grows
   * or shrinks, never past availability). After approval every change is refused: the draft
   * order is the publisher's now.
   */
  async updateMediaBuy(buyer: Buyer, req: UpdateRequest): Promise<Record<string, unknown>> {
    const [buy] = req.media_buy_id
      ? await this.repo.buys(buyer.advertiserId, { ids: [req.media_buy_id] })
      : req.buyer_ref
        ? await this.repo.buys(buyer.advertiserId, { buyer_refs: [req.buyer_ref] })
        : [];
    if (!buy)
      throw new AdcpRefusal('INVALID_REQUEST', 'media_buy_id: no such media buy of yours', 'media_buy_id');
    for (const f of ['start_time', 'end_time'] as const)
      if (req[f] !== undefined && req[f] !== null)
        throw new AdcpRefusal(
          'UNSUPPORTED_FEATURE',
          `${f}: the flight cannot change; make a new media buy`,
          f,
        );
    const r = await this.market.getReservation(buy.reservation_id);
    if (r.status !== 'held')
      throw new AdcpRefusal(
        'CONFLICT',
        `media_buy_id: the buy is ${BUY_STATUS[r.status]} (reservation ${r.status}): only a buy awaiting approval can change; ask the publisher`,
        'media_buy_id',
        { reservation_status: r.status },
      );
    const actor = `advertiser-token:${buyer.tokenId}`;
    if (req.paused === false)
      throw new AdcpRefusal('UNSUPPORTED_FEATURE', 'paused: a buy awaiting approval is not paused', 'paused');
    if (req.paused) {
      const canceled = await this.market.reject(
        buy.reservation_id,
        'Withdrawn by the buyer (update_media_buy)',
        actor,
      );
      return this.updateAnswer(buy, canceled, buy.packages);
    }
    const changes: { line_no: number; impressions: number }[] = [];
    const packages = buy.packages.map((p) => ({ ...p }));
    for (const [i, u] of (req.packages ?? []).entries()) {
      const field = (f: string) => `packages[${i}].${f}`;
      const pkg = packages.find(
        (p) => p.package_id === u.package_id || (!u.package_id && p.buyer_ref === u.buyer_ref),
      );
      if (!pkg)
        throw new AdcpRefusal(
          'INVALID_REQUEST',
          `${field('package_id')}: no such package in the buy`,
          field('package_id'),
        );
      const other = Object.keys(u).find(
        (k) => !['package_id', 'buyer_ref', 'budget', 'impressions'].includes(k),
      );
      if (other)
        throw new AdcpRefusal(
          'UNSUPPORTED_FEATURE',
          `${field(other)}: only budget and impressions can change`,
          field(other),
        );
      if (u.budget == null && u.impressions == null) continue;
      const product = await this.market.getProduct(pkg.product_id);
      const months = pkg.line_nos.length;
      // Impressions alone keep the price and change the spend; a budget is checked as at creation.
      const impressions =
        u.budget == null
          ? Number(u.impressions)
          : this.impressionsOf(
              product,
              {
                buyer_ref: pkg.buyer_ref,
                product_id: pkg.product_id,
                pricing_option_id: pkg.pricing_option_id,
                budget: u.budget,
                impressions: u.impressions ?? (product.pricing === 'flat' ? pkg.impressions : null),
              },
              months,
              field,
            );
      if (!Number.isSafeInteger(impressions) || impressions <= 0)
        throw new AdcpRefusal(
          'INVALID_REQUEST',
          `${field('impressions')}: a positive whole number`,
          field('impressions'),
        );
      const each = Math.floor(impressions / months);
      if (each <= 0)
        throw new AdcpRefusal(
          'INVALID_REQUEST',
          `${field('impressions')}: each month needs at least one impression`,
          field('impressions'),
        );
      for (const [m, lineNo] of pkg.line_nos.entries())
        changes.push({ line_no: lineNo, impressions: each + (m === 0 ? impressions - each * months : 0) });
      pkg.impressions = impressions;
    }
    if (!changes.length) return this.updateAnswer(buy, r, []);
    let changed: Reservation;
    try {
      changed = await this.market.changeHeld(buy.reservation_id, changes, actor);
    } catch (err) {
      throw refusalOf(err);
    }
    await this.repo.setPackages(buy.reservation_id, packages);
    const touched = new Set(changes.map((c) => c.line_no));
    return this.updateAnswer(
      buy,
      changed,
      packages.filter((p) => p.line_nos.some((n) => touched.has(n))),
    );
  }

  private updateAnswer(buy: MediaBuyRow, r: Reservation, affected: BuyPackage[]): Record<string, unknown> {
    return {
      media_buy_id: buy.reservation_id,
      buyer_ref: buy.buyer_ref,
      implementation_date: r.updated_at,
      affected_packages: affected.map((p) => ({
        package_id: p.package_id,
        buyer_ref: p.buyer_ref,
        product_id: p.product_id,
        pricing_option_id: p.pricing_option_id,
        impressions: p.impressions,
      })),
      ext: { podium: { reservation_status: r.status, media_buy_status: this.statusOf(r) } },
    };
  }

  /** AdCP's status of a buy: a reservation the buyer withdrew is `canceled`, not `rejected`. */
  private statusOf(r: Reservation): string {
    if (r.status === 'rejected' && r.events.at(-1)?.actor.startsWith('advertiser-token:')) return 'canceled';
    return BUY_STATUS[r.status];
  }

  /** `list_authorized_properties` (AdCP 2; version 3 moved it into the capabilities' portfolio): the sites of the products. */
  async authorizedProperties(buyer: Buyer): Promise<Record<string, unknown>> {
    const products = await this.sellable(buyer);
    const domains = await this.repo.siteDomains(
      products.flatMap((p) => (p.site_id === null ? [] : [p.site_id])),
    );
    const publisherDomains = [
      ...new Set(
        products.map((p) => (p.site_id === null ? p.publisher : (domains.get(p.site_id) ?? p.publisher))),
      ),
    ].sort();
    return { publisher_domains: publisherDomains };
  }

  /* Mapping */

  private formatId(w: number, h: number) {
    return { agent_url: this.formatAgentUrl, id: `display_${w}x${h}`, width: w, height: h };
  }

  private pricingOptionId(p: Product): string {
    return `${p.id}:${p.pricing}`;
  }

  private product(p: Product, domain: string | undefined): Record<string, unknown> {
    const sizes = displaySizes(p);
    return {
      product_id: p.id,
      name: p.name,
      description: `${sizes.join(', ')} on ${domain ?? p.publisher}, for ${p.geos.join(', ')}, ${p.first_month} to ${p.last_month}, sold by calendar month`,
      publisher_properties: [{ publisher_domain: domain ?? p.publisher, selection_type: 'all' }],
      format_ids: sizes.map((z) => this.formatId(...dimensions(z))),
      delivery_type: 'guaranteed',
      pricing_options: [
        {
          pricing_option_id: this.pricingOptionId(p),
          pricing_model: p.pricing === 'flat' ? 'flat_rate' : 'cpm',
          currency: p.currency,
          fixed_price: Number(p.price),
        },
      ],
      delivery_measurement: {
        provider: 'publisher ad server reports, cross-checked with the marketplace /imp and /go counts',
      },
      // The exact decimal price and what the marketplace sells by: AdCP's numbers are floats.
      ext: {
        podium: {
          price: p.price,
          pricing: p.pricing,
          geos: p.geos,
          first_month: p.first_month,
          last_month: p.last_month,
        },
      },
    };
  }

  /** The calendar months a flight covers; it must run from a month's first day to a month's last. */
  private flightMonths(start: string, end: string): string[] {
    if (start === 'asap')
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        'start_time: asap is not sold; the marketplace books calendar months',
        'start_time',
      );
    const s = dayOf(start);
    const e = dayOf(end);
    const ok = (d: string) => /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(d));
    if (!ok(s)) throw new AdcpRefusal('INVALID_REQUEST', 'start_time: not a date-time', 'start_time');
    if (!ok(e)) throw new AdcpRefusal('INVALID_REQUEST', 'end_time: not a date-time', 'end_time');
    if (e < s) throw new AdcpRefusal('INVALID_REQUEST', 'end_time: before start_time', 'end_time');
    if (!s.endsWith('-01'))
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        'start_time: must be the first day of a month (calendar months are sold)',
        'start_time',
      );
    const months = monthsBetween(s.slice(0, 7), e.slice(0, 7));
    if (monthFlight(months.at(-1)!).end_date !== e)
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        'end_time: must be the last day of a month (calendar months are sold)',
        'end_time',
      );
    if (months.length > MAX_PRODUCT_MONTHS)
      throw new AdcpRefusal('INVALID_REQUEST', `end_time: at most ${MAX_PRODUCT_MONTHS} months`, 'end_time');
    return months;
  }

  private geoOf(p: Product, pkg: PackageRequest, field: string): string {
    const geos = pkg.targeting_overlay?.geo_countries ?? [];
    if (geos.length === 0 && p.geos.length === 1) return p.geos[0]!;
    if (geos.length !== 1)
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        `${field}: name exactly one of ${p.geos.join(', ')} (each country is sold apart)`,
        field,
      );
    const geo = geos[0]!.toUpperCase();
    if (!p.geos.includes(geo))
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        `${field}: ${geo} is not offered; ${p.id} is sold for ${p.geos.join(', ')}`,
        field,
      );
    return geo;
  }

  /** Impressions of a package: given, or what a CPM budget buys; a flat fee must cover every month. */
  private impressionsOf(
    p: Product,
    pkg: PackageRequest,
    months: number,
    field: (f: string) => string,
  ): number {
    const budget = cents(pkg.budget);
    const price = tenThousandths(p.price);
    if (budget < 0n)
      throw new AdcpRefusal('INVALID_REQUEST', `${field('budget')}: negative`, field('budget'));
    if (p.pricing === 'flat') {
      if (!pkg.impressions)
        throw new AdcpRefusal(
          'INVALID_REQUEST',
          `${field('impressions')}: a flat-rate package names its impressions`,
          field('impressions'),
        );
      const fee = price * BigInt(months);
      if (budget * 100n < fee)
        throw new AdcpRefusal(
          'BUDGET_TOO_LOW',
          `${field('budget')}: the flat fee for ${months} month(s) is ${formatTenThousandths(fee)} ${p.currency}`,
          field('budget'),
        );
      return pkg.impressions;
    }
    if (price === 0n) {
      if (!pkg.impressions)
        throw new AdcpRefusal(
          'INVALID_REQUEST',
          `${field('impressions')}: needed at a price of 0`,
          field('impressions'),
        );
      return pkg.impressions;
    }
    // budget / (price / 1000), in cents and ten-thousandths: floor(cents × 100 000 / price).
    const affordable = Number((budget * 100_000n) / price);
    const impressions = pkg.impressions ?? affordable;
    if (!Number.isSafeInteger(impressions) || impressions <= 0)
      throw new AdcpRefusal(
        'INVALID_REQUEST',
        `${field('impressions')}: a positive whole number`,
        field('impressions'),
      );
    if (impressions > affordable)
      throw new AdcpRefusal(
        'BUDGET_TOO_LOW',
        `${field('budget')}: buys ${affordable} impressions at ${p.price} ${p.currency} CPM, ${impressions} asked`,
        field('budget'),
      );
    return impressions;
  }

  private buyAnswer(b: MediaBuyRow, r: Reservation): Record<string, unknown> {
    const pending = r.status === 'held' || r.status === 'approving';
    return {
      ...(pending
        ? {
            status: 'submitted',
            task_id: `task_${r.id}`,
            message: `Held until ${r.expires_at}, awaiting the publisher's approval`,
          }
        : {}),
      media_buy_id: r.id,
      buyer_ref: b.buyer_ref,
      media_buy_status: this.statusOf(r),
      packages: b.packages.map((p) => ({
        package_id: p.package_id,
        buyer_ref: p.buyer_ref,
        product_id: p.product_id,
        pricing_option_id: p.pricing_option_id,
        impressions: p.impressions,
        targeting_overlay: { geo_countries: [p.geo] },
      })),
      ext: { podium: { reservation_status: r.status, expires_at: r.expires_at } },
    };
  }
}

function formatTenThousandths(v: bigint): string {
  return `${v / 10_000n}.${String(v % 10_000n)
    .padStart(4, '0')
    .slice(0, 2)}`;
}
