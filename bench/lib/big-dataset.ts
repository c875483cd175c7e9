/**
 * The heavy dataset of the delivery scenarios: toplists of 20 items whose brands carry long
 * payment, licence and country lists and whose offers carry 12 trackers each (~190 KB of JSON per
 * toplist), 50 of them by default (`BENCH_BIG_TOPLISTS`).
 */
import type { CatalogService } from '../../src/modules/catalog/service.ts';
import { casinoTemplate } from '../../test/catalog-fixture.ts';

const TOPLISTS = Number(process.env.BENCH_BIG_TOPLISTS ?? 50);
const ITEMS = 20;
const BRANDS = 60;

const words = (n: number, seed: number) =>
  Array.from(
    { length: n },
    (_, i) => ['bonus', 'spins', 'wager', 'deposit', 'casino', 'live', 'jackpot'][(i * 7 + seed) % 7],
  ).join(' ');
const codes = 'SE FI NO DK DE AT CH GB IE CA NZ BR MX AR CL PE JP IN'.split(' ');

/** Writes the dataset: one site, 60 heavy brands, `TOPLISTS` published market toplists of 20 items. */
export async function bigDataset(catalog: CatalogService, log: (m: string) => void) {
  const site = await catalog.sites.create({ domain: 'bench.example', name: 'Bench' });
  const { owner, offerType, template } = await casinoTemplate(catalog, 'Bench');
  const brands: { id: number; offerId: number }[] = [];
  for (let b = 0; b < BRANDS; b++) {
    const brand = await catalog.brands.create({
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
    const offer = await catalog.offers.create({
      externalId: `bench-offer-${b}`,
      brandId: brand.id,
      offerTypeId: offerType.id,
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
  for (let i = 0; i < TOPLISTS; i++) {
    const t = await catalog.toplists.create({
      siteId: site.id,
      templateId: template.id,
      ownerId: owner.id,
      name: `Bench toplist ${i}`,
      slug: `bench-${i}`,
      geo: { type: 'market', code: `M${i}`, name: `Market ${i}`, coveredCountries: codes },
    });
    await catalog.publishing.replaceItems(
      t.id,
      Array.from({ length: ITEMS }, (_, k) => {
        const b = brands[(i + k * 7) % BRANDS]!;
        return { position: k + 1, brandId: b.id, offerId: b.offerId, dealId: k };
      }),
    );
    await catalog.publishing.publish(t.id);
    if ((i + 1) % 50 === 0) log(`bench: published ${i + 1}/${TOPLISTS} toplists`);
  }
  return { siteId: site.id };
}
