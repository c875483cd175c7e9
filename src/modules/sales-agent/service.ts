import type { Db } from '../../db/index.ts';
import { AppError, conflict, notFound } from '../../lib/errors.ts';
import { hashToken, newToken } from '../../lib/tokens.ts';
import { monthFlight } from '../adserver/orders.ts';
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
        features: { inline_creative_management: false, property_list_filtering: false },
      },
      extensions_supported: [],
    };
  }

  /** The advertiser's publisher's active products in the advertiser's currency. */
  private async sellable(buyer: Buyer): Promise<Product[]> {
    const adv = await this.market.getAdvertiser(buyer.advertiserId);
    return (await this.market.listProducts()).filter(
      (p) => p.publisher === adv.publisher && p.status === 'active' && p.currency === adv.currency,
    );
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
      if (err instanceof AppError && err.code === 'conflict')
        throw new AdcpRefusal(
          'INSUFFICIENT_INVENTORY',
          err.message,
          (err.details as { field?: string })?.field,
          err.details as Record<string, unknown>,
        );
      if (err instanceof AppError && err.status < 500)
        throw new AdcpRefusal('INVALID_REQUEST', err.message, (err.details as { field?: string })?.field);
      throw err;
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
      const byPackage = b.packages.map((p) => {
        const mine = lines.filter((l) => p.line_nos.includes(l.line_no));
        const line = r.lines.find((l) => l.line_no === p.line_nos[0]);
        return {
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
        status: BUY_STATUS[r.status],
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
      media_buy_status: BUY_STATUS[r.status],
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
