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
  name: string;
  sizes: string[];
  /** connection id → inventory_id */
  slots: Record<string, string>;
}
