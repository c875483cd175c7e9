import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Queryable, Store } from '../db.ts';
import type {
  ForecastRequest,
  ForecastResponse,
  HealthResponse,
  InventoryPage,
  OrderLineRequest,
  OrderRequest,
  OrderResponse,
  ReportRequest,
  ReportResponse,
  ReportRow,
} from '../schemas.ts';
import { addDays, daysBetween, isDate, todayIn } from './dates.ts';
import { ApiError, invalidValue, unknownId } from './errors.ts';
import { newId } from './keys.ts';
import * as repo from './repository.ts';
import { delivery, forecast as trafficForecast } from './traffic.ts';

/** Longest date range a forecast or report may span (bounds the work per request). */
export const MAX_RANGE_DAYS = 366;

/** The account context served by `GET /health`. */
export function health(a: repo.Account): HealthResponse {
  return {
    account_id: a.id,
    account_name: a.name,
    timezone: a.timezone,
    currency: a.currency,
    capabilities: { forecast: a.forecast_enabled, reporting: true, draft_booking: true },
  };
}

function encodeCursor(v: string): string {
  return Buffer.from(`c1:${v}`, 'utf8').toString('base64url');
}

function decodeCursor(c: string): string {
  const raw = Buffer.from(c, 'base64url').toString('utf8');
  if (!raw.startsWith('c1:'))
    throw new ApiError(400, 'invalid_cursor', 'cursor is not one this server issued', { field: 'cursor' });
  return raw.slice(3);
}

/** One page of the account's slots, keyset-paginated by id. */
export async function inventory(
  q: Queryable,
  a: repo.Account,
  limit = 50,
  cursor?: string,
): Promise<InventoryPage> {
  const after = cursor ? decodeCursor(cursor) : null;
  const rows = await repo.slotPage(q, a.id, after, limit + 1);
  const page = rows.slice(0, limit);
  return {
    data: page.map((s) => ({
      inventory_id: s.id,
      name: s.name,
      sizes: s.sizes,
      format: s.format,
      status: s.status,
    })),
    next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null,
  };
}

function checkRange(start: string, end: string, field: string): void {
  if (!isDate(start) || !isDate(end))
    throw invalidValue('invalid_date_range', field, `${field} holds a date that does not exist`);
  if (end < start) throw invalidValue('invalid_date_range', field, `${field}.end_date is before start_date`);
  if (daysBetween(start, end) + 1 > MAX_RANGE_DAYS)
    throw invalidValue('invalid_date_range', field, `${field} spans more than ${MAX_RANGE_DAYS} days`);
}

/** `POST /forecast`: synthetic traffic minus existing lines on the slot. */
export async function forecast(
  q: Queryable,
  a: repo.Account,
  req: ForecastRequest,
): Promise<ForecastResponse> {
  if (!a.forecast_enabled)
    throw new ApiError(501, 'forecast_unsupported', 'this ad server does not forecast');
  const slot = await repo.getSlot(q, a.id, req.inventory_id);
  if (!slot) throw unknownId('inventory_id', req.inventory_id);
  checkRange(req.flight.start_date, req.flight.end_date, 'flight');
  if (!slot.forecastable)
    throw new ApiError(501, 'forecast_unsupported', `slot ${req.inventory_id} cannot be forecast`, {
      inventory_id: slot.id,
    });
  const lines = await repo.linesOnSlot(q, a.id, slot.id, req.flight.start_date, req.flight.end_date);
  const f = trafficForecast(
    { seed: a.traffic_seed, slotId: slot.id, dailyImpressions: slot.daily_impressions },
    req.flight.start_date,
    req.flight.end_date,
    req.targeting?.geo ?? [],
    lines.map((l) => ({ start: l.start_date, end: l.end_date, goal: l.goal_impressions, geo: l.geo })),
  );
  return {
    inventory_id: slot.id,
    available_impressions: f.available,
    forecasted_impressions: f.forecasted,
    unit_type: 'IMPRESSIONS',
  };
}

/** SHA-256 of the RFC 8785 canonical form: key order and number spelling do not matter. */
export function requestHash(body: unknown): Buffer {
  return createHash('sha256')
    .update(canonicalize(body) ?? '', 'utf8')
    .digest();
}

export interface OrderResult {
  status: 200 | 201;
  body: OrderResponse;
  replayed: boolean;
}

/**
 * `POST /orders`: claim the idempotency key, then create or update the draft, all in one
 * transaction. A concurrent request with the same key waits on the claim row and then
 * replays (or conflicts); a failure rolls the claim back so nothing half-done is cached.
 */
export async function placeOrder(store: Store, a: repo.Account, req: OrderRequest): Promise<OrderResult> {
  try {
    return await placeOrderOnce(store, a, req);
  } catch (err) {
    // Two keys racing to create the same external_ref: the loser retries once and, seeing the
    // winner's committed order, updates it instead (same ids).
    if ((err as { code?: string }).code !== '23505') throw err;
    return placeOrderOnce(store, a, req);
  }
}

async function placeOrderOnce(store: Store, a: repo.Account, req: OrderRequest): Promise<OrderResult> {
  const hash = requestHash(req);
  return store.tx(async (q) => {
    if (!(await repo.claimKey(q, a.id, req.idempotency_key, hash))) {
      const prior = await repo.getKeyRecord(q, a.id, req.idempotency_key);
      if (!prior?.request_hash.equals(hash))
        throw new ApiError(
          409,
          'idempotency_conflict',
          'this Idempotency-Key was already used with a different request body; nothing was applied',
        );
      return { status: 200, body: orderResponse(prior.response as OrderResponse), replayed: true };
    }
    const result = await applyOrder(q, a, req);
    await repo.completeKey(q, a.id, req.idempotency_key, result.status, result.body);
    return result;
  });
}

/** The order response with its keys in wire order (jsonb storage does not keep key order). */
function orderResponse(o: OrderResponse): OrderResponse {
  return {
    order_id: o.order_id,
    status: o.status,
    line_items: o.line_items.map((l) => ({
      external_ref: l.external_ref,
      line_item_id: l.line_item_id,
      status: l.status,
    })),
  };
}

async function validateLines(
  q: Queryable,
  a: repo.Account,
  lines: readonly OrderLineRequest[],
): Promise<void> {
  const refs = new Set<string>();
  for (const [i, l] of lines.entries()) {
    const field = `line_items[${i}]`;
    if (refs.has(l.external_ref))
      throw invalidValue(
        'duplicate_external_ref',
        `${field}.external_ref`,
        `line external_ref ${JSON.stringify(l.external_ref)} appears twice`,
      );
    refs.add(l.external_ref);
    const slot = await repo.getSlot(q, a.id, l.inventory_id);
    if (!slot) throw unknownId('inventory_id', l.inventory_id);
    checkRange(l.flight.start_date, l.flight.end_date, `${field}.flight`);
    if (slot.status !== 'active')
      throw invalidValue(
        'inventory_archived',
        `${field}.inventory_id`,
        `slot ${slot.id} is archived and cannot be booked`,
      );
    for (const size of l.sizes)
      if (!slot.sizes.includes(size))
        throw invalidValue(
          'invalid_size',
          `${field}.sizes`,
          `size ${size} does not fit slot ${slot.id} (accepts ${slot.sizes.join(', ')})`,
        );
    for (const [j, c] of (l.creatives ?? []).entries())
      if (!l.sizes.includes(`${c.width}x${c.height}`))
        throw invalidValue(
          'invalid_size',
          `${field}.creatives[${j}]`,
          `creative ${c.width}x${c.height} is not one of the line's sizes`,
        );
  }
}

function sameLine(row: repo.LineRow, l: OrderLineRequest): boolean {
  return (
    row.slot_id === l.inventory_id &&
    row.start_date === l.flight.start_date &&
    row.end_date === l.flight.end_date &&
    row.goal_impressions === l.goal_impressions &&
    canonicalize(row.geo) === canonicalize(l.targeting?.geo ?? []) &&
    canonicalize(row.sizes) === canonicalize(l.sizes) &&
    canonicalize(row.creatives) === canonicalize(l.creatives ?? [])
  );
}

async function applyOrder(q: Queryable, a: repo.Account, req: OrderRequest): Promise<OrderResult> {
  await validateLines(q, a, req.line_items);
  const advertiserId = await repo.findOrCreateAdvertiser(
    q,
    a.id,
    newId('adv'),
    req.advertiser.name,
    req.advertiser.external_ref ?? null,
  );
  const existing = await repo.findOrder(q, a.id, req.order.external_ref);
  const orderId = existing?.id ?? newId('ord');
  if (!existing)
    await repo.insertOrder(q, {
      id: orderId,
      accountId: a.id,
      externalRef: req.order.external_ref,
      advertiserId,
      name: req.order.name,
    });
  const have = new Map((existing ? await repo.orderLines(q, orderId) : []).map((l) => [l.external_ref, l]));
  let changed = !existing || existing.name !== req.order.name || existing.advertiser_id !== advertiserId;
  const out: OrderResponse['line_items'] = [];
  for (const l of req.line_items) {
    const fields = {
      slot_id: l.inventory_id,
      start_date: l.flight.start_date,
      end_date: l.flight.end_date,
      goal_impressions: l.goal_impressions,
      geo: l.targeting?.geo ?? [],
      sizes: l.sizes,
      creatives: l.creatives ?? [],
    };
    const row = have.get(l.external_ref);
    const id = row?.id ?? newId('li');
    if (!row) await repo.insertLine(q, { id, order_id: orderId, external_ref: l.external_ref, ...fields });
    else if (!sameLine(row, l)) await repo.updateLine(q, { id, ...fields });
    if (!row || !sameLine(row, l)) changed = true;
    out.push({ external_ref: l.external_ref, line_item_id: id, status: 'DRAFT' });
  }
  // Any edit returns the order to DRAFT: POST /orders must never leave new content serving.
  if (existing && changed)
    await repo.updateOrder(q, orderId, { name: req.order.name, advertiserId, status: 'DRAFT' });
  return {
    status: existing ? 200 : 201,
    body: { order_id: orderId, status: 'DRAFT', line_items: out },
    replayed: false,
  };
}

/** `POST /reports`: simulated delivery of live lines, `total` = Σ `daily` by construction. */
export async function report(
  q: Queryable,
  a: repo.Account,
  req: ReportRequest,
  now: Date,
): Promise<ReportResponse> {
  if (!req.line_item_ids === !req.order_id)
    throw new ApiError(400, 'bad_request', 'send exactly one of line_item_ids and order_id', {
      field: 'line_item_ids',
    });
  const { start_date: start, end_date: end } = req.date_range;
  checkRange(start, end, 'date_range');
  let lines: repo.LineRow[];
  if (req.order_id) {
    if (!(await repo.orderOfAccount(q, a.id, req.order_id))) throw unknownId('order_id', req.order_id);
    lines = await repo.orderLines(q, req.order_id);
  } else {
    const ids = [...new Set(req.line_item_ids)];
    const found = new Map((await repo.linesByIds(q, a.id, ids)).map((l) => [l.id, l]));
    const missing = ids.find((id) => !found.has(id));
    if (missing) throw unknownId('line_item_id', missing);
    lines = ids.map((id) => found.get(id)!);
  }
  // Only days that have fully ended in the account's zone have delivery; today and later show 0.
  const today = todayIn(a.timezone, now);
  const day = (l: repo.LineRow, date: string): { impressions: number; clicks: number } =>
    l.status === 'LIVE' && date < today
      ? delivery(
          a.traffic_seed,
          { id: l.id, start: l.start_date, end: l.end_date, goal: l.goal_impressions },
          date,
        )
      : { impressions: 0, clicks: 0 };
  const days = daysBetween(start, end) + 1;
  const daily = req.granularity === 'daily';
  const count = daily ? lines.length * days : lines.length;
  const limit = req.limit ?? 50;
  const offset = req.cursor ? Number(decodeCursor(req.cursor)) : 0;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > count)
    throw new ApiError(400, 'invalid_cursor', 'cursor is not one this server issued', { field: 'cursor' });
  const rows: ReportRow[] = [];
  for (let i = offset; i < Math.min(count, offset + limit); i++) {
    if (daily) {
      const l = lines[Math.floor(i / days)]!;
      const date = addDays(start, i % days);
      rows.push({ line_item_id: l.id, date, ...day(l, date) });
    } else {
      const l = lines[i]!;
      const sum = { impressions: 0, clicks: 0 };
      for (let d = 0; d < days; d++) {
        const v = day(l, addDays(start, d));
        sum.impressions += v.impressions;
        sum.clicks += v.clicks;
      }
      rows.push({ line_item_id: l.id, ...sum });
    }
  }
  return { rows, next_cursor: offset + limit < count ? encodeCursor(String(offset + limit)) : null };
}
