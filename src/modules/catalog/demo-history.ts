import { AppError } from '../../lib/errors.ts';
import { rng } from '../../lib/prng.ts';
import type { PostbackJob } from '../tracking/repository.ts';
import type { TrackingService } from '../tracking/service.ts';
import type { ClickRow } from '../tracking/types.ts';

const DAY = 86_400_000;
export const DEMO_HISTORY_DAYS = 30;

/** The toplists that get traffic, with their clicks per day (before weekday and noise). */
const TRAFFIC: Record<string, number> = {
  'best-casinos-gb': 40,
  'best-casinos-de': 30,
  'best-casinos-se': 20,
  'best-casinos-ca': 18,
  'best-casinos-ie': 10,
  'best-casinos-at': 10,
  'best-casinos-ch': 8,
  'best-casinos-fi': 8,
  'best-casinos-no': 8,
  'best-casinos-dk': 6,
  'best-casinos-nl': 6,
  'best-casinos-nz': 6,
  'top-sportsbooks-gb': 15,
  'top-sportsbooks-ie': 8,
  'top-sportsbooks-row': 6,
  'poker-rooms': 8,
};

/** The demo programmes: who pays for which links' traffic, in which currency. */
const PROGRAMS = {
  nordic: {
    slug: 'nordic-partners',
    name: 'Nordic Gaming Partners',
    currency: 'EUR',
    timezone: 'Europe/Malta',
  },
  atlas: { slug: 'atlas-affiliates', name: 'Atlas Affiliates', currency: 'USD', timezone: 'UTC' },
  bookie: { slug: 'bookie-partners', name: 'Bookie Partners', currency: 'GBP', timezone: 'Europe/London' },
} as const;
type ProgramKey = keyof typeof PROGRAMS;

/**
 * Postbacks an operator gets wrong, sent through the real postback route's code once the history
 * is in, so the postback log has refusals to practise repair on: transaction id sent under a
 * name the programme does not map (replayable once `paramMap` says `txid`), a currency that is no
 * ISO code, and no transaction id at all.
 */
const REFUSED: Record<string, string>[] = [
  { event: 'ftd', txid: 'nordic-77120', amount: '50.00', currency: 'EUR' },
  { event: 'deposit', transaction_id: 'nordic-77121', amount: '25.00', currency: 'EURO' },
  { event: 'registration' },
];

const programOf = (slug: string, brandId: number): ProgramKey =>
  slug.startsWith('top-sportsbooks') ? 'bookie' : slug === 'poker-rooms' || brandId % 2 ? 'atlas' : 'nordic';

const SUB_IDS = ['newsletter', 'homepage', 'sidebar'];
const cents = (n: number) => n.toFixed(2);

/**
 * 30 days of clicks, impressions and postbacks (registrations, FTDs, deposits, CPA and revshare
 * with amounts) on the demo toplists, seeded so every load is the same apart from the dates
 * (they end at `now`). Creates the three demo programmes owning the links' trackers, then
 * writes everything in a few set-based statements that fill the rollups too. Returns the counts.
 */
export async function loadDemoHistory(
  tracking: TrackingService,
  now: Date,
  log: (msg: string) => void = () => {},
): Promise<{ clicks: number; impressions: number; postbacks: number }> {
  const r = rng(20261124);
  const links = await tracking.history.positionLinks(Object.keys(TRAFFIC));
  const trackers: Record<ProgramKey, Set<number>> = {
    nordic: new Set(),
    atlas: new Set(),
    bookie: new Set(),
  };
  for (const l of links) trackers[programOf(l.slug, l.brandId)].add(l.trackerId);
  const programs = {} as Record<ProgramKey, { id: number; slug: string; currency: string; token: string }>;
  for (const key of Object.keys(PROGRAMS) as ProgramKey[]) {
    const p = PROGRAMS[key];
    const created = await tracking.createProgram({
      ...p,
      affiliateId: `podium-${key}`,
      landingParams: 'btag={click_id}',
      trackerIds: [...trackers[key]].sort((a, b) => a - b),
    });
    programs[key] = { id: created.id, slug: p.slug, currency: p.currency, token: created.postbackToken };
  }

  // Each brand converts at its own rate and pays its own CPA, so the suggested order has a signal.
  const brands = new Map<number, { reg: number; ftd: number; cpa: number }>();
  const quality = (brandId: number) => {
    let q = brands.get(brandId);
    if (!q) {
      q = { reg: 0.04 + r() * 0.1, ftd: 0.15 + r() * 0.3, cpa: 30 + Math.floor(r() * 120) };
      brands.set(brandId, q);
    }
    return q;
  };

  const hits: ClickRow[] = [];
  const postbacks: PostbackJob[] = [];
  const end = now.getTime();
  let seq = 0;
  const id = (kind: string) => `DEMO${kind}${String(++seq).padStart(21, '0')}`;
  const postback =
    (program: { id: number; slug: string; currency: string }, clickId: string, at: number) =>
    (event: string, amount: number | null) => {
      if (at > end) return;
      const transactionId = `demo-${seq + 1}`;
      const money = amount === null ? {} : { amount: cents(amount), currency: program.currency };
      postbacks.push({
        log: {
          program: program.slug,
          method: 'GET',
          contentType: null,
          query: { click_id: clickId, event, transaction_id: transactionId, ...money },
          body: null,
          remoteIp: null,
        },
        receivedAt: new Date(at),
        conversion: {
          id: id('V'),
          programId: program.id,
          transactionId,
          event,
          amount: money.amount ?? null,
          currency: money.currency ?? null,
          playerRef: null,
          clickId,
        },
      });
    };

  for (let back = DEMO_HISTORY_DAYS - 1; back >= 0; back--) {
    const dayStart = end - (back + 1) * DAY;
    const weekday = new Date(dayStart).getUTCDay();
    const seasonal = weekday === 0 || weekday === 6 ? 1.3 : 1;
    for (const l of links) {
      const program = programs[programOf(l.slug, l.brandId)];
      const q = quality(l.brandId);
      const base = (TRAFFIC[l.slug] ?? 0) * seasonal * (0.7 + 0.6 * r());
      const clicks = Math.round((base * 0.35) / l.position ** 0.9);
      const impressions = Math.round(clicks * (2 + r()));
      const hit = (kind: 'click' | 'impression', at: number, flag: 'bot' | null): ClickRow => ({
        id: id(kind === 'click' ? 'C' : 'I'),
        kind,
        at: new Date(at),
        linkId: l.linkId,
        trackerId: l.trackerId,
        offerId: l.offerId,
        brandId: l.brandId,
        siteId: l.siteId,
        toplistId: l.toplistId,
        position: l.position,
        programId: program.id,
        subId: kind === 'click' && r() < 0.4 ? (SUB_IDS[Math.floor(r() * SUB_IDS.length)] as string) : null,
        referrer: null,
        userAgent: flag ? 'Googlebot/2.1' : 'Mozilla/5.0 (demo)',
        country: null,
        flag,
      });
      for (let i = 0; i < impressions; i++) hits.push(hit('impression', dayStart + r() * DAY, null));
      for (let i = 0; i < clicks; i++) {
        const at = dayStart + r() * DAY;
        const click = hit('click', at, r() < 0.02 ? 'bot' : null);
        hits.push(click);
        if (click.flag || r() >= q.reg) continue;
        const registered = at + r() * 2 * 3_600_000;
        postback(program, click.id, registered)('registration', null);
        if (r() >= q.ftd) continue;
        const ftdAt = registered + r() * DAY;
        postback(program, click.id, ftdAt)('ftd', 20 + Math.floor(r() * 280));
        postback(program, click.id, ftdAt + 60_000)('cpa', q.cpa);
        for (let d = Math.floor(r() * 3); d > 0; d--)
          postback(program, click.id, ftdAt + r() * 5 * DAY)('deposit', 10 + Math.floor(r() * 200) + r());
        if (r() < 0.3) postback(program, click.id, ftdAt + r() * 7 * DAY)('revshare', 1 + r() * 40);
      }
    }
  }
  // Conversions refer to their clicks, which the same write puts first; within each, time order.
  hits.sort((a, b) => a.at.getTime() - b.at.getTime());
  postbacks.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime());
  await tracking.history.write(hits, postbacks);
  for (const query of REFUSED) {
    const answer = await tracking
      .postback({
        program: programs.nordic.slug,
        token: programs.nordic.token,
        method: 'GET',
        contentType: undefined,
        query,
        body: '',
        remoteIp: undefined,
      })
      .catch((err: unknown) => err);
    if (!(answer instanceof AppError))
      throw new Error(`demo: a postback meant to be refused was not: ${JSON.stringify(query)}`);
  }
  const clicks = hits.filter((h) => h.kind === 'click').length;
  log(
    `demo: ${DEMO_HISTORY_DAYS} days of history, ${clicks} clicks and ${postbacks.length} postbacks (and ${REFUSED.length} refused ones to repair)`,
  );
  return { clicks, impressions: hits.length - clicks, postbacks: postbacks.length };
}
