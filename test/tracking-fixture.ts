import http from 'node:http';
import type { Queryable } from '../src/db/index.ts';
import type { AccessService } from '../src/modules/access/service.ts';
import type { CatalogService } from '../src/modules/catalog/service.ts';
import { casinoTemplate, draftToplist } from './catalog-fixture.ts';

export interface TrackingFixture {
  adminToken: string;
  siteId: number;
  toplistId: number;
  brandId: number;
  offerId: number;
  trackerIds: number[];
  /** Slug of the /go link of position 1 and 2. */
  slugs: string[];
}

/** What every catalogue test starts from: an owner, a site, the three named types and a template. */
export async function catalogBasics(catalog: CatalogService) {
  const site = await catalog.sites.create({ domain: 'casinos.example', name: 'Casinos' });
  return { site, ...(await casinoTemplate(catalog)) };
}

/** One site with a published two-item toplist whose trackers land on operator.example. */
export async function trackingFixture(
  services: { catalog: CatalogService; access: AccessService },
  db: Queryable,
): Promise<TrackingFixture> {
  const { catalog } = services;
  const admin = await services.access.createAdminToken('tracking-test', ['admin'], null);
  const { owner, site, offerType, template } = await catalogBasics(catalog);
  const brand = await catalog.brands.create({
    externalId: 'b1',
    name: 'Lucky Star',
    slug: 'lucky-star',
    rating: 4.5,
    logo: {
      rectangular: 'https://cdn.example/r.png',
      square: 'https://cdn.example/s.png',
      backgroundColor: '#112233',
    },
  });
  const offer = await catalog.offers.create({
    externalId: 'o1',
    brandId: brand.id,
    offerTypeId: offerType.id,
    offerText: '100% up to €200',
    bonusExpiryDate: '2027-12-31',
    trackers: [
      { campaignName: 'main', landingUrl: 'https://operator.example/land?lang=en' },
      { campaignName: 'alt', landingUrl: 'https://operator.example/p/{site_id}?x=1' },
    ],
  });
  const toplist = await draftToplist(
    catalog,
    { siteId: site.id, owner, template },
    { name: 'Best casinos', slug: 'best-casinos', country: 'DE' },
    [
      { position: 1, brandId: brand.id, offerId: offer.id },
      { position: 2, brandId: brand.id, offerId: offer.id },
    ],
  );
  await catalog.publishing.publish(toplist.id, {});
  const links = await db.query<{ slug: string; tracker_id: number; position: number }>(
    'SELECT slug, tracker_id, position FROM tracking_links WHERE toplist_id = $1 ORDER BY position, tracker_id',
    [toplist.id],
  );
  const trackerIds = offer.trackers.map((tr) => tr.id);
  return {
    adminToken: admin.token,
    siteId: site.id,
    toplistId: toplist.id,
    brandId: brand.id,
    offerId: offer.id,
    trackerIds,
    slugs: [1, 2].map(
      (p) => links.find((l) => l.position === p && l.tracker_id === trackerIds[0])?.slug as string,
    ),
  };
}

export type StormResult = { status: number; location: string | undefined } | { error: string };

/** Sends `n` concurrent GETs to `base + path` over loopback; `onAnswer` runs as each one completes. */
export async function storm(
  base: string,
  path: string,
  n: number,
  onAnswer: () => void = () => {},
): Promise<StormResult[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  const one = () =>
    new Promise<StormResult>((resolve) => {
      const req = http.get(`${base}${path}`, { agent }, (res) => {
        res.resume();
        res.on('end', () => {
          onAnswer();
          resolve({ status: res.statusCode ?? 0, location: res.headers.location });
        });
      });
      req.on('error', (err) => resolve({ error: err.message }));
    });
  const out = await Promise.all(Array.from({ length: n }, one));
  agent.destroy();
  return out;
}

/** The click ids of the 302s among storm results (the programme puts them in `btag`). */
export function redirectedClickIds(results: StormResult[]): string[] {
  return results.flatMap((r) =>
    'status' in r && r.status === 302 && r.location
      ? [(new URL(r.location).searchParams.get('btag') as string).split('_')[1] as string]
      : [],
  );
}
