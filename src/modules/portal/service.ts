import { invalidField, notFound } from '../../lib/errors.ts';
import type { BookingDelivery } from '../adserver/types.ts';
import type { Creative, CreativeService } from '../creatives/service.ts';
import type { MarketService } from '../market/service.ts';
import type { Statement, StatementListed } from '../market/statement-repository.ts';
import type {
  Advertiser,
  Availability,
  Product,
  Reservation,
  ReservationStatus,
  ReservationSummary,
} from '../market/types.ts';

/** Who acts: the advertiser behind the request, and the credential named on its timeline. */
export interface PortalActor {
  advertiserId: string;
  tokenId: number;
}

const actorOf = (a: PortalActor) => `advertiser-token:${a.tokenId}`;

/**
 * The advertiser portal: an advertiser's own view of the marketplace. Everything is scoped to the
 * actor's advertiser — another advertiser's reservation or statement is a 404, as if it did not
 * exist — and the products offered are its publisher's active ones in its currency.
 */
export class PortalService {
  constructor(
    private readonly market: MarketService,
    private readonly creatives: CreativeService,
    private readonly bookingDelivery: (bookingId: string) => Promise<BookingDelivery>,
  ) {}

  /** The advertiser the token acts for. */
  me(a: PortalActor): Promise<Advertiser> {
    return this.market.getAdvertiser(a.advertiserId);
  }

  /** The products the advertiser can book: its publisher's active ones, priced in its currency. */
  products(a: PortalActor): Promise<Product[]> {
    return this.market.productsFor(a.advertiserId);
  }

  /** One bookable product's availability per geo and month; any other product is a 404. */
  async availability(
    a: PortalActor,
    productId: string,
    month?: string,
    geo?: string,
  ): Promise<Availability[]> {
    if (!(await this.products(a)).some((p) => p.id === productId)) throw notFound('Product');
    return this.market.availability(productId, month, geo);
  }

  reservations(
    a: PortalActor,
    q: { status?: ReservationStatus; limit?: number },
  ): Promise<ReservationSummary[]> {
    return this.market.listReservations({ ...q, advertiser_id: a.advertiserId });
  }

  /** One of the advertiser's reservations with its lines and timeline. */
  async reservation(a: PortalActor, id: string): Promise<Reservation> {
    const r = await this.market.getReservation(id);
    if (r.advertiser_id !== a.advertiserId) throw notFound('Reservation');
    return r;
  }

  /**
   * Holds impressions for the advertiser's own request, as an operator's reservation for it would:
   * held until the publisher approves or rejects, never past availability. Products must be
   * bookable by this advertiser (`lines.N.product_id` names the first that is not).
   */
  async reserve(
    a: PortalActor,
    input: {
      campaign_name: string;
      lines: { product_id: string; geo: string; month: string; impressions: number }[];
    },
  ): Promise<Reservation> {
    const bookable = new Set((await this.products(a)).map((p) => p.id));
    const i = input.lines.findIndex((l) => !bookable.has(l.product_id));
    if (i !== -1) throw invalidField(`lines.${i}.product_id`, 'is not a product your publisher offers you');
    return this.market.reserve({ ...input, advertiser_id: a.advertiserId }, actorOf(a));
  }

  /** Withdraws a held reservation of the advertiser's: its impressions are freed at once. */
  async withdraw(a: PortalActor, id: string): Promise<Reservation> {
    await this.reservation(a, id);
    return this.market.reject(id, 'Withdrawn by the advertiser', actorOf(a));
  }

  /**
   * A reservation's delivery once booked: per line and day the ad server's figures beside
   * Podium's own `/imp` and `/go` counts, with the discrepancy; `null` before it is booked.
   */
  async delivery(a: PortalActor, id: string): Promise<BookingDelivery | null> {
    const r = await this.reservation(a, id);
    return r.booking_id ? this.bookingDelivery(r.booking_id) : null;
  }

  /** The creatives of the advertiser's reservations, newest first, with their moderation state. */
  async creativesOf(a: PortalActor): Promise<Creative[]> {
    const own = await this.reservations(a, { limit: 200 });
    if (!own.length) return [];
    return this.creatives.list({ reservation_ids: own.map((r) => r.id), limit: 500 });
  }

  /**
   * Uploads a creative for a line of one of the advertiser's reservations: the same checks,
   * storage and moderation as the publisher's upload; it runs once the publisher approves it.
   */
  async upload(
    a: PortalActor,
    reservationId: string,
    lineNo: number,
    meta: { landing_url: string; name?: string | undefined },
    bytes: Buffer,
  ): Promise<{ creative: Creative; created: boolean }> {
    await this.reservation(a, reservationId);
    return this.creatives.upload(
      { reservation_id: reservationId, line_no: lineNo, landing_url: meta.landing_url, name: meta.name },
      bytes,
      actorOf(a),
    );
  }

  statements(a: PortalActor, q: { month?: string; limit?: number }): Promise<StatementListed[]> {
    return this.market.statements.list({ ...q, advertiser_id: a.advertiserId });
  }

  /** One of the advertiser's issued statements, with its lines and adjustments. */
  async statement(a: PortalActor, id: string): Promise<Statement> {
    const s = await this.market.statements.get(id);
    if (s.advertiser_id !== a.advertiserId) throw notFound('Statement');
    return s;
  }

  async statementCsv(a: PortalActor, id: string): Promise<{ filename: string; body: string }> {
    await this.statement(a, id);
    return this.market.statements.csv(id);
  }
}
