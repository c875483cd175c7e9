import canonicalize from 'canonicalize';
import { ErrorBody, ForecastResponse, ReportRow } from '../schemas.ts';
import type { HttpResult } from './http.ts';
import type { Run } from './runner.ts';
import { addDays, dateIn, type OrderIds, S, shape } from './scenarios.ts';

// The numbered rules the first scenarios leave open: limits and page sizes, the key in a URL,
// request validation (400 vs 422), the Idempotency-Key header, the reports' order_id and row
// rules, repeatable reads and 429 with Retry-After. Each is one check id of the README's table.

const R = {
  conventions: 'Conventions for all endpoints 4-6',
  inventoryLimit: 'GET /inventory: limit default 50, minimum 1, maximum 200; Limits',
  reportsLimit: 'POST /reports: limit default 50, maximum 200; Limits',
  keyInUrl: 'Authentication 7; Conventions 6: credentials never in URLs',
  errors: 'Errors: 400 bad_request (invalid JSON, wrong type, missing field)',
  rate: 'Limits: rate limit response 429 with Retry-After in seconds',
  orders: 'POST /orders: Idempotency-Key header; rules 5 and 9',
  reports: 'POST /reports rules 4 and 6; Conventions 1 (inclusive ranges)',
} as const;

/** A 4xx refusal of a request that breaks a rule: 400 or 422, with the error body. */
function refused(run: Run, res: HttpResult | null, what: string): string[] {
  if (res && (res.status === 400 || res.status === 422)) return [];
  return [`${what}: expected 400 or 422, got ${run.describe(res)}`];
}

type InventoryBody = { data?: unknown[]; next_cursor?: string | null };

/** `limit` bounds of `GET /inventory` and pages never longer than `limit`. */
export async function inventoryBounds(run: Run): Promise<void> {
  const problems: string[] = [];
  for (const bad of ['0', '201', 'ten']) {
    const res = await run.call(`inventory limit=${bad}`, 'GET', '/inventory', { query: { limit: bad } });
    problems.push(...refused(run, res, `limit=${bad}`));
  }
  for (const good of ['1', '200']) {
    const res = await run.call(`inventory limit=${good}`, 'GET', '/inventory', { query: { limit: good } });
    if (res?.status !== 200) problems.push(`limit=${good} is allowed, got ${run.describe(res)}`);
  }
  run.expect('inventory.limit_bounds', R.inventoryLimit, problems, '0, 201 and non-integers refused');

  const sizes: string[] = [];
  let cursor: string | undefined;
  for (let page = 1; page <= 3; page++) {
    const res = await run.call('inventory limit=1 page', 'GET', '/inventory', {
      query: { limit: '1', ...(cursor ? { cursor } : {}) },
    });
    const body = res?.json as InventoryBody | undefined;
    if (res?.status !== 200 || !Array.isArray(body?.data)) {
      sizes.push(`limit=1 page ${page}: ${run.describe(res)}`);
      break;
    }
    if (body.data.length > 1) sizes.push(`limit=1 page ${page} holds ${body.data.length} rows`);
    if (!body.next_cursor) break;
    cursor = body.next_cursor;
  }
  const plain = await run.call('inventory default limit', 'GET', '/inventory');
  const rows = (plain?.json as InventoryBody | undefined)?.data;
  if (plain?.status !== 200 || !Array.isArray(rows)) sizes.push(`no limit: ${run.describe(plain)}`);
  else if (rows.length > 50) sizes.push(`a page without limit holds ${rows.length} rows (default is 50)`);
  else if (rows.length < 50 && (plain.json as InventoryBody).next_cursor && run.slots.length > 50)
    sizes.push(`a page without limit holds ${rows.length} rows though more follow (default is 50)`);
  run.expect('inventory.page_size', R.inventoryLimit, sizes, 'no page longer than its limit');
}

/** Conventions 5: reads are side-effect free, so the same read gives the same inventory. */
export async function repeatableReads(run: Run): Promise<void> {
  const ids = async () => {
    const res = await run.call('inventory repeat', 'GET', '/inventory', { query: { limit: '200' } });
    const data = (res?.json as InventoryBody | undefined)?.data;
    return res?.status === 200 && Array.isArray(data)
      ? data.map((d) => (d as { inventory_id?: unknown }).inventory_id).join('\n')
      : undefined;
  };
  const [a, b] = [await ids(), await ids()];
  run.expect(
    'reads.repeatable',
    'Conventions for all endpoints 5: read calls are side-effect free',
    a !== undefined && a === b ? [] : ['two identical GET /inventory calls returned different slots'],
  );
}

/**
 * Authentication 7: a key in the query string is never accepted. A real key is needed for the
 * check to mean anything, and query strings land in access logs: it uses the limited key, or the
 * main key only on a run allowed to write (a sandbox); otherwise it is skipped.
 */
export async function keyInUrl(run: Run, apiKey: string | undefined): Promise<void> {
  if (!apiKey) {
    run.skip(
      'auth.key_in_url_refused',
      R.keyInUrl,
      'needs a key it may expose in a query string: a limited key, or --allow-writes against a sandbox',
      false,
    );
    return;
  }
  const problems: string[] = [];
  for (const name of ['api_key', 'access_token', 'key']) {
    const res = await run.call(`key in URL (${name})`, 'GET', '/inventory', {
      key: null,
      query: { limit: '1', [name]: apiKey },
    });
    // 401 (no header), or 400 from a server refusing unknown query parameters first: never served.
    if (res?.status !== 401 && res?.status !== 400)
      problems.push(`?${name}=KEY without a header: expected 401, got ${run.describe(res)}`);
  }
  run.expect('auth.key_in_url_refused', R.keyInUrl, problems, 'a key in the query string is refused');
}

/** Errors: invalid JSON and a wrong field type are 400 with the error body. */
export async function badRequests(run: Run): Promise<void> {
  const flight = { start_date: dateIn(run.timezone, 30), end_date: dateIn(run.timezone, 31) };
  // On /forecast, or on /reports when the server declares no forecasting (never called then).
  const [json, typed] = run.forecastCapable
    ? [
        await run.call('invalid JSON', 'POST', '/forecast', { body: '{"inventory_id": ' }),
        await run.call('wrong type', 'POST', '/forecast', { body: { inventory_id: 42, flight } }),
      ]
    : [
        await run.call('invalid JSON', 'POST', '/reports', { body: '{"line_item_ids": ' }),
        await run.call('wrong type', 'POST', '/reports', {
          body: { line_item_ids: 42, date_range: flight },
        }),
      ];
  const missing = await run.call('missing field', 'POST', '/reports', { body: { granularity: 'total' } });
  const problems: string[] = [];
  for (const [what, res] of [
    ['invalid JSON', json],
    [run.forecastCapable ? 'inventory_id as a number' : 'line_item_ids as a number', typed],
    ['/reports without date_range', missing],
  ] as const) {
    if (res?.status !== 400) problems.push(`${what}: expected 400, got ${run.describe(res)}`);
    else problems.push(...shape(ErrorBody, res.json).map((p) => `${what}: ${p}`));
  }
  run.expect('errors.bad_request', R.errors, problems, 'invalid JSON, wrong type and missing field → 400');
}

/** `POST /forecast` rule 2 (every 501 is `forecast_unsupported`) and a bad date range → 422. */
export async function forecastRules(run: Run): Promise<void> {
  if (!run.forecastCapable) {
    for (const id of ['forecast.unsupported_code', 'forecast.invalid_range'])
      run.skip(id, S.forecast, 'capabilities.forecast is false', false);
    return;
  }
  const start = dateIn(run.timezone, 30);
  const flight = { start_date: start, end_date: addDays(start, 6) };
  const problems: string[] = [];
  let answered = 0;
  for (const s of run.slots.filter((x) => x.status !== 'archived').slice(0, 10)) {
    const res = await run.call('forecast each slot', 'POST', '/forecast', {
      body: { inventory_id: s.inventory_id, flight },
    });
    if (res?.status === 200) {
      answered++;
      problems.push(...shape(ForecastResponse, res.json).map((p) => `${s.inventory_id}: ${p}`));
    } else if (res?.status === 501) {
      if ((res.json as { code?: unknown } | undefined)?.code !== 'forecast_unsupported')
        problems.push(`${s.inventory_id}: 501 without code forecast_unsupported (${run.describe(res)})`);
    } else problems.push(`${s.inventory_id}: expected 200 or 501, got ${run.describe(res)}`);
  }
  run.expect('forecast.unsupported_code', S.forecast, problems, `${answered} slot(s) forecast, the rest 501`);
  const slot = run.slots.find((x) => x.status !== 'archived');
  const inverted = slot
    ? await run.call('forecast inverted range', 'POST', '/forecast', {
        body: { inventory_id: slot.inventory_id, flight: { start_date: flight.end_date, end_date: start } },
      })
    : null;
  run.expect(
    'forecast.invalid_range',
    S.forecast,
    inverted?.status === 422
      ? []
      : [`end_date before start_date: expected 422, got ${run.describe(inverted)}`],
  );
}

/** `POST /orders`: the Idempotency-Key header's rules, a line without creative, a size that does not fit. */
export async function ordersRules(run: Run): Promise<void> {
  const slot = run.slots.find((s) => s.status !== 'archived' && s.sizes.some((z) => /^\d+x\d+$/.test(z)));
  if (!slot) {
    for (const id of ['orders.idempotency_header', 'orders.empty_line', 'orders.size_misfit'])
      run.skip(id, R.orders, 'no active slot with a WIDTHxHEIGHT size');
    return;
  }
  const size = slot.sizes.find((z) => /^\d+x\d+$/.test(z))!;
  const start = dateIn(run.timezone, 90);
  const ref = `adserver-check-${run.runId}-rules`;
  const body = (key: string, n: string, sizes = [size]) => ({
    idempotency_key: key,
    advertiser: { name: 'adserver-check test advertiser' },
    order: { name: `adserver-check draft ${n} (safe to delete)`, external_ref: `${ref}-${n}` },
    line_items: [
      {
        external_ref: `${ref}-${n}-line`,
        inventory_id: slot.inventory_id,
        flight: { start_date: start, end_date: addDays(start, 6) },
        goal_impressions: 1000,
        sizes,
      },
    ],
  });
  const k = (n: string) => `${ref}-${n}`;
  const noHeader = await run.call('order without header', 'POST', '/orders', { body: body(k('h1'), 'h1') });
  const otherHeader = await run.call('order header ≠ body', 'POST', '/orders', {
    body: body(k('h2'), 'h2'),
    headers: { 'idempotency-key': `${k('h2')}-other` },
  });
  const hdr: string[] = [];
  for (const [what, res] of [
    ['no Idempotency-Key header', noHeader],
    ['Idempotency-Key header different from idempotency_key', otherHeader],
  ] as const)
    if (!res || res.status < 400 || res.status >= 500)
      hdr.push(`${what}: expected a 4xx refusal, got ${run.describe(res)}`);
  run.expect('orders.idempotency_header', R.orders, hdr, 'required and equal to the body key');

  const empty = await run.call('order without creatives', 'POST', '/orders', {
    body: body(k('e'), 'e'),
    headers: { 'idempotency-key': k('e') },
  });
  const line = (empty?.json as OrderIds | undefined)?.line_items?.[0] as { status?: string } | undefined;
  run.expect(
    'orders.empty_line',
    R.orders,
    empty?.status === 201 && line?.status === 'DRAFT'
      ? []
      : [`a line without creatives: expected 201 with a DRAFT line, got ${run.describe(empty)}`],
  );

  const wide = Math.max(...slot.sizes.map((z) => Number(z.split('x')[0]) || 0)) + 7;
  const misfit = await run.call('order size misfit', 'POST', '/orders', {
    body: body(k('s'), 's', [`${wide}x${wide}`]),
    headers: { 'idempotency-key': k('s') },
  });
  run.expect(
    'orders.size_misfit',
    R.orders,
    misfit?.status === 422
      ? []
      : [`size ${wide}x${wide} does not fit the slot: expected 422, got ${run.describe(misfit)}`],
  );
}

type ReportBody = { rows?: Record<string, unknown>[]; next_cursor?: string | null };

/** `POST /reports`: limit bounds and page size, integer-only rows, order_id, inclusive ranges. */
export async function reportsRules(run: Run, order: OrderIds | undefined): Promise<void> {
  const start = dateIn(run.timezone, 60);
  const range = { start_date: start, end_date: addDays(start, 2) };
  if (!order) {
    for (const id of [
      'reports.limit_bounds',
      'reports.page_size',
      'reports.integers_only',
      'reports.inclusive_range',
      'reports.order_id',
    ])
      run.skip(id, R.reports, 'needs line items: run with --allow-writes against a sandbox');
    return;
  }
  const ids = order.line_items.map((l) => l.line_item_id);
  const post = (what: string, extra: Record<string, unknown>) =>
    run.call(what, 'POST', '/reports', { body: { line_item_ids: ids, date_range: range, ...extra } });

  const over = await post('report limit=201', { limit: 201 });
  const ok = await post('report limit=200', { limit: 200 });
  run.expect('reports.limit_bounds', R.reportsLimit, [
    ...refused(run, over, 'limit=201'),
    ...(ok?.status === 200 ? [] : [`limit=200 is allowed, got ${run.describe(ok)}`]),
  ]);

  const sizes: string[] = [];
  const daily: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let page = 1; page <= 3 * ids.length + 2; page++) {
    const res = await post('report limit=2 page', {
      granularity: 'daily',
      limit: 2,
      ...(cursor ? { cursor } : {}),
    });
    const body = res?.json as ReportBody | undefined;
    if (res?.status !== 200 || !Array.isArray(body?.rows)) {
      sizes.push(`limit=2 page ${page}: ${run.describe(res)}`);
      break;
    }
    if (body.rows.length > 2) sizes.push(`limit=2 page ${page} holds ${body.rows.length} rows`);
    daily.push(...body.rows);
    if (!body.next_cursor) break;
    cursor = body.next_cursor;
  }
  const plain = await post('report default limit', { granularity: 'daily' });
  const plainRows = (plain?.json as ReportBody | undefined)?.rows;
  if (Array.isArray(plainRows) && plainRows.length > 50)
    sizes.push(`a page without limit holds ${plainRows.length} rows (default is 50)`);
  run.expect('reports.page_size', R.reportsLimit, sizes, 'no page longer than its limit');

  const total = await post('report totals', {});
  const rowProblems: string[] = [];
  const allowed = new Set(['line_item_id', 'date', 'impressions', 'clicks']);
  for (const r of [...daily, ...((total?.json as ReportBody | undefined)?.rows ?? [])]) {
    const extra = Object.keys(r).filter((k) => !allowed.has(k));
    if (extra.length)
      rowProblems.push(`a row carries ${extra.join(', ')} (only integers of impressions and clicks)`);
    rowProblems.push(...shape(ReportRow, r));
  }
  run.expect('reports.integers_only', R.reports, [...new Set(rowProblems)], 'impressions and clicks only');

  const inclusive: string[] = [];
  for (const id of ids)
    for (const d of [range.start_date, addDays(start, 1), range.end_date])
      if (!daily.some((r) => r.line_item_id === id && r.date === d))
        inclusive.push(`no daily row for ${id} on ${d} (ranges are inclusive at both ends)`);
  run.expect('reports.inclusive_range', R.reports, inclusive.slice(0, 3), 'first and last day included');

  const byOrder = await run.call('report by order', 'POST', '/reports', {
    body: { order_id: order.order_id, date_range: range },
  });
  if (byOrder && byOrder.status >= 400 && byOrder.status < 500 && byOrder.status !== 404) {
    run.skip(
      'reports.order_id',
      R.reports,
      `order_id not supported (${run.describe(byOrder)}): optional`,
      false,
    );
  } else {
    const rows = (byOrder?.json as ReportBody | undefined)?.rows;
    const got = Array.isArray(rows) ? rows.map((r) => String(r.line_item_id)).sort() : [];
    const problems: string[] = [];
    if (byOrder?.status !== 200) problems.push(`known order_id: expected 200, got ${run.describe(byOrder)}`);
    else if (canonicalize(got) !== canonicalize([...ids].sort()))
      problems.push(`order_id rows name ${got.join(', ')}, not the order's lines`);
    const unknownOrder = await run.call('report unknown order', 'POST', '/reports', {
      body: { order_id: `checker-unknown-${run.runId}`, date_range: range },
    });
    if (unknownOrder?.status !== 404)
      problems.push(`unknown order_id: expected 404, got ${run.describe(unknownOrder)}`);
    run.expect('reports.order_id', R.reports, problems, "the order's lines; unknown order 404", false);
  }
}

/**
 * Limits: 429 with `Retry-After` in seconds. Opt-in (it spends the key's budget): up to `max`
 * `GET /health` calls until a 429 comes; none within `max` is a skip, not a pass.
 */
export async function rateLimitProbe(run: Run, max: number): Promise<void> {
  for (let i = 0; i < max; i++) {
    const res = await run.call('rate probe', 'GET', '/health');
    if (res?.status !== 429) continue;
    const retry = res.headers['retry-after'];
    const problems = shape(ErrorBody, res.json);
    if (!retry || !/^\d{1,6}$/.test(retry.trim()))
      problems.push(`429 without Retry-After in whole seconds (got ${JSON.stringify(retry ?? null)})`);
    run.expect('limits.rate_limited', R.rate, problems, `429 after ${i + 1} calls, Retry-After ${retry}`);
    return;
  }
  run.skip('limits.rate_limited', R.rate, `no 429 within ${max} calls`, false);
}
