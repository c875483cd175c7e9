import { countries, countryName } from '../../lib/geo.ts';
import { rng } from '../../lib/prng.ts';
import type { AccessService } from '../access/service.ts';
import type { ComplianceService } from '../compliance/service.ts';
import type { PeopleService } from '../people/service.ts';
import type { ReportingService } from '../reporting/service.ts';
import type { TrackingService } from '../tracking/service.ts';
import { loadDemoHistory } from './demo-history.ts';
import type { OfferInputT } from './schemas.ts';
import type { CatalogService } from './service.ts';

/** The demo writes through the catalog (content) and access (tokens) services. */
export interface DemoServices {
  catalog: CatalogService;
  access: AccessService;
  compliance: ComplianceService;
  /** When given, the demo adds a few invited people with different roles. */
  people?: PeopleService;
}

/** The demo's people: invited (no password), one per role below owner. */
export const DEMO_PEOPLE = [
  { email: 'ada.admin@podium.example', name: 'Ada Admin', role: 'admin' },
  { email: 'eddie.editor@podium.example', name: 'Eddie Editor', role: 'editor' },
  { email: 'pia.publisher@podium.example', name: 'Pia Publisher', role: 'publisher' },
  { email: 'alex.affiliates@podium.example', name: 'Alex Affiliates', role: 'affiliate-manager' },
  { email: 'oscar.adops@podium.example', name: 'Oscar Ad-ops', role: 'ad-ops' },
  { email: 'vic.viewer@podium.example', name: 'Vic Viewer', role: 'viewer' },
] as const;

/** What `podium demo --json` prints: the tokens to try the API with. */
export interface DemoTokens {
  adminToken: string;
  siteTokens: { siteId: number; domain: string; token: string }[];
}

export const DEMO_SITES = [
  { domain: 'casinoguide.example', name: 'Casino Guide' },
  { domain: 'sportsbet-review.example', name: 'Sportsbet Review' },
  { domain: 'pokerpro.example', name: 'Poker Pro' },
] as const;

const PREFIXES = [
  'Royal',
  'Lucky',
  'Golden',
  'Neon',
  'Velvet',
  'Aurora',
  'Nordic',
  'Crown',
  'Blaze',
  'Emerald',
  'Maple',
  'Atlas',
  'Orbit',
  'Cobalt',
];
const SUFFIXES = ['Spins', 'Casino', 'Bet', 'Play', 'Slots', 'Vegas'];
const LICENSES = [
  'MGA',
  'UKGC',
  'Curaçao eGaming',
  'Spelinspektionen',
  'Gibraltar',
  'Isle of Man',
  'Kahnawake',
  'ADM Italy',
];
const PAYMENTS = [
  'Visa',
  'Mastercard',
  'PayPal',
  'Skrill',
  'Neteller',
  'Trustly',
  'Paysafecard',
  'Bank transfer',
  'Bitcoin',
  'Apple Pay',
];
const LANGS = ['en', 'de', 'sv', 'fi', 'no', 'da', 'es', 'pt', 'fr', 'it', 'pl', 'ja'];
const CURRENCIES = ['EUR', 'USD', 'GBP', 'SEK', 'NOK', 'CAD', 'BRL'];
const PAGE_TYPES = ['LP', 'NDP', 'GP', 'RMP', 'RP', 'DEFAULT'];
const RESTRICTED = ['US', 'FR', 'ES', 'IT', 'NL', 'AU', 'BE', 'PT'];
const COLOURS = ['#0B1F3A', '#C0392B', '#1ABC9C', '#8E44AD', '#F39C12', '#2C3E50', '#16A085', '#D35400'];

const MARKETS = [
  { code: 'NORDICS', name: 'Nordics', countries: ['SE', 'NO', 'DK', 'FI', 'IS'] },
  { code: 'DACH', name: 'DACH', countries: ['DE', 'AT', 'CH', 'LI'] },
  { code: 'LATAM', name: 'Latin America', countries: ['MX', 'BR', 'AR', 'CL', 'CO', 'PE'] },
];

function pick<T>(r: () => number, xs: readonly T[], n: number): T[] {
  const pool = [...xs];
  const out: T[] = [];
  while (out.length < n && pool.length) out.push(pool.splice(Math.floor(r() * pool.length), 1)[0]!);
  return out;
}

const money = (r: () => number, max: number) => (Math.floor(r() * max) + 1).toFixed(2);

/**
 * Loads the demo dataset through the catalog service (so it passes the same validation as the
 * admin API): 3 sites, 42 brands with offers and trackers, a casino geo family of 130+
 * published variants (countries, markets, global), a published toplist with zero items and an
 * unpublished one. Returns freshly minted tokens.
 */
export async function loadDemo(
  services: DemoServices,
  log: (msg: string) => void = () => {},
): Promise<DemoTokens> {
  const { catalog } = services;
  const r = rng(20261123);
  for (const p of services.people ? DEMO_PEOPLE : [])
    await services.people!.addDemoUser(p.email, p.name, p.role);
  const owner = await catalog.owners.create({ name: 'Podium Editorial', externalId: 'owner-editorial' });
  const sites = [];
  for (const s of DEMO_SITES) sites.push(await catalog.sites.create(s));
  const [casinoSite, sportSite, pokerSite] = sites as [
    (typeof sites)[0],
    (typeof sites)[0],
    (typeof sites)[0],
  ];

  const casino = await catalog.createNamedType('product_types', 'Casino');
  const sportsbook = await catalog.createNamedType('product_types', 'Sportsbook');
  const poker = await catalog.createNamedType('product_types', 'Poker');
  const realMoney = await catalog.createNamedType('classification_types', 'Real money');
  const bonusList = await catalog.createNamedType('classification_types', 'Bonus list');
  const offerTypes: Record<string, number> = {};
  for (const name of [
    'Welcome Bonus',
    'Free Spins',
    'Free Bet',
    'No Deposit Bonus',
    'Rakeback',
    'Tournament Ticket',
  ]) {
    offerTypes[name] = (await catalog.createNamedType('offer_types', name)).id;
  }

  const template = (
    name: string,
    externalId: string,
    product: { id: number },
    classification: { id: number },
  ) =>
    catalog.templates.create({
      name,
      externalId,
      productTypeId: product.id,
      classificationTypeId: classification.id,
    });
  const tCasino = await template('Best Online Casinos', 'tpl-casino', casino, realMoney);
  const tBonus = await template('Casino Bonuses', 'tpl-bonus', casino, bonusList);
  const tSport = await template('Top Sportsbooks', 'tpl-sport', sportsbook, realMoney);
  const tPoker = await template('Poker Rooms', 'tpl-poker', poker, realMoney);
  log('demo: sites, templates and types created');

  const brands: { id: number; offerIds: number[]; kind: 'casino' | 'sport' | 'poker' }[] = [];
  let n = 0;
  for (const p of PREFIXES) {
    for (const s of SUFFIXES) {
      if (n >= 42 || r() < 0.45) continue;
      n++;
      const name = `${p} ${s}`;
      const slug = name.toLowerCase().replace(/\s+/g, '-');
      const kind = s === 'Bet' ? 'sport' : n % 9 === 0 ? 'poker' : 'casino';
      const brand = await catalog.brands.create({
        externalId: `brand-${slug}`,
        name,
        slug,
        rating: Math.round((3 + r() * 2) * 10) / 10,
        logo: {
          rectangular: `https://cdn.podium.example/logos/${slug}-rect.png`,
          square: `https://cdn.podium.example/logos/${slug}-square.png`,
          backgroundColor: COLOURS[n % COLOURS.length]!,
        },
        licenses: pick(r, LICENSES, 1 + Math.floor(r() * 3)),
        paymentMethods: pick(r, PAYMENTS, 3 + Math.floor(r() * 5)),
        restrictedCountries: pick(r, RESTRICTED, Math.floor(r() * 4)).map((c) => countryName(c)!),
        classificationTypes:
          kind === 'sport' ? ['Sportsbook'] : kind === 'poker' ? ['Poker'] : ['Casino', 'Live Casino'],
        languages: {
          website: pick(r, LANGS, 2 + Math.floor(r() * 4)),
          support: pick(r, LANGS, 1 + Math.floor(r() * 2)),
          livechat: pick(r, LANGS, Math.floor(r() * 2)),
        },
      });
      const offerIds: number[] = [];
      const offerCount = 1 + (n % 2);
      for (let k = 0; k < offerCount; k++) {
        const type =
          kind === 'sport'
            ? 'Free Bet'
            : kind === 'poker'
              ? k
                ? 'Tournament Ticket'
                : 'Rakeback'
              : k
                ? 'Free Spins'
                : 'Welcome Bonus';
        const offer: OfferInputT = {
          externalId: `offer-${slug}-${k + 1}`,
          brandId: brand.id,
          offerTypeId: offerTypes[type]!,
          offerText:
            type === 'Welcome Bonus'
              ? `100% up to €${200 + n * 10} + ${50 + n} free spins`
              : `${type} for new players at ${name}`,
          currencies: pick(r, CURRENCIES, 1 + Math.floor(r() * 3)),
          hasFreeSpins: type === 'Free Spins' || type === 'Welcome Bonus',
          bonusWageringRequirement: type === 'Free Bet' ? 1 : 20 + Math.floor(r() * 30),
          bonusExpiryDate: `2027-0${1 + (n % 9)}-${String(1 + (n % 28)).padStart(2, '0')}`,
          bonusCode: r() < 0.5 ? `${p.toUpperCase()}${100 + n}` : '',
          minimumDeposit: r() < 0.8 ? 10 + 5 * Math.floor(r() * 4) : null,
          freeTickets: type === 'Tournament Ticket' ? 1 + Math.floor(r() * 5) : null,
          maxBonusAmount: type === 'Welcome Bonus' || type === 'Free Spins' ? money(r, 1000) : null,
          maxPayout: r() < 0.5 ? money(r, 5000) : null,
          minimumOdds: type === 'Free Bet' ? `1.${50 + Math.floor(r() * 49)}` : null,
          freeBetValue: type === 'Free Bet' ? money(r, 50) : null,
          tournamentTicketValue: type === 'Tournament Ticket' ? '11.00' : null,
          rakebackPercentage: type === 'Rakeback' ? `${20 + Math.floor(r() * 30)}.50` : null,
          isStickyBonus: r() < 0.2,
          stakeReturned: type === 'Free Bet' ? r() < 0.5 : null,
          betType: type === 'Free Bet' ? (r() < 0.5 ? 'single' : 'accumulator') : null,
          // For every country: an offer's geos limit where it may be shown (docs/compliance.md).
          geos: { countries: [], markets: [] },
          trackers: Array.from({ length: 1 + Math.floor(r() * 2) }, (_, t) => ({
            externalId: `trk-${slug}-${k + 1}-${t + 1}`,
            campaignName: `${name} ${type} ${t ? 'retargeting' : 'main'}`,
            landingUrl: `https://www.${slug.replace(/-/g, '')}.example/welcome?btag={click_id}&aff={affiliate_id}`,
            tcLink: `https://www.${slug.replace(/-/g, '')}.example/terms`,
            pageType: PAGE_TYPES[(n + t) % PAGE_TYPES.length]!,
            geos: { countries: [], markets: [] },
          })),
        };
        offerIds.push((await catalog.offers.create(offer)).id);
      }
      brands.push({ id: brand.id, offerIds, kind });
    }
  }
  log(`demo: ${brands.length} brands with offers and trackers`);

  // Compliance: Sweden requires a licence from Spelinspektionen. Every casino brand holds one (the
  // Swedish and Nordic lists rank only casino brands); the sportsbooks and poker rooms hold none,
  // so Swedish visitors of their global lists do not see them. Brands' restricted countries
  // (above) keep them from the global lists' visitors of those countries.
  for (const b of brands.filter((x) => x.kind === 'casino'))
    await services.compliance.createLicence(b.id, {
      authority: 'Spelinspektionen',
      countries: ['SE'],
      validFrom: '2026-01-01T00:00:00Z',
      validUntil: '2031-01-01T00:00:00Z',
    });
  await services.compliance.createRule({
    geo: { type: 'country', code: 'SE' },
    authority: 'Spelinspektionen',
  });

  const casinoBrands = brands.filter((b) => b.kind === 'casino');
  const itemsFor = (count: number) =>
    pick(r, casinoBrands, count).map((b, i) => ({
      position: i + 1,
      brandId: b.id,
      offerId: b.offerIds[Math.floor(r() * b.offerIds.length)]!,
      dealId: 1000 + b.id,
      isLocked: i === 0,
    }));

  // The casino geo family: one variant per country (well over one page of 100), markets and a global row.
  // The big affiliate markets first, so they are in the family whatever the alphabet says.
  const PRIORITY = [
    'GB',
    'IE',
    'DE',
    'AT',
    'CH',
    'SE',
    'FI',
    'NO',
    'DK',
    'NL',
    'CA',
    'NZ',
    'BR',
    'MX',
    'AR',
    'CL',
  ];
  const countryCodes = [...new Set([...PRIORITY, ...countries().keys()])]
    .filter((c) => !RESTRICTED.includes(c))
    .slice(0, 125);
  const family: {
    geo: { type: 'country' | 'market' | 'global'; code: string; name?: string; coveredCountries?: string[] };
  }[] = [
    ...countryCodes.map((code) => ({ geo: { type: 'country' as const, code } })),
    ...MARKETS.map((m) => ({
      geo: { type: 'market' as const, code: m.code, name: m.name, coveredCountries: m.countries },
    })),
    { geo: { type: 'global' as const, code: 'ROW' } },
  ];
  for (const [i, f] of family.entries()) {
    const t = await catalog.toplists.create({
      siteId: casinoSite.id,
      templateId: tCasino.id,
      ownerId: owner.id,
      name: `Best Online Casinos ${f.geo.name ?? (f.geo.type === 'country' ? countryName(f.geo.code) : 'Worldwide')}`,
      slug: `best-casinos-${f.geo.code.toLowerCase()}`,
      geo: f.geo,
      currentPeriod: 'November 2026',
    });
    await catalog.publishing.replaceItems(t.id, itemsFor(10));
    await catalog.publishing.publish(t.id);
    if ((i + 1) % 25 === 0) log(`demo: published ${i + 1}/${family.length} toplists of the casino family`);
  }

  // A published toplist with zero items, and one that was never published.
  const empty = await catalog.toplists.create({
    siteId: casinoSite.id,
    templateId: tBonus.id,
    ownerId: owner.id,
    name: 'Casino Bonuses (coming soon)',
    slug: 'casino-bonuses',
    geo: { type: 'global', code: 'ROW' },
    currentPeriod: 'November 2026',
  });
  await catalog.publishing.publish(empty.id);
  const draft = await catalog.toplists.create({
    siteId: casinoSite.id,
    templateId: tBonus.id,
    ownerId: owner.id,
    name: 'Casino Bonuses Sweden (draft)',
    slug: 'casino-bonuses-se',
    geo: { type: 'country', code: 'SE' },
    currentPeriod: 'December 2026',
  });
  await catalog.publishing.replaceItems(draft.id, itemsFor(5));

  // The sportsbook and poker lists rank every brand of their kind, each with its first offer.
  const ranked = [
    ...['GB', 'IE', 'ROW'].map((code) => ({
      site: sportSite,
      template: tSport,
      kind: 'sport',
      deals: 2000,
      name: `Top Sportsbooks ${code}`,
      slug: `top-sportsbooks-${code.toLowerCase()}`,
      code,
    })),
    {
      site: pokerSite,
      template: tPoker,
      kind: 'poker',
      deals: 3000,
      name: 'Poker Rooms',
      slug: 'poker-rooms',
      code: 'ROW',
    },
  ];
  for (const l of ranked) {
    const t = await catalog.toplists.create({
      siteId: l.site.id,
      templateId: l.template.id,
      ownerId: owner.id,
      name: l.name,
      slug: l.slug,
      geo: l.code === 'ROW' ? { type: 'global', code: l.code } : { type: 'country', code: l.code },
      currentPeriod: 'November 2026',
    });
    await catalog.publishing.replaceItems(
      t.id,
      brands
        .filter((b) => b.kind === l.kind)
        .map((b, i) => ({ position: i + 1, brandId: b.id, offerId: b.offerIds[0]!, dealId: l.deals + b.id })),
    );
    await catalog.publishing.publish(t.id);
  }
  log('demo: sportsbook and poker toplists published');

  return mintDemoTokens(services.access, sites);
}

/** Fresh tokens for the demo sites and an all-scopes admin token (tokens are shown once, so each start mints its own). */
export async function mintDemoTokens(
  access: AccessService,
  sites: { id: number; domain: string }[],
): Promise<DemoTokens> {
  const admin = await access.createAdminToken('demo', ['admin'], null);
  const siteTokens = [];
  for (const s of sites) {
    siteTokens.push({
      siteId: s.id,
      domain: s.domain,
      token: (await access.createSiteToken(s.id, 'demo')).token,
    });
  }
  return { adminToken: admin.token, siteTokens };
}

/**
 * `npm start` / `podium demo`: loads the demo dataset into an empty catalog, with 30 days of
 * tracking history ending `now`, or mints fresh tokens when the demo sites are already there.
 * Returns null for a catalog holding other data, which the demo never touches.
 */
/** Id of the demo's first site (where the marketplace demo's placements are), when it exists. */
export async function demoSiteId(catalog: CatalogService): Promise<number | undefined> {
  return (await catalog.repo.findSiteByDomain(DEMO_SITES[0].domain))?.id;
}

export async function ensureDemo(
  services: DemoServices & { tracking: TrackingService; reporting: ReportingService },
  log: (msg: string) => void = () => {},
  now: Date = new Date(),
): Promise<DemoTokens | null> {
  const { catalog } = services;
  const { meta } = await catalog.sites.list(1, 1);
  if (meta.total === 0) {
    log('demo: empty database, loading the demo dataset');
    const tokens = await loadDemo(services, log);
    await loadDemoHistory(services.tracking, now, log);
    await services.reporting.moveDeltas();
    // The demo's programmes report in zones of their own: their daily rollups are built now, as
    // the zone job would a minute after start, so reports read them from the first request.
    const zones = await services.reporting.rollupZones.sync();
    if (zones.length) log(`demo: daily rollups built for ${zones.join(', ')}`);
    return tokens;
  }
  const sites = [];
  for (const s of DEMO_SITES) {
    const found = await catalog.repo.findSiteByDomain(s.domain);
    if (found) sites.push(found);
  }
  return sites.length ? mintDemoTokens(services.access, sites) : null;
}
