// The ad-server shapes are the server's own (a self-contained types file), so the two cannot drift.
import type { Capability } from '../../src/modules/adserver/types.ts';

export type { Booking, BookingLine, BookingSummary } from '../../src/modules/adserver/orders.ts';
export type {
  BookingDelivery,
  Connection,
  Placement,
  Push,
  Slot,
} from '../../src/modules/adserver/types.ts';

/** An error answer of the admin API: `{code, message, details?}`, with the 422 field when named. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Fired when the API says the session is gone, so the shell returns to sign-in. */
export const SIGNED_OUT_EVENT = 'podium:signed-out';

function csrfToken(): string {
  const entry = document.cookie.split('; ').find((c) => c.startsWith('podium_csrf='));
  return entry ? decodeURIComponent(entry.slice('podium_csrf='.length)) : '';
}

/** Calls the admin API with the session cookie, echoing the CSRF token on writes. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken();
  const res = await fetch(`/api/admin/v1${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return undefined as T;
  const json = await res.json().catch(() => ({}));
  if (!res.ok) {
    if (res.status === 401 && path !== '/session') window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
    throw new ApiError(res.status, json.code ?? 'error', json.message ?? res.statusText, json.details?.field);
  }
  return json as T;
}

export interface Page<T> {
  data: T[];
  meta: { total: number };
}
export interface Site {
  id: number;
  domain: string;
  name: string;
}
export interface Template {
  id: number;
  name: string;
}
export interface SiteToken {
  id: number;
  name: string;
  hint: string;
  createdAt: string;
  revokedAt: string | null;
}
export interface Brand {
  id: number;
  name: string;
  slug: string;
  rating: number;
  logo: { rectangular: string; square: string; backgroundColor: string };
}
export interface Offer {
  id: number;
  brandId: number;
  offerText: string;
  bonusCode: string;
  bonusWageringRequirement: number;
}
export interface ToplistItem {
  /** Absent on an item added in the console and not saved yet; kept on save so the wire item id stays stable. */
  id?: number;
  position: number;
  brandId: number;
  offerId: number;
  dealId?: number;
  isLocked?: boolean;
}
export interface Toplist {
  id: number;
  siteId: number;
  templateId: number;
  name: string;
  slug: string;
  geo: { type: string; code: string; name: string };
  locked: boolean;
  liveFrom: string | null;
  liveUntil: string | null;
  liveVersion: string | null;
  draftUpdatedAt: string;
  items: ToplistItem[];
}
export interface Edition {
  id: number;
  version: string;
  publishedAt: string;
  publishedBy: number | null;
}

/** The parts of a published edition's wire document that the console compares. */
export interface WireItem {
  id: number;
  position: number;
  brand: { id: number; name: string; rating: number };
  offer: { id: number; offerText: string } & Record<string, unknown>;
}
export interface WireToplist {
  version: string;
  name: string;
  publishedAt: string;
  items: WireItem[];
}

/** The four capabilities the verify probe and real use confirm (ad-server contract). */
export const CAPABILITIES: readonly Capability[] = [
  'inventory_read',
  'forecast',
  'reporting',
  'draft_booking',
];

export interface SyncSummary {
  ok: boolean;
  pages: number;
  slots: number;
  added: number;
  problems: string[];
}
