import type { Creative, OrderRequest } from '../../../packages/adserver-kit/src/schemas.ts';
import { escapeHtml } from '../../lib/html.ts';
import type { ApprovedCreative } from './types.ts';

export { todayIn } from '../../../packages/adserver-kit/src/reference/dates.ts';

/** A booked line as stored. */
export interface BookingLine {
  line_no: number;
  external_ref: string;
  placement_id: number;
  inventory_id: string;
  month: string;
  start_date: string;
  end_date: string;
  geo: string[];
  goal_impressions: number;
  sizes: string[];
  /** The creatives approved for the line, as entered. */
  approved_creatives: ApprovedCreative[];
  /** The third-party tags generated from them, stored and pushed exactly as generated. */
  creatives: Creative[];
  click_codes: string[];
  impression_codes: string[];
  line_item_id: string | null;
}

export interface Booking {
  id: string;
  connection_id: string;
  external_ref: string;
  advertiser_name: string;
  advertiser_ref: string | null;
  campaign_name: string;
  currency: string;
  revision: number;
  pushed_revision: number | null;
  order_id: string | null;
  last_push_error: string | null;
  lines: BookingLine[];
  created_at: string;
  updated_at: string;
}

/** A booking as listed: its order and push state, the connection's publisher and how many lines it has. */
export type BookingSummary = Omit<Booking, 'lines' | 'advertiser_ref' | 'updated_at'> & {
  publisher: string;
  lines: number;
  /** The sites of its lines' placements, ascending (site-less placements add none). */
  site_ids: number[];
};

/** First and last calendar day of a `YYYY-MM` month (the flight, read in the account's zone by the ad server). */
export function monthFlight(month: string): { start_date: string; end_date: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return { start_date: `${month}-01`, end_date: `${month}-${String(last).padStart(2, '0')}` };
}

/**
 * The third-party tag of a line's creative (contract creative shape A): an iframe of the frame
 * Podium serves at `/ad/{code}`, which shows the current approved image linked to `/go/{code}` and
 * fires `/imp/{code}`. No ad-server macro is added (contract `POST /orders` rule 7).
 */
export function thirdPartyTag(frameUrl: string, width: number, height: number): string {
  return `<iframe src="${escapeHtml(frameUrl)}" width="${width}" height="${height}" frameborder="0" scrolling="no" marginwidth="0" marginheight="0" style="border:0;overflow:hidden"></iframe>`;
}

/** The deterministic order label: the same booking always gets the same name. */
export function orderName(b: Pick<Booking, 'advertiser_name' | 'campaign_name' | 'external_ref'>): string {
  return `${b.advertiser_name} – ${b.campaign_name} [${b.external_ref}]`.slice(0, 300);
}

/** The `POST /orders` body of a booking; creatives and tags are passed exactly as stored. */
export function orderBody(b: Booking, idempotencyKey: string): OrderRequest {
  return {
    idempotency_key: idempotencyKey,
    advertiser: b.advertiser_ref
      ? { name: b.advertiser_name, external_ref: b.advertiser_ref }
      : { name: b.advertiser_name },
    order: { name: orderName(b), external_ref: b.external_ref },
    line_items: b.lines.map((l) => ({
      external_ref: l.external_ref,
      inventory_id: l.inventory_id,
      flight: { start_date: l.start_date, end_date: l.end_date },
      goal_impressions: l.goal_impressions,
      ...(l.geo.length ? { targeting: { geo: l.geo } } : {}),
      sizes: l.sizes,
      ...(l.creatives.length ? { creatives: l.creatives } : {}),
    })),
  };
}

/** Checks a `POST /orders` answer: DRAFT order, and one DRAFT line per sent external_ref. Returns ids or a problem. */
export function readOrderResponse(
  json: unknown,
  sentRefs: readonly string[],
): { order_id: string; lineIds: Map<string, string> } | { problem: string } {
  const body = json as { order_id?: unknown; status?: unknown; line_items?: unknown } | null;
  if (!body || typeof body.order_id !== 'string' || !body.order_id) return { problem: 'order_id missing' };
  if (body.status !== 'DRAFT')
    return { problem: `order status ${JSON.stringify(body.status)}, expected DRAFT` };
  if (!Array.isArray(body.line_items)) return { problem: 'line_items missing' };
  const lineIds = new Map<string, string>();
  for (const li of body.line_items as {
    external_ref?: unknown;
    line_item_id?: unknown;
    status?: unknown;
  }[]) {
    if (typeof li?.external_ref !== 'string' || typeof li.line_item_id !== 'string' || !li.line_item_id)
      return { problem: 'a line item lacks external_ref or line_item_id' };
    if (li.status !== 'DRAFT')
      return { problem: `line ${li.external_ref} status ${JSON.stringify(li.status)}, expected DRAFT` };
    lineIds.set(li.external_ref, li.line_item_id);
  }
  const missing = sentRefs.filter((r) => !lineIds.has(r));
  if (missing.length) return { problem: `no line_item_id for ${missing.join(', ')}` };
  return { order_id: body.order_id, lineIds };
}
