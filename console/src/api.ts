// The ad-server shapes are the server's own (a self-contained types file), so the two cannot drift.
import type { Capability } from '../../src/modules/adserver/types.ts';
import type {
  EditionMeta,
  ToplistItem as ServerItem,
  Toplist as ServerToplist,
} from '../../src/modules/catalog/types.ts';

export type { Booking, BookingLine, BookingSummary } from '../../src/modules/adserver/orders.ts';
export type { SyncSummary } from '../../src/modules/adserver/service.ts';
export type {
  BookingDelivery,
  Connection,
  Placement,
  Push,
  Slot,
} from '../../src/modules/adserver/types.ts';
export type { Statement, StatementListed } from '../../src/modules/market/statement-repository.ts';
export type {
  Availability,
  Product,
  Reservation,
  ReservationSummary,
} from '../../src/modules/market/types.ts';

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
  return answered<T>(res, path);
}

/** The JSON of an admin API answer, or its {@link ApiError}; a lost session signs the console out. */
async function answered<T>(res: Response, path: string): Promise<T> {
  const json = await res.json().catch(() => ({}));
  if (!res.ok) {
    if (res.status === 401 && path !== '/session') window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
    throw new ApiError(res.status, json.code ?? 'error', json.message ?? res.statusText, json.details?.field);
  }
  return json as T;
}

/** Uploads a file as the raw request body (an image for a creative), with the CSRF token; JSON answer as {@link api}. */
export async function upload<T>(path: string, file: Blob): Promise<T> {
  const res = await fetch(`/api/admin/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': file.type || 'application/octet-stream', 'x-csrf-token': csrfToken() },
    credentials: 'same-origin',
    body: file,
  });
  return answered<T>(res, path);
}

export type { PageMeta } from '../../src/lib/paging.ts';
export type { AdminToken, SiteToken } from '../../src/modules/access/types.ts';
/** A list answer of the admin API: one page of rows and the server's paging meta. */
export type { Page } from '../../src/modules/catalog/crud.ts';
export type { Brand, Offer, Site, Template } from '../../src/modules/catalog/types.ts';
export type { Creative } from '../../src/modules/creatives/service.ts';
export type { Program } from '../../src/modules/tracking/types.ts';
export type Edition = EditionMeta;

/** A draft item; an item added in the console and not saved yet has no id, deal or lock (kept on save so the wire item id stays stable). */
export type ToplistItem = Omit<ServerItem, 'id' | 'dealId' | 'isLocked'> &
  Partial<Pick<ServerItem, 'id' | 'dealId' | 'isLocked'>>;
export type Toplist = Omit<ServerToplist, 'items'> & { items: ToplistItem[] };

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
