import { randomBytes } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import canonicalize from 'canonicalize';
import {
  ErrorBody,
  ForecastResponse,
  InventoryPage,
  OrderResponse,
  ReportResponse,
  type ReportRow,
} from '../schemas.ts';
import { classifyHealth } from './health.ts';
import type { HttpResult } from './http.ts';
import type { Run } from './runner.ts';

// The scenarios of research §5.2, in the order the marketplace meets them. Each records one
// result per check; a check whose precondition failed is skipped with the reason.

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<TSchema, ValidateFunction>();

/** Schema problems of a body against one of the contract's schemas. */
export function shape(schema: TSchema, body: unknown): string[] {
  let v = validators.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    validators.set(schema, v);
  }
  return v(body) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || 'body'} ${e.message}`);
}

/** Where each group of checks lives in the contract (shown with failures). */
export const S = {
  transport: 'Connection record: base_url (https:// enforced)',
  health: 'Account context (GET /health) and Connection states for a failed GET /health',
  auth: 'Authentication 1-8',
  errors: 'Errors: error body {code, message, details?}',
  inventory: 'GET /inventory; Conventions 4 (cursor pagination); Inventory slot',
  forecast: 'POST /forecast rules 1-3',
  orders: 'POST /orders rules 1-9; States: Order and line item',
  reports: 'POST /reports rules 1-7; Conventions 1',
};

const DAY_MS = 86_400_000;
/** The calendar date `offsetDays` from now in `timezone` (UTC when unknown). */
export function dateIn(timezone: string | undefined, offsetDays: number): string {
  const d = new Date(Date.now() + offsetDays * DAY_MS);
  try {
    return new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone ?? 'UTC',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(d);
  } catch {
    return d.toISOString().slice(0, 10);
  }
}
/** Shifts a `YYYY-MM-DD` date by whole days. */
export function addDays(date: string, n: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Transport and `GET /health`. Returns false when nothing else can run. */
export async function healthScenario(run: Run, baseUrl: string): Promise<boolean> {
  run.expect(
    'transport.https',
    S.transport,
    baseUrl.startsWith('https://') ? [] : ['base URL is not https:// (the marketplace refuses it)'],
  );
  const res = await run.call('health', 'GET', '/health');
  const c = classifyHealth(res);
  if (!res) {
    run.fail('health.reachable', S.health, `the marketplace would show "unreachable": ${run.describe(res)}`);
    return false;
  }
  run.expect(
    'health.reachable',
    S.health,
    c.state === 'unreachable' ? [`the marketplace would show "unreachable": ${c.problems.join('; ')}`] : [],
  );
  run.expect(
    'health.authorized',
    S.health,
    c.state === 'auth_error' || c.state === 'forbidden'
      ? [`the marketplace would show "${c.state}" with this key`]
      : [],
  );
  if (res.status !== 200) {
    run.skip('health.fields', S.health, 'no 200 answer from /health');
    return false;
  }
  run.expect(
    'health.fields',
    S.health,
    c.problems.map((p) => `invalid_response: ${p}`),
    'connected',
  );
  const body = res.json as { timezone?: string; capabilities?: { forecast?: unknown } } | undefined;
  run.timezone = typeof body?.timezone === 'string' ? body.timezone : undefined;
  run.forecastCapable = body?.capabilities?.forecast === true;
  return true;
}

/** Missing and wrong key → 401; optional limited key → 403. */
export async function authScenario(run: Run, limitedKey: string | undefined): Promise<void> {
  const none = await run.call('no key', 'GET', '/health', { key: null });
  run.expect(
    'auth.missing_key',
    S.auth,
    none?.status === 401 ? [] : [`expected 401 without a key, got ${run.describe(none)}`],
  );
  const wrongKey = `checker-wrong-${randomBytes(12).toString('hex')}`;
  run.secrets.push(wrongKey);
  const wrong = await run.call('wrong key', 'GET', '/inventory', { key: wrongKey, query: { limit: '1' } });
  run.expect(
    'auth.wrong_key',
    S.auth,
    wrong?.status === 401 ? [] : [`expected 401 for an invalid key, got ${run.describe(wrong)}`],
  );
  if (limitedKey && !run.forecastCapable) {
    run.skip(
      'auth.missing_scope',
      S.auth,
      'capabilities.forecast is false: the forecast scope is probed on /forecast, which is never called then',
      false,
    );
    return;
  }
  if (!limitedKey) {
    run.skip(
      'auth.missing_scope',
      S.auth,
      'no limited key given (set ADSERVER_LIMITED_KEY to a key without the forecast scope)',
      false,
    );
    return;
  }
  const f = await run.call('limited key', 'POST', '/forecast', {
    key: limitedKey,
    body: {
      inventory_id: run.slots[0]?.inventory_id ?? 'x',
      flight: { start_date: dateIn(run.timezone, 30), end_date: dateIn(run.timezone, 31) },
    },
  });
  run.expect(
    'auth.missing_scope',
    S.auth,
    f?.status === 403 ? [] : [`expected 403 for a key without the forecast scope, got ${run.describe(f)}`],
    'ok',
    false,
  );
}

/** Walks `GET /inventory` to the end: loops, duplicates, size format. */
export async function inventoryScenario(run: Run): Promise<void> {
  const probe = await run.call('inventory probe', 'GET', '/inventory', { query: { limit: '1' } });
  const probeOk = probe?.status === 200 && Array.isArray((probe.json as { data?: unknown })?.data);
  run.expect(
    'inventory.probe',
    S.inventory,
    probeOk ? [] : [`connect probe (limit=1) failed: ${run.describe(probe)}`],
  );
  if (!probeOk) {
    run.skip('inventory.walk', S.inventory, 'probe failed');
    return;
  }
  const PAGE_CAP = 500;
  const problems: string[] = [];
  const ids = new Set<string>();
  const dup = new Set<string>();
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    if (++pages > PAGE_CAP) {
      problems.push(`more than ${PAGE_CAP} pages: the cursor never ends`);
      break;
    }
    const res = await run.call('inventory page', 'GET', '/inventory', {
      query: { limit: '50', ...(cursor ? { cursor } : {}) },
    });
    if (res?.status !== 200) {
      problems.push(`page ${pages}: ${run.describe(res)}`);
      break;
    }
    const bad = shape(InventoryPage, res.json);
    if (bad.length) problems.push(...bad.map((b) => `page ${pages}: ${b}`));
    const page = res.json as {
      data?: { inventory_id?: string; sizes?: string[]; status?: string }[];
      next_cursor?: string | null;
    };
    for (const s of page.data ?? []) {
      if (typeof s.inventory_id !== 'string') continue;
      if (ids.has(s.inventory_id)) dup.add(s.inventory_id);
      ids.add(s.inventory_id);
      run.slots.push({
        inventory_id: s.inventory_id,
        sizes: Array.isArray(s.sizes) ? s.sizes : [],
        status: s.status,
      });
    }
    const next = page.next_cursor;
    if (next === undefined || next === null) break;
    if (cursors.has(next)) {
      problems.push(`cursor ${JSON.stringify(next.slice(0, 40))} came back twice: the walk loops`);
      break;
    }
    cursors.add(next);
    cursor = next;
  }
  run.expect('inventory.walk', S.inventory, problems, `${ids.size} slots in ${pages} page(s)`);
  run.expect(
    'inventory.unique_ids',
    S.inventory,
    dup.size ? [`duplicate inventory_id: ${[...dup].slice(0, 5).join(', ')}`] : [],
  );
}

/** Forecast invariants, or 501 per capability. */
export async function forecastScenario(run: Run): Promise<void> {
  const start = dateIn(run.timezone, 30);
  const flight = { start_date: start, end_date: addDays(start, 29) };
  const active = run.slots.filter((s) => s.status !== 'archived');
  // A server that declares no forecasting is never sent a forecast, as the marketplace never sends
  // one: whatever its /forecast answers cannot reach a booking (Forecast rule 1).
  if (!run.forecastCapable) {
    for (const id of [
      'forecast.capability',
      'forecast.invariants',
      'forecast.geo_narrows',
      'forecast.unknown_id',
      'forecast.latency',
    ])
      run.skip(id, S.forecast, 'capabilities.forecast is false: /forecast is never called', false);
    return;
  }
  const unknown = await run.call('forecast unknown', 'POST', '/forecast', {
    body: { inventory_id: `checker-unknown-${run.runId}`, flight },
  });
  const expected404 =
    unknown?.status === 404 && (unknown.json as { code?: string })?.code === 'inventory_not_found';
  run.expect(
    'forecast.unknown_id',
    S.forecast,
    expected404
      ? []
      : [`expected 404 inventory_not_found for an unknown inventory_id, got ${run.describe(unknown)}`],
  );
  let answer: HttpResult | null = null;
  let slotId: string | undefined;
  const unsupported: string[] = [];
  for (const s of active.slice(0, 10)) {
    const res = await run.call('forecast', 'POST', '/forecast', {
      body: { inventory_id: s.inventory_id, flight },
    });
    if (res?.status === 501 && (res.json as { code?: string })?.code === 'forecast_unsupported') {
      unsupported.push(s.inventory_id);
      continue;
    }
    answer = res;
    slotId = s.inventory_id;
    break;
  }
  if (!answer || !slotId) {
    const why = active.length
      ? `every slot tried answered 501 forecast_unsupported (${unsupported.length})`
      : 'no active slot in the inventory';
    run.fail('forecast.capability', S.forecast, `${why}, yet capabilities.forecast is true`);
    for (const id of ['forecast.invariants', 'forecast.geo_narrows', 'forecast.latency'])
      run.skip(id, S.forecast, 'no forecast answer');
    return;
  }
  run.expect(
    'forecast.capability',
    S.forecast,
    answer.status === 200 ? [] : [`expected 200 or 501 forecast_unsupported, got ${run.describe(answer)}`],
  );
  const f = answer.json as {
    inventory_id?: string;
    available_impressions: number;
    forecasted_impressions: number;
  };
  const problems = answer.status === 200 ? shape(ForecastResponse, f) : ['no 200 answer'];
  if (!problems.length) {
    if (f.available_impressions > f.forecasted_impressions)
      problems.push(
        `available_impressions ${f.available_impressions} > forecasted_impressions ${f.forecasted_impressions}`,
      );
    if (f.inventory_id !== slotId)
      problems.push(`inventory_id ${JSON.stringify(f.inventory_id)} does not echo ${slotId}`);
  }
  run.expect(
    'forecast.invariants',
    S.forecast,
    problems,
    `${slotId}: ${f?.available_impressions} of ${f?.forecasted_impressions}`,
  );
  run.expect(
    'forecast.latency',
    S.forecast,
    answer.ms < 1000 ? [] : [`answered in ${Math.round(answer.ms)} ms (expected well under 1 s)`],
    `${Math.round(answer.ms)} ms`,
  );
  if (problems.length) {
    run.skip('forecast.geo_narrows', S.forecast, 'no valid worldwide forecast');
    return;
  }
  const geo = await run.call('forecast geo', 'POST', '/forecast', {
    body: { inventory_id: slotId, flight, targeting: { geo: ['DE'] } },
  });
  const g = geo?.json as { available_impressions: number; forecasted_impressions: number } | undefined;
  const geoProblems =
    geo?.status === 200 ? shape(ForecastResponse, g) : [`geo forecast: ${run.describe(geo)}`];
  if (!geoProblems.length && g) {
    if (g.forecasted_impressions > f.forecasted_impressions)
      geoProblems.push(
        `geo DE forecasted ${g.forecasted_impressions} > worldwide ${f.forecasted_impressions}`,
      );
    if (g.available_impressions > f.available_impressions)
      geoProblems.push(`geo DE available ${g.available_impressions} > worldwide ${f.available_impressions}`);
    if (g.available_impressions > g.forecasted_impressions)
      geoProblems.push('geo DE: available > forecasted');
  }
  run.expect('forecast.geo_narrows', S.forecast, geoProblems);
}

export interface OrderIds {
  order_id: string;
  line_items: { external_ref: string; line_item_id: string }[];
}

/** The idempotency matrix of `POST /orders`; returns the created order's ids for the reports scenario. */
export async function ordersScenario(run: Run): Promise<OrderIds | undefined> {
  const slot = run.slots.find((s) => s.status !== 'archived' && s.sizes.some((z) => /^\d+x\d+$/.test(z)));
  if (!slot) {
    run.fail('orders.create', S.orders, 'no active slot with a WIDTHxHEIGHT size to book');
    return undefined;
  }
  const size = slot.sizes.find((z) => /^\d+x\d+$/.test(z))!;
  const [w, h] = size.split('x').map(Number) as [number, number];
  const start = dateIn(run.timezone, 60);
  const flight = { start_date: start, end_date: addDays(start, 27) };
  const ref = `adserver-check-${run.runId}`;
  const line = (n: number, creatives: unknown[]) => ({
    external_ref: `${ref}-line-${n}`,
    inventory_id: slot.inventory_id,
    flight,
    goal_impressions: 1000 * n,
    sizes: [size],
    creatives,
  });
  const tag = `<iframe src="https://cdn.example.test/c/${ref}?go=%2Fgo%2Fabc&amp;x=1" width="${w}" height="${h}"></iframe>`;
  const body = (key: string, name = 'adserver-check draft (safe to delete)') => ({
    idempotency_key: key,
    advertiser: { name: 'adserver-check test advertiser' },
    order: { name, external_ref: ref },
    line_items: [
      line(1, [{ type: 'third_party_tag', width: w, height: h, tag }]),
      line(2, [
        {
          type: 'image',
          width: w,
          height: h,
          image_url: 'https://cdn.example.test/i.png',
          click_url: 'https://market.example.test/go/abc',
          impression_pixel_url: 'https://market.example.test/imp/abc',
        },
      ]),
    ],
  });
  const post = (what: string, b: { idempotency_key: string; [k: string]: unknown }) =>
    run.call(what, 'POST', '/orders', { body: b, headers: { 'idempotency-key': b.idempotency_key } });
  const draftProblems = (res: HttpResult | null, want: number[]): string[] => {
    if (!res || !want.includes(res.status))
      return [`expected HTTP ${want.join('/')}, got ${run.describe(res)}`];
    return shape(OrderResponse, res.json);
  };

  const k1 = `adserver-check-${run.runId}-1`;
  const created = await post('order create', body(k1));
  if (!run.expect('orders.create', S.orders, draftProblems(created, [201]), 'order and both lines DRAFT'))
    return undefined;
  run.pass('orders.creative_shapes', S.orders, 'third_party_tag and image accepted');
  const first = created!.json as OrderIds;
  const sentLinks = goLinkStrings(body(k1).line_items);

  const replay = await post('order replay', body(k1));
  // Compared in canonical form: a server may spell the same JSON with another key order.
  const same = (r: HttpResult | null) => canonicalize(r?.json) === canonicalize(created!.json);
  run.expect('orders.replay', S.orders, [
    ...draftProblems(replay, [200]),
    ...(same(replay) ? [] : ['replay body differs from the original (a second order?)']),
  ]);

  const b1 = body(k1);
  const reordered = {
    line_items: b1.line_items.map((l) => Object.fromEntries(Object.entries(l).reverse())),
    order: b1.order,
    advertiser: b1.advertiser,
    idempotency_key: k1,
  };
  const re = await post('order replay reordered', reordered);
  run.expect('orders.replay_reordered', S.orders, [
    ...draftProblems(re, [200]),
    ...(same(re) ? [] : ['a JSON-equal body with keys in another order was not replayed']),
  ]);

  const conflict = await post('order conflict', body(k1, 'changed name'));
  run.expect(
    'orders.conflict',
    S.orders,
    conflict?.status === 409
      ? []
      : [`same Idempotency-Key with a different body: expected 409, got ${run.describe(conflict)}`],
  );

  const k2 = `adserver-check-${run.runId}-2`;
  const changed = body(k2, 'adserver-check draft, renamed');
  changed.line_items[0]!.goal_impressions = 1500;
  changed.line_items.push(line(3, []));
  const upd = await post('order update', changed);
  const updProblems = draftProblems(upd, [200]);
  if (!updProblems.length) {
    const u = upd!.json as OrderIds;
    if (u.order_id !== first.order_id)
      updProblems.push(`order_id changed on update (${first.order_id} → ${u.order_id})`);
    for (const l of first.line_items) {
      const now = u.line_items.find((x) => x.external_ref === l.external_ref);
      if (now?.line_item_id !== l.line_item_id)
        updProblems.push(`line_item_id of ${l.external_ref} changed on update`);
    }
    const added = u.line_items.find((x) => x.external_ref === `${ref}-line-3`);
    if (!added || first.line_items.some((l) => l.line_item_id === added.line_item_id))
      updProblems.push('the missing line was not created with its own id');
  }
  run.expect('orders.update_by_external_ref', S.orders, updProblems, 'same ids, missing line added');

  // Orders rule 6: the contract has no read of a stored creative, but where an answer shows one,
  // every string in it carrying a /go/ link must be one the checker sent, byte for byte.
  const shown = [created, upd].flatMap((r) => [...goLinkStrings(r?.json)]);
  const rewritten = [...new Set(shown.filter((x) => !sentLinks.has(x)))];
  run.expect(
    'orders.click_link_kept',
    S.orders,
    rewritten.map((x) => `the answer shows a /go/ link changed from what was sent: ${x.slice(0, 200)}`),
    shown.length
      ? `${shown.length} echoed /go/ link(s) kept exactly as sent`
      : 'the answers show no stored creative: nothing to compare',
  );

  const k3 = `adserver-check-${run.runId}-3`;
  const conc = { ...body(k3), order: { name: 'adserver-check concurrent', external_ref: `${ref}-c` } };
  conc.line_items = conc.line_items.map((l) => ({ ...l, external_ref: `${l.external_ref}-c` }));
  const both = await Promise.all([post('order concurrent', conc), post('order concurrent', conc)]);
  const orderIds = new Set(
    both.filter((r) => r && r.status < 300).map((r) => (r!.json as OrderIds).order_id),
  );
  const concProblems: string[] = [];
  if (!both.some((r) => r?.status === 201))
    concProblems.push(
      `neither concurrent request created the order (${both.map((r) => run.describe(r)).join(', ')})`,
    );
  if (orderIds.size > 1) concProblems.push('two orders created for one Idempotency-Key');
  for (const r of both)
    if (r && r.status >= 300 && r.status !== 409) concProblems.push(`unexpected ${run.describe(r)}`);
  run.expect('orders.concurrent_same_key', S.orders, concProblems, 'one order');

  const badBody = {
    ...body(`adserver-check-${run.runId}-4`),
    order: { name: 'x', external_ref: `${ref}-bad` },
  };
  const unknown = await post('order unknown slot', {
    ...badBody,
    line_items: [{ ...badBody.line_items[0]!, inventory_id: `checker-unknown-${run.runId}` }],
  });
  run.expect(
    'orders.unknown_inventory',
    S.orders,
    unknown?.status === 404 ? [] : [`expected 404 for an unknown inventory_id, got ${run.describe(unknown)}`],
  );
  const badRange = { ...badBody, idempotency_key: `adserver-check-${run.runId}-5` };
  const inverted = await post('order bad range', {
    ...badRange,
    line_items: [
      { ...badRange.line_items[0]!, flight: { start_date: flight.end_date, end_date: flight.start_date } },
    ],
  });
  run.expect(
    'orders.invalid_values',
    S.orders,
    inverted?.status === 422
      ? []
      : [`expected 422 for end_date before start_date, got ${run.describe(inverted)}`],
  );
  return upd?.status === 200 ? (upd.json as OrderIds) : first;
}

/** A `/go/` click link, plain or percent-encoded (as inside a tag's URL). */
const GO_LINK = /\/go\/|%2Fgo%2F/i;

/** Every string in a JSON value that carries a `/go/` link (tags and click URLs). */
export function goLinkStrings(v: unknown, out = new Set<string>(), depth = 0): Set<string> {
  if (depth > 32) return out;
  if (typeof v === 'string') {
    if (GO_LINK.test(v)) out.add(v);
  } else if (Array.isArray(v)) for (const x of v) goLinkStrings(x, out, depth + 1);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) goLinkStrings(x, out, depth + 1);
  return out;
}

/** `POST /reports`: unknown id, `total` = Σ `daily`, pagination, day boundaries. */
export async function reportsScenario(run: Run, order: OrderIds | undefined): Promise<void> {
  const today = dateIn(run.timezone, 0);
  const unknown = await run.call('report unknown', 'POST', '/reports', {
    body: {
      line_item_ids: [`checker-unknown-${run.runId}`],
      date_range: { start_date: addDays(today, -7), end_date: today },
    },
  });
  run.expect(
    'reports.unknown_id',
    S.reports,
    unknown?.status === 404 ? [] : [`expected 404 for an unknown line_item_id, got ${run.describe(unknown)}`],
  );
  if (!order) {
    for (const id of [
      'reports.total_equals_daily',
      'reports.pagination',
      'reports.day_boundaries',
      'reports.drafts_deliver_nothing',
    ])
      run.skip(id, S.reports, 'needs line items: run with --allow-writes against a sandbox');
    return;
  }
  const ids = order.line_items.map((l) => l.line_item_id);
  const start = dateIn(run.timezone, 60);
  const range = { start_date: start, end_date: addDays(start, 6) };
  const total = await run.call('report total', 'POST', '/reports', {
    body: { line_item_ids: ids, date_range: range },
  });
  const daily: ReportRow[] = [];
  const pageProblems: string[] = [];
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    if (page > 200) {
      pageProblems.push('more than 200 pages: the cursor never ends');
      break;
    }
    const res = await run.call('report daily', 'POST', '/reports', {
      body: {
        line_item_ids: ids,
        date_range: range,
        granularity: 'daily',
        limit: 5,
        ...(cursor ? { cursor } : {}),
      },
    });
    if (res?.status !== 200) {
      pageProblems.push(`daily page ${page}: ${run.describe(res)}`);
      break;
    }
    pageProblems.push(...shape(ReportResponse, res.json));
    const body = res.json as { rows: ReportRow[]; next_cursor?: string | null };
    daily.push(...(body.rows ?? []));
    if (!body.next_cursor || body.next_cursor === cursor) break;
    cursor = body.next_cursor;
  }
  const keys = daily.map((r) => `${r.line_item_id}|${r.date}`);
  if (new Set(keys).size !== keys.length)
    pageProblems.push('a (line_item_id, date) row appears on two pages');
  run.expect('reports.pagination', S.reports, pageProblems, `${daily.length} daily rows`);

  const sumProblems =
    total?.status === 200 ? shape(ReportResponse, total.json) : [`total report: ${run.describe(total)}`];
  if (!sumProblems.length) {
    const rows = (total!.json as { rows: ReportRow[] }).rows;
    for (const id of ids) {
      const t = rows.find((r) => r.line_item_id === id);
      const mine = daily.filter((r) => r.line_item_id === id);
      const imp = mine.reduce((a, r) => a + r.impressions, 0);
      const clk = mine.reduce((a, r) => a + r.clicks, 0);
      if (!t) sumProblems.push(`no total row for ${id}`);
      else if (t.impressions !== imp || t.clicks !== clk)
        sumProblems.push(`${id}: total ${t.impressions}/${t.clicks} ≠ Σ daily ${imp}/${clk}`);
    }
  }
  run.expect('reports.total_equals_daily', S.reports, sumProblems);

  const dayProblems: string[] = [];
  for (const r of daily)
    if (!r.date || r.date < range.start_date || r.date > range.end_date)
      dayProblems.push(`daily row dated ${r.date} outside ${range.start_date}..${range.end_date}`);
  const one = await run.call('report one day', 'POST', '/reports', {
    body: { line_item_ids: [ids[0]], date_range: { start_date: start, end_date: start } },
  });
  const oneRow = (one?.json as { rows?: ReportRow[] } | undefined)?.rows?.[0];
  const dayRow = daily.find((r) => r.line_item_id === ids[0] && r.date === start);
  if (one?.status !== 200 || !oneRow) dayProblems.push(`single-day report: ${run.describe(one)}`);
  else if (dayRow && (oneRow.impressions !== dayRow.impressions || oneRow.clicks !== dayRow.clicks))
    dayProblems.push(
      `the ${start} total (${oneRow.impressions}) differs from the ${start} daily row (${dayRow.impressions}): days are cut in different zones`,
    );
  run.expect('reports.day_boundaries', S.reports, dayProblems.slice(0, 3));

  // Orders rule 1 and Reports rule 3: the lines were created as drafts moments ago and nothing
  // activated them, so nothing served them: every figure is zero, in their flight and up to today.
  const recent = await run.call('report drafts', 'POST', '/reports', {
    body: { line_item_ids: ids, date_range: { start_date: addDays(today, -7), end_date: today } },
  });
  const draftRows = [
    ...daily,
    ...((total?.json as { rows?: ReportRow[] } | undefined)?.rows ?? []),
    ...((recent?.json as { rows?: ReportRow[] } | undefined)?.rows ?? []),
  ];
  const delivered = draftRows.filter((r) => r.impressions !== 0 || r.clicks !== 0);
  run.expect(
    'reports.drafts_deliver_nothing',
    S.reports,
    [
      ...(recent?.status === 200 ? [] : [`report of the last 7 days: ${run.describe(recent)}`]),
      ...delivered
        .slice(0, 3)
        .map(
          (r) =>
            `draft line ${r.line_item_id}${r.date ? ` on ${r.date}` : ''} reports ${r.impressions} impressions, ${r.clicks} clicks: a draft nothing activated cannot deliver`,
        ),
    ],
    `${draftRows.length} rows of never-activated drafts, all zero`,
  );
}

/** Run-wide: every error body has the contract's shape and no answer ever contains a key. */
export function runWideChecks(run: Run): void {
  const shapeProblems: string[] = [];
  const leaks: string[] = [];
  for (const { what, res } of run.seen) {
    if (res.status >= 400)
      for (const p of shape(ErrorBody, res.json)) shapeProblems.push(`${what} (HTTP ${res.status}): ${p}`);
    const all = res.text + JSON.stringify(res.headers);
    if (run.secrets.some((s) => s && all.includes(s)))
      leaks.push(`${what} (HTTP ${res.status}) echoed a key`);
  }
  run.expect(
    'errors.body_shape',
    S.errors,
    [...new Set(shapeProblems)],
    `${run.seen.filter((s) => s.res.status >= 400).length} error answers checked`,
  );
  run.expect('auth.key_never_echoed', S.auth, [...new Set(leaks)]);
}
