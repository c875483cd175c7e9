import type { BannerLinkInput } from '../tracking/banner-repository.ts';

/** Domain types of the ad-server integration (marketplace side). Wire names follow the contract. */

export type Environment = 'production' | 'sandbox';
export type CapabilityState = 'confirmed' | 'not_verified';
export type Capability = 'inventory_read' | 'forecast' | 'reporting' | 'draft_booking';
/** Outcome of the last verify probe (spec: "Connection states shown for a failed GET /health"). */
export type ProbeState =
  | 'unverified'
  | 'connected'
  | 'auth_error'
  | 'forbidden'
  | 'unreachable'
  | 'invalid_response';

/** The connection record as the admin API shows it: never the API key. */
export interface Connection {
  id: string;
  publisher: string;
  environment: Environment;
  base_url: string;
  account_id: string | null;
  account_name: string | null;
  timezone: string | null;
  currency: string | null;
  /** `capabilities.forecast` as `/health` declared it; null before the first successful probe. */
  forecast_declared: boolean | null;
  capabilities: Record<Capability, CapabilityState>;
  status: 'connected' | 'error';
  state: ProbeState;
  last_error: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A connection with its sealed key, inside the module only. */
export interface StoredConnection extends Connection {
  apiKeySealed: string;
}

export interface Slot {
  inventory_id: string;
  name: string;
  sizes: string[];
  format: string | null;
  status: 'active' | 'archived';
  seen_at: string;
}

export interface Placement {
  id: number;
  publisher: string;
  /** The site the placement is on; its lines' banner codes are bound to it. */
  site_id: number | null;
  name: string;
  sizes: string[];
  /** connection id → inventory_id */
  slots: Record<string, string>;
}

/** A push as stored: the key and the exact bytes sent under it. */
export interface Push {
  idempotency_key: string;
  booking_id: string;
  revision: number;
  body: string;
  status: 'pending' | 'succeeded' | 'failed' | 'conflict';
  http_status: number | null;
  calls: number;
  error: string | null;
}

/** One day of a line: the ad server's figures beside Podium's own /imp and /go counts. */
export interface DeliveryDay {
  date: string;
  impressions: number;
  clicks: number;
  podium_impressions: number;
  podium_clicks: number;
}

/** A booking's delivery per line; discrepancies are two-decimal strings, null when the ad server counted nothing. */
export interface BookingDelivery {
  booking_id: string;
  order_id: string | null;
  timezone: string;
  lines: {
    line_no: number;
    external_ref: string;
    line_item_id: string | null;
    month: string;
    days: DeliveryDay[];
    totals: Omit<DeliveryDay, 'date'> & {
      impression_discrepancy_pct: string | null;
      click_discrepancy_pct: string | null;
    };
  }[];
}

/** A creative approved for a line, as the operator enters it; the line's tag is generated from it. */
export interface ApprovedCreative {
  /** The image on the marketplace's CDN (https). */
  image_url: string;
  /** Where a click lands (after `/go/{code}`). */
  landing_url: string;
  width: number;
  height: number;
}

/** Makes a line creative's banner code (the same code for the same owner) and its frame URL. */
export type BannerCodes = (input: BannerLinkInput) => Promise<{ code: string; frameUrl: string }>;
