import { randomBytes } from 'node:crypto';
import type { ReferenceServer, ReferenceServerOptions } from '@podium/adserver-kit';
import { testServer } from '../packages/adserver-kit/test/helpers.ts';
import { type Resolver, systemResolver } from '../src/lib/ssrf.ts';
import { type TestApp, testApp } from './helpers.ts';
import { type Handler, json, type LoopbackServer, loopbackServer } from './hostile-server.ts';

/** System DNS, except `private.test`, which resolves to a private address. */
const resolver: Resolver = async (host) =>
  host === 'private.test' ? [{ address: '10.0.0.5', family: 4 }] : systemResolver(host);

export type { ReferenceServer };

/** Short outbound limits so hostile-server cases finish fast. */
export const FAST_OUTBOUND = {
  outboundConnectTimeoutMs: 300,
  outboundTimeoutMs: 1000,
  outboundMaxBytes: 1024 * 1024,
};

/** testApp options: a sealing key, and an outbound client that may reach http fixtures on 127.0.0.1 (test-only switches). */
export function adserverAppOptions(fast = true): Parameters<typeof testApp> {
  return [
    { secretKeys: [{ version: 1, key: randomBytes(32) }], ...(fast ? FAST_OUTBOUND : {}) },
    { outboundTestOnly: { allowHttp: true, allowAddresses: ['127.0.0.1'], resolver } },
  ];
}

/** A Podium app set up by `adserverAppOptions`, with an adserver-scoped admin token. */
export async function adserverApp(): Promise<TestApp & { admin: string }> {
  const t = await testApp(...adserverAppOptions());
  const { token } = await t.app.services.access.createAdminToken(
    'adserver',
    ['adserver:read', 'adserver:write'],
    null,
  );
  return { ...t, admin: token };
}

/** The reference ad server on loopback (plain HTTP), on its own store. */
export function referenceServer(opts: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  return testServer({ logger: false, ...opts });
}

/** What most ad-server test files run against: the app, the reference ad server and a hostile one. */
export interface AdserverServers {
  t: TestApp & { admin: string };
  ref: ReferenceServer;
  hostile: LoopbackServer;
}

/** Starts the three servers side by side, the reference one with `refOpts`. */
export async function startServers(refOpts: ReferenceServerOptions = {}): Promise<AdserverServers> {
  const [t, ref, hostile] = await Promise.all([adserverApp(), referenceServer(refOpts), loopbackServer()]);
  return { t, ref, hostile };
}

/** Stops what `startServers` started; a server that never started is skipped. */
export async function stopServers(s: Partial<AdserverServers>): Promise<void> {
  await Promise.all([s.t?.close(), s.ref?.close(), s.hostile?.close()]);
}

/** JSON admin call with the test admin token. */
export async function admin(
  t: TestApp & { admin: string },
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
): Promise<{ status: number; body: any; raw: string }> {
  const res = await t.app.inject({
    method,
    url: `/api/admin/v1${url}`,
    headers: { authorization: `Bearer ${t.admin}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, raw: res.body };
}

/** A connected, synced connection to `ref` with placements mapped to two of its demo slots. */
export async function bookable(
  t: TestApp & { admin: string },
  ref: ReferenceServer,
  publisher: string,
  baseUrl = ref.url,
): Promise<{ conn: string; leaderboard: number; skin: number; mpu: number }> {
  const conn = (
    await admin(t, 'POST', '/adserver/connections', { publisher, base_url: baseUrl, api_key: ref.apiKey })
  ).body.data.id as string;
  const sync = await admin(t, 'POST', `/adserver/connections/${conn}/inventory/sync`);
  if (!sync.body.data?.ok) throw new Error(`sync failed: ${sync.raw}`);
  const place = async (name: string, sizes: string[], inventory_id: string) => {
    const p = (await admin(t, 'POST', '/adserver/placements', { publisher, name, sizes })).body.data;
    const mapped = await admin(t, 'PUT', `/adserver/placements/${p.id}/slots`, {
      connection_id: conn,
      inventory_id,
    });
    if (mapped.status !== 200) throw new Error(`mapping ${inventory_id} on ${conn} failed: ${mapped.raw}`);
    return p.id as number;
  };
  return {
    conn,
    leaderboard: await place('Leaderboard', ['728x90'], 'slot-home-leaderboard'),
    skin: await place('Skin', ['1920x1080'], 'slot-new-skin'),
    mpu: await place('MPU', ['300x250'], 'slot-home-mpu'),
  };
}

/** An approved creative as the operator enters it (an image on the marketplace CDN and a landing page). */
export function approved(width = 728, height = 90, name = 'winter') {
  return {
    image_url: `https://cdn.podium.test/${name}-${width}x${height}.png`,
    landing_url: `https://advertiser.test/${name}?utm_source=podium`,
    width,
    height,
  };
}

/**
 * A minimal contract-speaking ad server for hostile tests: `/health` (the zone and forecast flag
 * given) and an inventory with the three slots `bookable` maps; every other call goes to `rest`.
 */
export function fakeAdServer(opts: { timezone: string; forecast: () => boolean }, rest: Handler): Handler {
  return (req, res, raw) => {
    const url = req.url ?? '';
    if (url.includes('/health'))
      return json(res, 200, {
        account_id: 'h',
        timezone: opts.timezone,
        currency: 'EUR',
        capabilities: { forecast: opts.forecast(), reporting: true, draft_booking: true },
      });
    if (url.includes('/inventory'))
      return json(res, 200, {
        data: [
          { inventory_id: 'slot-home-leaderboard', name: 'x', sizes: ['728x90'] },
          { inventory_id: 'slot-new-skin', name: 'x', sizes: ['1920x1080'] },
          { inventory_id: 'slot-home-mpu', name: 'x', sizes: ['300x250'] },
        ],
      });
    rest(req, res, raw);
  };
}

/** One day of delivery as an ad server reports it. */
export interface ReportRow {
  line_item_id: string;
  date: string;
  impressions: number;
  clicks: number;
}

/**
 * A fake ad server that forecasts 500 000 available of 900 000, books every order as a DRAFT with
 * ids made from its external refs, and reports the rows `rows()` holds for the ids and days asked.
 */
export function reportingAdServer(timezone: string, rows: () => ReportRow[]): Handler {
  return fakeAdServer({ timezone, forecast: () => true }, (req, res, raw) => {
    const body = JSON.parse(raw);
    if (req.url?.includes('/forecast'))
      return json(res, 200, {
        inventory_id: body.inventory_id,
        available_impressions: 500_000,
        forecasted_impressions: 900_000,
      });
    if (req.url?.includes('/orders'))
      return json(res, 201, {
        order_id: `ord-${body.order.external_ref}`,
        status: 'DRAFT',
        line_items: body.line_items.map((l: { external_ref: string }) => ({
          external_ref: l.external_ref,
          line_item_id: `li-${l.external_ref}`,
          status: 'DRAFT',
        })),
      });
    if (req.url?.includes('/reports')) {
      const { start_date, end_date } = body.date_range;
      return json(res, 200, {
        rows: rows().filter(
          (r) => body.line_item_ids.includes(r.line_item_id) && r.date >= start_date && r.date <= end_date,
        ),
        next_cursor: null,
      });
    }
    json(res, 404, { code: 'not_found', message: 'no' });
  });
}
