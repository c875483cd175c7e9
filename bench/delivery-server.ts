/**
 * Child processes of `bench/delivery.ts`, one job each so every RSS figure is honest:
 * `build` writes the dataset (200 toplists × 20 items, ~200 KB of JSON each) to a fresh
 * database, `podium` serves it, `bare` answers the identical bytes from a plain node:http server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AccessService } from '../src/modules/access/service.ts';
import type { CatalogService } from '../src/modules/catalog/service.ts';
import { closeBench, freshBench, openBench } from './bench-db.ts';

const TOPLISTS = 200;
const ITEMS = 20;
const BRANDS = 60;

const words = (n: number, seed: number) =>
  Array.from(
    { length: n },
    (_, i) => ['bonus', 'spins', 'wager', 'deposit', 'casino', 'live', 'jackpot'][(i * 7 + seed) % 7],
  ).join(' ');
const codes = [
  'SE',
  'FI',
  'NO',
  'DK',
  'DE',
  'AT',
  'CH',
  'GB',
  'IE',
  'CA',
  'NZ',
  'BR',
  'MX',
  'AR',
  'CL',
  'PE',
  'JP',
  'IN',
];

async function dataset(
  { catalog, access }: { catalog: CatalogService; access: AccessService },
  log: (m: string) => void,
) {
  const owner = await catalog.createOwner({ name: 'Bench', externalId: 'bench-owner' });
  const site = await catalog.createSite({ domain: 'bench.example', name: 'Bench' });
  const pt = await catalog.createNamedType('product_types', 'Casino');
  const ct = await catalog.createNamedType('classification_types', 'Real money');
  const ot = await catalog.createNamedType('offer_types', 'Welcome Bonus');
  const tpl = await catalog.createTemplate({
    name: 'Bench',
    productTypeId: pt.id,
    classificationTypeId: ct.id,
  });
  const brands: { id: number; offerId: number }[] = [];
  for (let b = 0; b < BRANDS; b++) {
    const brand = await catalog.createBrand({
      externalId: `bench-brand-${b}`,
      name: `Bench Brand ${b}`,
      slug: `bench-brand-${b}`,
      rating: 4.5,
      logo: {
        rectangular: `https://cdn.bench.example/${b}-rect.png`,
        square: `https://cdn.bench.example/${b}-sq.png`,
        backgroundColor: '#123456',
      },
      licenses: ['MGA', 'UKGC', 'Spelinspektionen', 'Curacao eGaming'],
      paymentMethods: Array.from({ length: 30 }, (_, i) => `Payment method ${i}`),
      restrictedCountries: Array.from({ length: 40 }, (_, i) => `Restricted country ${i}`),
      classificationTypes: ['Casino', 'Live Casino', 'Slots'],
      languages: { website: ['en', 'sv', 'fi', 'de'], support: ['en', 'sv'], livechat: ['en'] },
    });
    const offer = await catalog.createOffer({
      externalId: `bench-offer-${b}`,
      brandId: brand.id,
      offerTypeId: ot.id,
      offerText: words(300, b),
      currencies: ['EUR', 'SEK', 'NOK', 'CAD'],
      bonusExpiryDate: '2027-06-30',
      maxBonusAmount: '500.00',
      maxPayout: null,
      geos: { countries: codes, markets: ['NORDICS'] },
      trackers: Array.from({ length: 12 }, (_, t) => ({
        externalId: `bench-trk-${b}-${t}`,
        campaignName: `Campaign ${t} ${words(8, t)}`,
        landingUrl: `https://www.brand${b}.example/landing/${t}?btag={click_id}&aff={affiliate_id}&site={site_id}`,
        tcLink: `https://www.brand${b}.example/terms/${t}`,
        geos: { countries: codes, markets: ['NORDICS', 'DACH'] },
      })),
    });
    brands.push({ id: brand.id, offerId: offer.id });
  }
  const slugs: string[] = [];
  const ids: number[] = [];
  for (let i = 0; i < TOPLISTS; i++) {
    const t = await catalog.createToplist({
      siteId: site.id,
      templateId: tpl.id,
      ownerId: owner.id,
      name: `Bench toplist ${i}`,
      slug: `bench-${i}`,
      geo: { type: 'market', code: `M${i}`, name: `Market ${i}`, coveredCountries: codes },
    });
    await catalog.replaceItems(
      t.id,
      Array.from({ length: ITEMS }, (_, k) => {
        const b = brands[(i + k * 7) % BRANDS]!;
        return { position: k + 1, brandId: b.id, offerId: b.offerId, dealId: k };
      }),
    );
    await catalog.publish(t.id);
    slugs.push(t.slug);
    ids.push(t.id);
    if ((i + 1) % 50 === 0) log(`bench: published ${i + 1}/${TOPLISTS} toplists`);
  }
  const token = (await access.createSiteToken(site.id, 'bench')).token;
  return { slugs, ids, token };
}

const SCHEMA = 'bench_delivery';
const log = (m: string) => process.stderr.write(`${m}\n`);
const send = (m: Record<string, unknown>) => process.send?.(m);

/** Mode `build`: a fresh dataset in the data directory (or schema); exits when written. */
async function build() {
  const opened = await freshBench(SCHEMA);
  const out = await dataset(opened.app.services, log);
  await closeBench(opened, SCHEMA, false);
  send({ built: true, ...out });
}

/** Mode `podium`: serves the dataset; reports its own RSS (nothing else lives in this process). */
async function podium() {
  const opened = await openBench(SCHEMA);
  const { app } = opened;
  await app.listen({ host: '127.0.0.1', port: 0 });
  const readyRss = process.memoryUsage().rss;
  let servingPeak = readyRss;
  setInterval(() => {
    servingPeak = Math.max(servingPeak, process.memoryUsage().rss);
  }, 100).unref();
  send({ ready: true, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
  process.on('message', async (m: { cmd: string }) => {
    if (m.cmd === 'rss') send({ readyRss, servingPeakRss: servingPeak });
    if (m.cmd === 'stop') {
      await closeBench(opened, SCHEMA, true);
      process.exit(0);
    }
  });
}

/** Mode `bare`: fetches every URL once from Podium, then answers the identical bytes and headers. */
async function bare(podiumUrl: string, token: string, urls: string[]) {
  const canned = new Map<string, { body: Buffer; etag: string }>();
  let slugBytes = 0;
  let slugs = 0;
  for (const url of urls) {
    const res = await fetch(`${podiumUrl}${url}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    const body = Buffer.from(await res.arrayBuffer());
    canned.set(url, { body, etag: res.headers.get('etag') ?? '' });
    if (url.includes('by-slug')) {
      slugBytes += body.length;
      slugs++;
    }
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const hit = canned.get(req.url ?? '');
    if (!hit) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      etag: hit.etag,
      'cache-control': 'private',
      vary: 'Authorization',
      'content-length': hit.body.length,
    });
    res.end(hit.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  send({
    ready: true,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    avgToplistBytes: Math.round(slugBytes / Math.max(1, slugs)),
  });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'stop') process.exit(0);
  });
}

async function main() {
  const mode = process.argv[2];
  if (mode === 'build') return build();
  if (mode === 'podium') return podium();
  if (mode === 'bare') {
    const m = await new Promise<{ podiumUrl: string; token: string; urls: string[] }>((r) =>
      process.once('message', r as never),
    );
    return bare(m.podiumUrl, m.token, m.urls);
  }
  throw new Error(`unknown mode ${mode}`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
