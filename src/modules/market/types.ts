/** Domain types of the marketplace. Wire names are snake_case; money is a decimal string. */

export interface Contact {
  name: string;
  email: string;
  role?: string;
}

export interface Advertiser {
  id: string;
  publisher: string;
  name: string;
  /** The publisher account's currency (from the ad server's /health), copied at creation. */
  currency: string;
  contacts: Contact[];
  created_at: string;
  updated_at: string;
}

export type Pricing = 'cpm' | 'flat';

export interface Product {
  id: string;
  connection_id: string;
  publisher: string;
  placement_id: number;
  inventory_id: string;
  site_id: number | null;
  name: string;
  sizes: string[];
  geos: string[];
  first_month: string;
  last_month: string;
  pricing: Pricing;
  /** Per thousand impressions (cpm) or per month (flat), exact decimal. */
  price: string;
  currency: string;
  status: 'active' | 'withdrawn';
  created_at: string;
  updated_at: string;
}

export type CapacitySource = 'forecast' | 'listed' | 'none' | 'pending';

/** Availability of one product x geo x month. */
export interface Availability {
  product_id: string;
  geo: string;
  month: string;
  source: CapacitySource;
  /** The figure sold against; null when there is none (source none: no limit; pending: not known). */
  available: number | null;
  forecasted: number | null;
  listed: number | null;
  held: number;
  booked: number;
  /** available − held − booked; null without a figure. Negative when a forecast dropped below the holds. */
  remaining: number | null;
  /** Holds and bookings exceed the figure: their lines are at risk (nothing is cut). */
  at_risk: boolean;
  fetched_at: string | null;
  age_seconds: number | null;
  last_error: string | null;
}

export type ReservationStatus = 'held' | 'approving' | 'booked' | 'rejected' | 'expired';

export interface ReservationLine {
  line_no: number;
  product_id: string;
  geo: string;
  month: string;
  impressions: number;
  pricing: Pricing;
  price: string;
  /** The line's availability is over-committed (a forecast dropped below what is held). */
  at_risk: boolean;
  line_item_id: string | null;
}

export interface ReservationEvent {
  at: string;
  kind: string;
  actor: string;
  detail: Record<string, unknown>;
}

export interface Reservation {
  id: string;
  advertiser_id: string;
  connection_id: string;
  campaign_name: string;
  currency: string;
  status: ReservationStatus;
  expires_at: string;
  booking_id: string | null;
  order_id: string | null;
  reason: string | null;
  last_error: string | null;
  lines: ReservationLine[];
  events: ReservationEvent[];
  created_at: string;
  updated_at: string;
}

export type ReservationSummary = Omit<Reservation, 'lines' | 'events'> & {
  lines: number;
  impressions: number;
};

/** What became of a reservation that its advertiser is told of. */
export type NoticeKind = 'booked' | 'rejected' | 'expired';

/** How a notice ended: mailed to the contacts, logged (no SMTP server), no contact to mail, or given up. */
export type NoticeOutcome = 'mailed' | 'logged' | 'no_contacts' | 'failed';

/** A notice the market-notices job has claimed. */
export interface NoticeRow {
  id: number;
  reservation_id: string;
  kind: NoticeKind;
  attempts: number;
}
