import type { Queryable } from '../db.ts';
import type { Creative, Scope } from '../schemas.ts';

// The only place with SQL for the reference server.

export interface Account {
  id: string;
  name: string;
  timezone: string;
  currency: string;
  forecast_enabled: boolean;
  traffic_seed: number;
}

export interface KeyRow {
  id: string;
  account_id: string;
  hint: string;
  label: string;
  scopes: Scope[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export interface SlotRow {
  id: string;
  name: string;
  sizes: string[];
  format: string;
  status: 'active' | 'archived';
  daily_impressions: number;
  forecastable: boolean;
}

export interface LineRow {
  id: string;
  order_id: string;
  external_ref: string;
  slot_id: string;
  start_date: string;
  end_date: string;
  goal_impressions: number;
  geo: string[];
  sizes: string[];
  creatives: Creative[];
  status: 'DRAFT' | 'LIVE';
}

/** Line columns as the service reads them, qualified by table alias `p`. */
function lineCols(p: string): string {
  return `${p}.id, ${p}.order_id, ${p}.external_ref, ${p}.slot_id, to_char(${p}.start_date, 'YYYY-MM-DD') AS start_date,
  to_char(${p}.end_date, 'YYYY-MM-DD') AS end_date, ${p}.goal_impressions::float8 AS goal_impressions, ${p}.geo,
  ${p}.sizes, ${p}.creatives, ${p}.status`;
}

export async function insertAccount(q: Queryable, a: Account): Promise<void> {
  await q.query(
    'INSERT INTO accounts (id, name, timezone, currency, forecast_enabled, traffic_seed) VALUES ($1,$2,$3,$4,$5,$6)',
    [a.id, a.name, a.timezone, a.currency, a.forecast_enabled, a.traffic_seed],
  );
}

export async function getAccount(q: Queryable, id: string): Promise<Account | undefined> {
  return (await q.query<Account>('SELECT * FROM accounts WHERE id = $1', [id]))[0];
}

export async function listAccounts(q: Queryable): Promise<Account[]> {
  return q.query<Account>('SELECT * FROM accounts ORDER BY created_at, id');
}

export async function insertKey(
  q: Queryable,
  k: {
    id: string;
    accountId: string;
    hash: Buffer;
    hint: string;
    label: string;
    scopes: readonly Scope[];
    expiresAt?: Date | null;
  },
): Promise<void> {
  await q.query(
    'INSERT INTO api_keys (id, account_id, key_hash, hint, label, scopes, expires_at) VALUES ($1,$2,$3,$4,$5,$6,$7)',
    [k.id, k.accountId, k.hash, k.hint, k.label, k.scopes, k.expiresAt ?? null],
  );
}

/** The live key with this hash (not revoked, not expired at `now`). */
export async function findLiveKey(q: Queryable, hash: Buffer, now: Date): Promise<KeyRow | undefined> {
  const rows = await q.query<KeyRow>(
    `SELECT id, account_id, hint, label, scopes, created_at, expires_at, revoked_at FROM api_keys
     WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
    [hash, now],
  );
  return rows[0];
}

export async function listKeys(q: Queryable, accountId: string): Promise<KeyRow[]> {
  return q.query<KeyRow>(
    `SELECT id, account_id, hint, label, scopes, created_at, expires_at, revoked_at FROM api_keys
     WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
}

/** Revokes a key; false when no such live key. */
export async function revokeKey(q: Queryable, id: string, now: Date): Promise<boolean> {
  const rows = await q.query(
    'UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id',
    [id, now],
  );
  return rows.length > 0;
}

export async function upsertSlot(q: Queryable, accountId: string, s: SlotRow): Promise<void> {
  await q.query(
    `INSERT INTO slots (account_id, id, name, sizes, format, status, daily_impressions, forecastable)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8)
     ON CONFLICT (account_id, id) DO UPDATE SET name = EXCLUDED.name, sizes = EXCLUDED.sizes,
       format = EXCLUDED.format, status = EXCLUDED.status, daily_impressions = EXCLUDED.daily_impressions,
       forecastable = EXCLUDED.forecastable`,
    [accountId, s.id, s.name, s.sizes, s.format, s.status, s.daily_impressions, s.forecastable],
  );
}

/** One page of slots after `afterId` (keyset on id). */
export async function slotPage(
  q: Queryable,
  accountId: string,
  afterId: string | null,
  limit: number,
): Promise<SlotRow[]> {
  return q.query<SlotRow>(
    `SELECT id, name, sizes, format, status, daily_impressions, forecastable FROM slots
     WHERE account_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3`,
    [accountId, afterId, limit],
  );
}

export async function getSlot(q: Queryable, accountId: string, id: string): Promise<SlotRow | undefined> {
  const rows = await q.query<SlotRow>(
    'SELECT id, name, sizes, format, status, daily_impressions, forecastable FROM slots WHERE account_id = $1 AND id = $2',
    [accountId, id],
  );
  return rows[0];
}

/** Lines of the account on a slot whose flight overlaps the range. */
export async function linesOnSlot(
  q: Queryable,
  accountId: string,
  slotId: string,
  start: string,
  end: string,
): Promise<LineRow[]> {
  return q.query<LineRow>(
    `SELECT ${lineCols('l')}
     FROM line_items l JOIN orders o ON o.id = l.order_id
     WHERE o.account_id = $1 AND l.slot_id = $2 AND l.start_date <= $4::date AND l.end_date >= $3::date`,
    [accountId, slotId, start, end],
  );
}

/** Claims an idempotency key; false when a row for it exists (waits for a concurrent claimer). */
export async function claimKey(q: Queryable, accountId: string, key: string, hash: Buffer): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO idempotency_keys (account_id, key, request_hash, status_code, response) VALUES ($1,$2,$3,0,'null')
     ON CONFLICT DO NOTHING RETURNING key`,
    [accountId, key, hash],
  );
  return rows.length > 0;
}

export async function getKeyRecord(
  q: Queryable,
  accountId: string,
  key: string,
): Promise<{ request_hash: Buffer; status_code: number; response: unknown } | undefined> {
  const rows = await q.query<{ request_hash: Uint8Array; status_code: number; response: unknown }>(
    'SELECT request_hash, status_code, response FROM idempotency_keys WHERE account_id = $1 AND key = $2',
    [accountId, key],
  );
  const r = rows[0];
  return r && { ...r, request_hash: Buffer.from(r.request_hash) };
}

export async function completeKey(
  q: Queryable,
  accountId: string,
  key: string,
  status: number,
  response: unknown,
): Promise<void> {
  await q.query(
    'UPDATE idempotency_keys SET status_code = $3, response = $4 WHERE account_id = $1 AND key = $2',
    [accountId, key, status, JSON.stringify(response)],
  );
}

/** Finds the advertiser by name or creates it; never duplicates (unique per account and name). */
export async function findOrCreateAdvertiser(
  q: Queryable,
  accountId: string,
  id: string,
  name: string,
  externalRef: string | null,
): Promise<string> {
  const rows = await q.query<{ id: string }>(
    `INSERT INTO advertisers (id, account_id, name, external_ref) VALUES ($1,$2,$3,$4)
     ON CONFLICT (account_id, name) DO UPDATE SET external_ref = COALESCE(EXCLUDED.external_ref, advertisers.external_ref)
     RETURNING id`,
    [id, accountId, name, externalRef],
  );
  return rows[0]!.id;
}

export async function countAdvertisers(q: Queryable, accountId: string): Promise<number> {
  return (
    await q.query<{ n: number }>('SELECT count(*)::int AS n FROM advertisers WHERE account_id = $1', [
      accountId,
    ])
  )[0]!.n;
}

export async function findOrder(
  q: Queryable,
  accountId: string,
  externalRef: string,
): Promise<{ id: string; name: string; advertiser_id: string; status: string } | undefined> {
  const rows = await q.query<{ id: string; name: string; advertiser_id: string; status: string }>(
    'SELECT id, name, advertiser_id, status FROM orders WHERE account_id = $1 AND external_ref = $2 FOR UPDATE',
    [accountId, externalRef],
  );
  return rows[0];
}

export async function insertOrder(
  q: Queryable,
  o: { id: string; accountId: string; externalRef: string; advertiserId: string; name: string },
): Promise<void> {
  await q.query(
    'INSERT INTO orders (id, account_id, external_ref, advertiser_id, name) VALUES ($1,$2,$3,$4,$5)',
    [o.id, o.accountId, o.externalRef, o.advertiserId, o.name],
  );
}

/** Sets the order's changed header fields and status; no-op when nothing differs. */
export async function updateOrder(
  q: Queryable,
  id: string,
  f: { name: string; advertiserId: string; status: 'DRAFT' | 'LIVE' },
): Promise<void> {
  await q.query(
    `UPDATE orders SET name = $2, advertiser_id = $3, status = $4, updated_at = now()
     WHERE id = $1 AND (name, advertiser_id, status) IS DISTINCT FROM ($2, $3, $4)`,
    [id, f.name, f.advertiserId, f.status],
  );
}

export async function orderLines(q: Queryable, orderId: string): Promise<LineRow[]> {
  return q.query<LineRow>(
    `SELECT ${lineCols('l')} FROM line_items l WHERE l.order_id = $1 ORDER BY l.created_at, l.id`,
    [orderId],
  );
}

/** A line's editable fields as parameters, in the order both its insert and its update bind them. */
function editableParams(l: Omit<LineRow, 'id' | 'status' | 'order_id' | 'external_ref'>): unknown[] {
  return [
    l.slot_id,
    l.start_date,
    l.end_date,
    l.goal_impressions,
    l.geo,
    l.sizes,
    JSON.stringify(l.creatives),
  ];
}

export async function insertLine(q: Queryable, l: Omit<LineRow, 'status'>): Promise<void> {
  await q.query(
    `INSERT INTO line_items (id, order_id, external_ref, slot_id, start_date, end_date, goal_impressions, geo, sizes, creatives)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
    [l.id, l.order_id, l.external_ref, ...editableParams(l)],
  );
}

/** Rewrites a line's editable fields and puts it back to DRAFT (an edit needs ad-ops review again). */
export async function updateLine(
  q: Queryable,
  l: Omit<LineRow, 'status' | 'order_id' | 'external_ref'>,
): Promise<void> {
  await q.query(
    `UPDATE line_items SET slot_id = $2, start_date = $3, end_date = $4, goal_impressions = $5, geo = $6, sizes = $7,
       creatives = $8, status = 'DRAFT', updated_at = now() WHERE id = $1`,
    [l.id, ...editableParams(l)],
  );
}

/** Moves every line of an order to LIVE (the console's activation); false when no such order. */
export async function activateOrder(q: Queryable, orderId: string): Promise<boolean> {
  const rows = await q.query(
    "UPDATE orders SET status = 'LIVE', updated_at = now() WHERE id = $1 RETURNING id",
    [orderId],
  );
  if (!rows.length) return false;
  await q.query("UPDATE line_items SET status = 'LIVE', updated_at = now() WHERE order_id = $1", [orderId]);
  return true;
}

/** Lines of the account with the given ids. */
export async function linesByIds(
  q: Queryable,
  accountId: string,
  ids: readonly string[],
): Promise<LineRow[]> {
  return q.query<LineRow>(
    `SELECT ${lineCols('l')}
     FROM line_items l JOIN orders o ON o.id = l.order_id WHERE o.account_id = $1 AND l.id = ANY($2::text[])`,
    [accountId, ids],
  );
}

export async function orderOfAccount(q: Queryable, accountId: string, orderId: string): Promise<boolean> {
  return (
    (await q.query('SELECT 1 FROM orders WHERE account_id = $1 AND id = $2', [accountId, orderId])).length > 0
  );
}
