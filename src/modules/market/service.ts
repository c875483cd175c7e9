import type { Db, Queryable } from '../../db/index.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, conflict, invalidField, notFound } from '../../lib/errors.ts';
import { isCountryCode } from '../../lib/geo.ts';
import { ulid } from '../../lib/ids.ts';
import { monthFlight, todayIn } from '../adserver/orders.ts';
import type { AdserverService } from '../adserver/service.ts';
import type { ApprovedCreative } from '../adserver/types.ts';
import type { AuditLog } from '../audit/service.ts';
import type { SiteEvents } from '../webhooks/service.ts';
import { type CapacityKey, type Figure, MarketRepository, type NewLine } from './repository.ts';
import { MarketStatements } from './statements.ts';
import type {
  Advertiser,
  Availability,
  Contact,
  NoticeKind,
  Pricing,
  Product,
  Reservation,
  ReservationStatus,
  ReservationSummary,
} from './types.ts';

/** The creatives of reservation lines (the creatives module): carried to the booking on approval. */
export interface ReservationCreatives {
  approvedForReservation(reservationId: string): Promise<Map<number, ApprovedCreative[]>>;
  attachToBooking(reservationId: string, bookingId: string, q: Queryable): Promise<void>;
}

export interface MarketOptions {
  /** How long a reservation holds its impressions before it expires. */
  holdMinutes: number;
  /** A forecast older than this is fetched again by the background job. */
  forecastMaxAgeMinutes: number;
}

/** Longest offer of one product, and most reservations or products one list answers. */
export const MAX_PRODUCT_MONTHS = 24;
export const LIST_LIMIT = 200;
/** Forecast calls one refresh run makes at most (one at a time: the contract's pace is the publisher's). */
export const REFRESH_BATCH = 20;
/** Holds expired per statement batch of the expiry job. */
export const EXPIRY_BATCH = 500;
/** An approval whose push has not finished after this long may be started again (its process died). */
export const APPROVAL_STALE_MS = 5 * 60_000;

const keyText = (k: CapacityKey) => `${k.product_id}|${k.geo}|${k.month}`;
const byKey = (a: CapacityKey, b: CapacityKey) =>
  keyText(a) < keyText(b) ? -1 : keyText(a) > keyText(b) ? 1 : 0;

/** Months from `first` to `last` inclusive (YYYY-MM). */
export function monthsBetween(first: string, last: string): string[] {
  const out: string[] = [];
  let [y, m] = first.split('-').map(Number) as [number, number];
  for (let guard = 0; guard <= MAX_PRODUCT_MONTHS * 10; guard++) {
    const month = `${y}-${String(m).padStart(2, '0')}`;
    if (month > last) break;
    out.push(month);
    m++;
    if (m > 12) {
      m = 1;
      y++;
    }
  }
  return out;
}

function checkCountries(field: string, codes: readonly string[]): void {
  for (const [i, c] of codes.entries())
    if (!isCountryCode(c))
      throw invalidField(`${field}.${i}`, `${c} is not an ISO 3166-1 alpha-2 country code`);
}

function checkMonths(first: string, last: string): void {
  if (last < first) throw invalidField('last_month', 'is before first_month');
  if (monthsBetween(first, last).length > MAX_PRODUCT_MONTHS)
    throw invalidField('last_month', `a product is offered for at most ${MAX_PRODUCT_MONTHS} months`);
}

const PRODUCT_FIELDS = { market_products_connection_id_name_key: 'name' };

/**
 * The marketplace: advertisers, products and prices, availability per product x geo x month,
 * reservations that hold impressions (never more than the figure, enforced by the database),
 * and the publisher's approval that pushes the draft order through the ad-server bookings.
 */
export class MarketService {
  private readonly repo: MarketRepository;
  /** Statements of booked reservations from the ad server's figures. */
  readonly statements: MarketStatements;

  constructor(
    private readonly db: Db,
    private readonly adserver: AdserverService,
    private readonly audit: AuditLog,
    private readonly now: () => Date,
    private readonly options: MarketOptions,
    /** Told of booked, rejected and expired reservations inside their transaction (the webhooks outbox). */
    private readonly events?: SiteEvents,
    /** Carries the creatives of a reservation's lines to the booking its approval makes. */
    private readonly creatives?: ReservationCreatives,
  ) {
    this.repo = new MarketRepository(db);
    this.statements = new MarketStatements(db, this.repo, adserver.connections, now);
  }

  /* Advertisers */

  /** Creates an advertiser of a publisher, in the currency of the publisher's ad-server account. */
  async createAdvertiser(input: {
    publisher: string;
    name: string;
    contacts?: Contact[];
  }): Promise<Advertiser> {
    const currency = await this.repo.publisherCurrency(input.publisher);
    if (!currency)
      throw invalidField(
        'publisher',
        'has no verified ad-server connection: its account currency is unknown',
      );
    const id = `adv_${ulid()}`;
    try {
      await this.repo.insertAdvertiser({
        id,
        publisher: input.publisher,
        name: input.name.trim(),
        currency,
        contacts: input.contacts ?? [],
      });
    } catch (err) {
      throw fromDbError(err, { market_advertisers_publisher_name_key: 'name' }) ?? err;
    }
    return this.getAdvertiser(id);
  }

  async getAdvertiser(id: string): Promise<Advertiser> {
    const a = await this.repo.getAdvertiser(id);
    if (!a) throw notFound('Advertiser');
    return a;
  }

  async updateAdvertiser(id: string, patch: { name?: string; contacts?: Contact[] }): Promise<Advertiser> {
    await this.getAdvertiser(id);
    try {
      await this.repo.updateAdvertiser(id, { ...patch, name: patch.name?.trim() });
    } catch (err) {
      throw fromDbError(err, { market_advertisers_publisher_name_key: 'name' }) ?? err;
    }
    return this.getAdvertiser(id);
  }

  listAdvertisers(publisher?: string): Promise<Advertiser[]> {
    return this.repo.listAdvertisers(publisher, LIST_LIMIT);
  }

  /* Products */

  /** Offers a placement's mapped slot on a connection, priced in the account currency. */
  async createProduct(input: {
    connection_id: string;
    placement_id: number;
    name: string;
    geos: string[];
    first_month: string;
    last_month: string;
    pricing: Pricing;
    price: string;
  }): Promise<Product> {
    const conn = await this.adserver.connections.get(input.connection_id).catch(() => {
      throw invalidField('connection_id', 'no such connection');
    });
    if (!conn.currency)
      throw invalidField('connection_id', 'is not verified yet: its account currency is unknown');
    await this.adserver.slotOf(input.placement_id, conn.id).catch((err: AppError) => {
      throw invalidField('placement_id', err.message);
    });
    checkCountries('geos', input.geos);
    checkMonths(input.first_month, input.last_month);
    const id = `prd_${ulid()}`;
    try {
      await this.repo.insertProduct({ ...input, id, name: input.name.trim(), currency: conn.currency });
    } catch (err) {
      throw fromDbError(err, PRODUCT_FIELDS) ?? err;
    }
    return this.getProduct(id);
  }

  async getProduct(id: string): Promise<Product> {
    const p = await this.repo.getProduct(id);
    if (!p) throw notFound('Product');
    return p;
  }

  async updateProduct(
    id: string,
    patch: Partial<
      Pick<Product, 'name' | 'geos' | 'first_month' | 'last_month' | 'pricing' | 'price' | 'status'>
    >,
  ): Promise<Product> {
    const p = await this.getProduct(id);
    const next = {
      name: patch.name?.trim() ?? p.name,
      geos: patch.geos ?? p.geos,
      first_month: patch.first_month ?? p.first_month,
      last_month: patch.last_month ?? p.last_month,
      pricing: patch.pricing ?? p.pricing,
      price: patch.price ?? p.price,
      status: patch.status ?? p.status,
    };
    if (patch.geos) checkCountries('geos', patch.geos);
    checkMonths(next.first_month, next.last_month);
    try {
      await this.repo.updateProduct(id, next);
    } catch (err) {
      throw fromDbError(err, PRODUCT_FIELDS) ?? err;
    }
    return this.getProduct(id);
  }

  listProducts(connectionId?: string): Promise<Product[]> {
    return this.repo.listProducts(connectionId, LIST_LIMIT);
  }

  /** The products an advertiser can book: its publisher's active ones in its currency. */
  async productsFor(advertiserId: string): Promise<Product[]> {
    const adv = await this.getAdvertiser(advertiserId);
    return (await this.listProducts()).filter(
      (p) => p.publisher === adv.publisher && p.status === 'active' && p.currency === adv.currency,
    );
  }

  /* Availability */

  /**
   * The availability calendar of a product: one entry per offered geo x month (optionally one
   * month or geo), each with its figure, holds, bookings and the figure's age; an entry never
   * fetched shows as `pending`.
   */
  async availability(productId: string, month?: string, geo?: string): Promise<Availability[]> {
    const p = await this.getProduct(productId);
    const now = this.now();
    const stored = new Map(
      (await this.repo.listCapacity(p.id, now, month, geo)).map((a) => [keyText(a), a] as const),
    );
    const months = monthsBetween(p.first_month, p.last_month).filter((m) => !month || m === month);
    const geos = p.geos.filter((g) => !geo || g === geo);
    return months.flatMap((m) =>
      geos.map(
        (g) =>
          stored.get(keyText({ product_id: p.id, geo: g, month: m })) ?? {
            product_id: p.id,
            geo: g,
            month: m,
            source: 'pending' as const,
            available: null,
            forecasted: null,
            listed: null,
            held: 0,
            booked: 0,
            remaining: null,
            at_risk: false,
            fetched_at: null,
            age_seconds: null,
            last_error: null,
          },
      ),
    );
  }

  /** Sets the publisher-listed availability (what is sold when the connection declares no forecast). */
  async setListed(
    productId: string,
    input: { geo: string; month: string; impressions: number },
  ): Promise<Availability> {
    const p = await this.getProduct(productId);
    const key = this.offered(p, input.geo, input.month, (f) => f);
    await this.repo.ensureCapacity(key);
    await this.repo.setListed(key, input.impressions);
    const conn = await this.adserver.connections.get(p.connection_id);
    if (conn.forecast_declared !== true) await this.refresh(p, key);
    return (await this.repo.getCapacity(key, this.now()))!;
  }

  /** Fetches the figure of one product x geo x month now (the operator's button). */
  async refreshNow(productId: string, input: { geo: string; month: string }): Promise<Availability> {
    const p = await this.getProduct(productId);
    const key = this.offered(p, input.geo, input.month, (f) => f);
    await this.repo.ensureCapacity(key);
    return this.refresh(p, key);
  }

  /**
   * Fetches a key's figure: the ad server's `available_impressions` when the connection forecasts,
   * "no limit" when the slot answers 501 forecast_unsupported, the listed figure (0 when none is
   * listed) when the connection declares no forecast. A failed call keeps the last figure with its
   * age and records the error. A new figure below what is held and booked marks the holders' lines
   * at risk on their timelines; nothing is cut.
   */
  private async refresh(p: Product, key: CapacityKey): Promise<Availability> {
    const before = (await this.repo.getCapacity(key, this.now()))!;
    let figure: Figure | undefined;
    let problem: string | undefined;
    try {
      const conn = await this.adserver.connections.get(p.connection_id);
      if (conn.forecast_declared !== true) {
        figure = { source: 'listed', available: before.listed ?? 0, forecasted: null };
      } else {
        const flight = monthFlight(key.month);
        const f = await this.adserver.forecast(conn.id, {
          placement_id: p.placement_id,
          ...flight,
          geo: [key.geo],
          sizes: p.sizes,
        });
        if (f.forecast)
          figure = {
            source: 'forecast',
            available: f.forecast.available_impressions,
            forecasted: f.forecast.forecasted_impressions,
          };
        else if (f.reason === 'forecast_unsupported')
          figure = { source: 'none', available: null, forecasted: null };
        else if (f.reason === 'forecast_disabled')
          figure = { source: 'listed', available: before.listed ?? 0, forecasted: null };
        else problem = f.message ?? f.reason ?? 'no forecast';
      }
    } catch (err) {
      problem = (err as Error).message;
    }
    const at = this.now();
    if (figure) await this.repo.setFigure(key, figure, at);
    else await this.repo.setFigureError(key, problem ?? 'no forecast');
    const after = (await this.repo.getCapacity(key, at))!;
    if (after.at_risk && !before.at_risk)
      for (const id of await this.repo.holdersOf(key))
        await this.repo.addEvent(id, at, 'at_risk', 'system:availability', {
          ...key,
          available: after.available,
          held: after.held,
          booked: after.booked,
        });
    return after;
  }

  /** Background refresh: forecasts older than the configured age, oldest first, one call at a time. */
  async refreshStale(signal?: AbortSignal): Promise<number> {
    const now = this.now();
    const before = new Date(now.getTime() - this.options.forecastMaxAgeMinutes * 60_000);
    const keys = await this.repo.staleForecasts(before, now.toISOString().slice(0, 7), REFRESH_BATCH);
    let done = 0;
    for (const key of keys) {
      if (signal?.aborted) break;
      const p = await this.repo.getProduct(key.product_id);
      if (!p) continue;
      await this.refresh(p, key);
      done++;
    }
    return done;
  }

  /** The capacity key of a product line, refused (naming `field`) when the product does not offer it. */
  private offered(p: Product, geo: string, month: string, field: (f: string) => string): CapacityKey {
    if (!p.geos.includes(geo))
      throw invalidField(field('geo'), `${geo} is not offered (offered: ${p.geos.join(', ')})`);
    if (month < p.first_month || month > p.last_month)
      throw invalidField(field('month'), `is outside the offer (${p.first_month} to ${p.last_month})`);
    return { product_id: p.id, geo, month };
  }

  /* Reservations */

  /**
   * Holds the impressions of every line, or none: each hold is one conditional UPDATE of its
   * capacity row inside one transaction (rows taken in key order, so two requests never wait on
   * each other in a cycle). A line that does not fit answers 409 with what remains.
   */
  async reserve(
    input: {
      advertiser_id: string;
      campaign_name: string;
      lines: { product_id: string; geo: string; month: string; impressions: number }[];
    },
    actor: string,
  ): Promise<Reservation> {
    const adv = await this.repo.getAdvertiser(input.advertiser_id);
    if (!adv) throw invalidField('advertiser_id', 'no such advertiser');
    const lines: (NewLine & { product: Product })[] = [];
    const seen = new Set<string>();
    let connectionId: string | undefined;
    let timezone = 'UTC';
    for (const [i, l] of input.lines.entries()) {
      const field = (f: string) => `lines.${i}.${f}`;
      const p = await this.repo.getProduct(l.product_id);
      if (!p) throw invalidField(field('product_id'), 'no such product');
      if (p.status !== 'active') throw invalidField(field('product_id'), 'is withdrawn');
      if (p.publisher !== adv.publisher)
        throw invalidField(field('product_id'), `belongs to publisher ${p.publisher}, not ${adv.publisher}`);
      if (p.currency !== adv.currency)
        throw invalidField(
          field('product_id'),
          `is priced in ${p.currency}, the advertiser buys in ${adv.currency}`,
        );
      if (connectionId === undefined) {
        connectionId = p.connection_id;
        timezone = (await this.adserver.connections.get(p.connection_id)).timezone ?? 'UTC';
      } else if (p.connection_id !== connectionId)
        throw invalidField(
          field('product_id'),
          'all lines of a reservation go to one ad server (one draft order)',
        );
      const key = this.offered(p, l.geo, l.month, field);
      if (monthFlight(l.month).end_date < todayIn(timezone, this.now()))
        throw invalidField(
          field('month'),
          `${l.month} has already ended in the account time zone ${timezone}`,
        );
      if (seen.has(keyText(key)))
        throw invalidField(field('month'), 'repeats an earlier line (same product, geo, month)');
      seen.add(keyText(key));
      lines.push({
        ...key,
        line_no: i + 1,
        impressions: l.impressions,
        pricing: p.pricing,
        price: p.price,
        product: p,
      });
    }
    for (const l of lines) {
      await this.repo.ensureCapacity(l);
      const cap = (await this.repo.getCapacity(l, this.now()))!;
      const fresh = cap.source === 'pending' ? await this.refresh(l.product, l) : cap;
      if (fresh.source === 'pending')
        throw new AppError(
          'bad_gateway',
          `lines.${l.line_no - 1}: no availability figure for ${l.geo} ${l.month} yet: ${fresh.last_error ?? 'the forecast failed'}`,
          { field: `lines.${l.line_no - 1}` },
        );
    }
    const id = `rsv_${ulid()}`;
    const at = this.now();
    const expires = new Date(at.getTime() + this.options.holdMinutes * 60_000);
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      for (const l of [...lines].sort(byKey)) {
        if (await repo.hold(l, l.impressions)) continue;
        const cap = (await repo.getCapacity(l, at))!;
        const remaining = Math.max(0, cap.remaining ?? 0);
        throw conflict(
          `lines.${l.line_no - 1}.impressions: ${l.impressions} asked, ${remaining} remain for ${l.geo} ${l.month}`,
          {
            field: `lines.${l.line_no - 1}.impressions`,
            remaining,
            available: cap.available,
            held: cap.held,
            booked: cap.booked,
          },
        );
      }
      await repo.insertReservation({
        id,
        advertiser_id: adv.id,
        connection_id: connectionId!,
        campaign_name: input.campaign_name.trim(),
        currency: adv.currency,
        expires_at: expires,
        at,
        lines,
      });
      await repo.addEvent(id, at, 'held', actor, {
        expires_at: expires.toISOString(),
        impressions: lines.reduce((n, l) => n + l.impressions, 0),
      });
    });
    return this.getReservation(id);
  }

  async getReservation(id: string): Promise<Reservation> {
    const r = await this.repo.getReservationRow(id);
    if (!r) throw notFound('Reservation');
    const { approving_since: _, ...rest } = r;
    return {
      ...rest,
      order_id: await this.repo.orderIdOf(r.booking_id),
      lines: await this.repo.linesOf(id),
      events: await this.repo.eventsOf(id),
    };
  }

  listReservations(filter: {
    status?: ReservationStatus;
    advertiser_id?: string;
    limit?: number;
  }): Promise<ReservationSummary[]> {
    return this.repo.listReservations(filter, filter.limit ?? 50);
  }

  /** Gives the held impressions of reservations back (one key order across all of them) and marks them. */
  private async releaseAll(
    q: Queryable,
    ids: readonly string[],
    status: 'expired' | 'rejected',
    at: Date,
    actor: string,
    reason?: string,
  ): Promise<void> {
    const repo = this.repo.with(q);
    const totals = new Map<string, CapacityKey & { n: number }>();
    for (const id of ids)
      for (const l of await repo.linesOf(id)) {
        const k = keyText(l);
        const t = totals.get(k) ?? { product_id: l.product_id, geo: l.geo, month: l.month, n: 0 };
        t.n += l.impressions;
        totals.set(k, t);
      }
    for (const t of [...totals.values()].sort(byKey)) await repo.release(t, t.n, false);
    for (const id of ids) {
      await repo.setStatus(id, status, at, reason ? { reason } : {});
      await repo.addEvent(id, at, status, actor, reason ? { reason } : {});
      await this.owe(q, id, status, at, reason ? { reason } : {});
    }
  }

  /**
   * Owes the advertiser a notice of what became of the reservation (sent by the market-notices
   * job) and tells the webhooks of the sites it books, both in the caller's transaction.
   */
  private async owe(q: Queryable, id: string, kind: NoticeKind, at: Date, detail: Record<string, unknown>) {
    const repo = this.repo.with(q);
    await repo.insertNotice(id, kind, at);
    if (!this.events) return;
    const r = (await repo.getReservationRow(id))!;
    for (const siteId of await repo.sitesOf(id))
      await this.events.recordEvent(q, {
        type: `reservation.${kind}`,
        siteId,
        key: `reservation.${kind}:${id}:${siteId ?? 'none'}`,
        occurredAt: at,
        data: {
          reservationId: id,
          advertiserId: r.advertiser_id,
          campaignName: r.campaign_name,
          status: kind,
          siteId,
          ...detail,
        },
      });
  }

  private async auditJob(id: string, action: string, after: unknown): Promise<void> {
    await this.audit.record({
      adminTokenId: null,
      actor: 'job:market-holds',
      action,
      targetType: 'market',
      targetId: id,
      status: 200,
      requestId: null,
      fields: [],
      before: { status: 'held' },
      after,
    });
  }

  /** Expires held reservations whose time is up and frees their impressions (the job; returns how many). */
  async expireDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const at = this.now();
      const ids = await this.db.tx(async (q) => {
        const repo = this.repo.with(q);
        const due = await repo.dueHolds(at, EXPIRY_BATCH);
        if (due.length) await this.releaseAll(q, due, 'expired', at, 'system:hold-expiry');
        return due;
      });
      if (ids.length) this.events?.committed();
      for (const id of ids) await this.auditJob(id, 'expire hold', { status: 'expired' });
      total += ids.length;
      if (ids.length < EXPIRY_BATCH) return total;
    }
  }

  /** The reservation's row, locked for the transaction; a 409 unless it is held. */
  private async heldRow(repo: MarketRepository, id: string, verb: string) {
    const r = await repo.getReservationRow(id, true);
    if (!r) throw notFound('Reservation');
    if (r.status !== 'held')
      throw conflict(`Reservation ${id} is ${r.status}: only a held reservation can be ${verb}`);
    return r;
  }

  /** Rejects a held reservation with a reason; its impressions are freed. */
  async reject(id: string, reason: string, actor: string): Promise<Reservation> {
    const at = this.now();
    await this.db.tx(async (q) => {
      await this.heldRow(this.repo.with(q), id, 'rejected');
      await this.releaseAll(q, [id], 'rejected', at, actor, reason.trim());
    });
    this.events?.committed();
    return this.getReservation(id);
  }

  /**
   * Changes the impressions of lines of a held reservation (its buyer's agent, before approval):
   * each line's hold grows or shrinks by the difference in one transaction, in key order; a
   * growth that does not fit is a 409 with what remains, and nothing changes. Refused once the
   * reservation is no longer held or its draft order was already sent once.
   */
  async changeHeld(
    id: string,
    changes: readonly { line_no: number; impressions: number }[],
    actor: string,
  ): Promise<Reservation> {
    const at = this.now();
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      const r = await this.heldRow(repo, id, 'changed');
      if (r.booking_id)
        throw conflict(
          `Reservation ${id}: its draft order was already sent once; ask the publisher to change it`,
        );
      const lines = new Map((await repo.linesOf(id)).map((l) => [l.line_no, l]));
      const diffs = changes.map((c) => {
        const l = lines.get(c.line_no);
        if (!l) throw invalidField('line_no', `reservation ${id} has no line ${c.line_no}`);
        return { ...l, from: l.impressions, to: c.impressions };
      });
      for (const d of diffs.sort(byKey)) {
        if (d.to > d.from && !(await repo.hold(d, d.to - d.from))) {
          const cap = (await repo.getCapacity(d, at))!;
          const remaining = Math.max(0, cap.remaining ?? 0);
          throw conflict(
            `lines.${d.line_no - 1}.impressions: ${d.to - d.from} more asked, ${remaining} remain for ${d.geo} ${d.month}`,
            { field: `lines.${d.line_no - 1}.impressions`, remaining },
          );
        }
        if (d.to < d.from) await repo.release(d, d.from - d.to, false);
        await repo.setLineImpressions(id, d.line_no, d.to);
      }
      await repo.addEvent(id, at, 'changed', actor, {
        lines: diffs.map((d) => ({ line_no: d.line_no, from: d.from, to: d.to })),
      });
    });
    return this.getReservation(id);
  }

  /**
   * Approves a held reservation: the draft order is pushed through the ad-server bookings (same
   * validation, idempotency key and retry rules as a pushed booking), and the reservation is
   * booked only once the ad server returned a DRAFT order id and a line item id for every line;
   * its holds then become bookings. A push that fails leaves it held with the error on its
   * timeline (approving again resends the same key and bytes). A hold past its time is refused.
   */
  async approve(id: string, actor: string): Promise<Reservation> {
    const at = this.now();
    const refusal = await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      const r = await repo.getReservationRow(id, true);
      if (!r) throw notFound('Reservation');
      if (r.status === 'booked') return 'booked';
      if (r.status === 'rejected' || r.status === 'expired')
        return `Reservation ${id} is ${r.status}: it can no longer be approved`;
      if (r.status === 'approving' && at.getTime() - Date.parse(r.approving_since!) < APPROVAL_STALE_MS)
        return `Reservation ${id} is being approved: its draft order push is in flight`;
      if (r.status === 'held' && Date.parse(r.expires_at) <= at.getTime()) {
        await this.releaseAll(q, [id], 'expired', at, 'system:hold-expiry');
        return `Reservation ${id} expired at ${r.expires_at}: its impressions were freed; reserve again`;
      }
      await repo.setStatus(id, 'approving', at, { approving_since: at });
      await repo.addEvent(id, at, 'approval_started', actor);
      return undefined;
    });
    if (refusal === 'booked') return this.getReservation(id);
    if (refusal) {
      this.events?.committed();
      throw conflict(refusal);
    }
    const r = (await this.repo.getReservationRow(id))!;
    let booking: Awaited<ReturnType<AdserverService['bookings']['push']>>;
    try {
      // A process that died between creating the booking and recording it left one to reuse.
      let bookingId = r.booking_id ?? (await this.repo.bookingMadeFor(r.connection_id, r.id));
      const approved = (await this.creatives?.approvedForReservation(r.id)) ?? new Map();
      if (!bookingId) bookingId = await this.createBooking(r, approved);
      else await this.carryCreatives(bookingId, approved);
      if (bookingId !== r.booking_id) await this.repo.setBooking(id, bookingId);
      booking = await this.adserver.bookings.push(bookingId);
      const missing = booking.lines.filter((l) => !l.line_item_id).map((l) => l.external_ref);
      if (!booking.order_id || missing.length || booking.pushed_revision !== booking.revision)
        throw new AppError(
          'bad_gateway',
          `POST /orders: no DRAFT ids for ${missing.length ? missing.join(', ') : 'the order'}`,
        );
    } catch (err) {
      const e = err as AppError;
      const failedAt = this.now();
      await this.db.tx(async (q) => {
        const repo = this.repo.with(q);
        await repo.setStatus(id, 'held', failedAt, {
          last_error: e.message.slice(0, 2000),
          approving_since: null,
        });
        await repo.addEvent(id, failedAt, 'approval_failed', actor, {
          code: e.code ?? 'internal_error',
          message: e.message.slice(0, 2000),
        });
      });
      throw err;
    }
    const doneAt = this.now();
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      await repo.getReservationRow(id, true);
      const lines = await repo.linesOf(id);
      for (const l of [...lines].sort(byKey)) await repo.release(l, l.impressions, true);
      await this.creatives?.attachToBooking(id, booking.id, q);
      await repo.setStatus(id, 'booked', doneAt, { last_error: null, approving_since: null });
      await repo.addEvent(id, doneAt, 'booked', actor, {
        booking_id: booking.id,
        order_id: booking.order_id,
        line_item_ids: booking.lines.map((l) => l.line_item_id),
      });
      await this.owe(q, id, 'booked', doneAt, { orderId: booking.order_id });
    });
    this.events?.committed();
    return this.getReservation(id);
  }

  /**
   * A booking made by an earlier approval whose push failed: creatives approved since (the
   * reservation was held again) are written into its lines before the push is retried.
   */
  private async carryCreatives(bookingId: string, approved: Map<number, ApprovedCreative[]>): Promise<void> {
    const booking = await this.adserver.bookings.get(bookingId);
    for (const line of booking.lines) {
      const want = approved.get(line.line_no) ?? [];
      if (JSON.stringify(want) !== JSON.stringify(line.approved_creatives))
        await this.adserver.bookings.updateLine(bookingId, line.line_no, { creatives: want });
    }
  }

  /**
   * The booking of a reservation: one line per reservation line, the campaign ref is the
   * reservation id, each line carrying the creatives approved for its reservation line.
   */
  private async createBooking(
    r: {
      id: string;
      advertiser_id: string;
      connection_id: string;
      campaign_name: string;
      currency: string;
    },
    approved: Map<number, ApprovedCreative[]>,
  ): Promise<string> {
    const adv = await this.getAdvertiser(r.advertiser_id);
    const lines = await this.repo.linesOf(r.id);
    const products = new Map<string, Product>();
    for (const l of lines)
      if (!products.has(l.product_id)) products.set(l.product_id, await this.getProduct(l.product_id));
    const booking = await this.adserver.bookings.create({
      connection_id: r.connection_id,
      currency: r.currency,
      advertiser: { name: adv.name, external_ref: adv.id },
      campaign: { name: r.campaign_name, external_ref: r.id },
      lines: lines.map((l) => {
        const p = products.get(l.product_id)!;
        return {
          placement_id: p.placement_id,
          month: l.month,
          geo: [l.geo],
          goal_impressions: l.impressions,
          sizes: p.sizes,
          creatives: approved.get(l.line_no) ?? [],
        };
      }),
    });
    return booking.id;
  }
}
