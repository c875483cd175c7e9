import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { AggregateRepository } from '../src/modules/tracking/aggregate-repository.ts';
import { TrackingPartitions } from '../src/modules/tracking/partitions.ts';
import { type PostbackJob, TrackingRepository } from '../src/modules/tracking/repository.ts';
import type { ClickRow, StatsRow, StatsZoneMode } from '../src/modules/tracking/types.ts';
import { type TestDb, testDb } from './helpers.ts';

// Zones with 30- and 45-minute offsets, with and without DST (Lord Howe moves by 30 minutes).
const ZONES = [
  'UTC',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Asia/Tehran',
  'Australia/Adelaide',
  'Australia/Lord_Howe',
  'America/St_Johns',
  'Pacific/Chatham',
  'Europe/Berlin',
  'America/New_York',
] as const;
// DST changes of 2026: US, EU, southern hemisphere (April and October), Lord Howe, Chatham.
const ANCHORS = [
  '2026-03-08',
  '2026-03-29',
  '2026-04-05',
  '2026-09-27',
  '2026-10-04',
  '2026-10-25',
  '2026-11-01',
];
const SITES = [1, 2, 3];
const PROGRAMS = [1, 2];
const EVENTS = ['registration', 'ftd', 'deposit'];

interface Hit {
  kind: 'click' | 'impression';
  flagged: boolean;
  site: number | null;
  toplist: number | null;
  position: number | null;
  brand: number | null;
  program: number | null;
  at: Date;
}
/** An instant within two days of `anchor`: on a quarter-hour edge, just before one, or anywhere in it. */
const instant = (anchor: string) =>
  fc
    .record({
      quarter: fc.integer({ min: -4 * 24 * 2, max: 4 * 24 * 2 }),
      within: fc.oneof(fc.constant(0), fc.constant(899_999), fc.integer({ min: 0, max: 899_999 })),
    })
    .map(({ quarter, within }) => new Date(Date.parse(`${anchor}T00:00:00Z`) + quarter * 900_000 + within));

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });

const hit = (anchor: string): fc.Arbitrary<Hit> =>
  fc.record({
    kind: fc.constantFrom('click' as const, 'click' as const, 'impression' as const),
    flagged: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
    site: maybe(fc.constantFrom(...SITES)),
    toplist: maybe(fc.integer({ min: 1, max: 2 })),
    position: maybe(fc.integer({ min: 1, max: 3 })),
    brand: maybe(fc.integer({ min: 1, max: 2 })),
    program: maybe(fc.constantFrom(...PROGRAMS)),
    at: instant(anchor),
  });

const scenario = fc
  .constantFrom(...ANCHORS)
  .chain((anchor) =>
    fc.record({
      anchor: fc.constant(anchor),
      hits: fc.array(hit(anchor), { minLength: 1, maxLength: 120 }),
      convs: fc.array(
        fc.record({
          event: fc.constantFrom(...EVENTS),
          program: fc.constantFrom(...PROGRAMS),
          click: fc.option(fc.nat(), { nil: null }),
          at: instant(anchor),
        }),
        { maxLength: 40 },
      ),
      siteZones: fc.array(fc.option(fc.constantFrom(...ZONES), { nil: null }), {
        minLength: SITES.length,
        maxLength: SITES.length,
      }),
      programZones: fc.array(fc.constantFrom(...ZONES), {
        minLength: PROGRAMS.length,
        maxLength: PROGRAMS.length,
      }),
      batches: fc.integer({ min: 1, max: 4 }),
      mode: fc.constantFrom<StatsZoneMode>('site', 'program', 'fixed'),
      zone: fc.constantFrom(...ZONES),
      days: fc.integer({ min: 0, max: 4 }),
      startBefore: fc.integer({ min: 0, max: 3 }),
      siteFilter: fc.option(fc.constantFrom(...SITES), { nil: undefined, freq: 3 }),
      programFilter: fc.option(fc.constantFrom(...PROGRAMS), { nil: undefined, freq: 3 }),
    }),
  )
  .map((s) => ({
    ...s,
    convs: s.convs.map((c) => ({ ...c, click: c.click === null ? null : c.click % s.hits.length })),
  }));

/** The calendar day of an instant in a zone, by the JavaScript runtime's own time-zone data. */
function localDay(at: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

const shiftDay = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

describe('rollup reports equal the raw-row computation', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await testDb();
    await new TrackingPartitions(t.db, loadConfig({}), () => new Date()).ensureFor([
      new Date('2026-02-01T00:00:00Z'),
      new Date('2026-12-31T00:00:00Z'),
    ]);
    for (const id of SITES)
      await t.db.query('INSERT INTO sites (id, domain) VALUES ($1, $2)', [id, `s${id}.test`]);
    for (const id of PROGRAMS)
      await t.db.query(
        `INSERT INTO affiliate_programs (id, slug, name, postback_token_hash, postback_token_hint)
         VALUES ($1, $2, $2, '\\x00', 'x')`,
        [id, `op-${id}`],
      );
  });
  afterAll(() => t.close());

  it('stats and reconciliation, across zones with 30/45-minute offsets and DST changes', async () => {
    const repo = new TrackingRepository(t.db);
    const aggregates = new AggregateRepository(t.db);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        run++;
        await t.db.exec(`TRUNCATE clicks, conversions, conversion_keys, click_rollups, conversion_rollups,
                                  postback_log, postback_outcomes, tracking_sites`);
        for (const [i, zone] of s.siteZones.entries())
          if (zone)
            await t.db.query('INSERT INTO tracking_sites (site_id, timezone) VALUES ($1, $2)', [
              SITES[i],
              zone,
            ]);
        for (const [i, zone] of s.programZones.entries())
          await t.db.query('UPDATE affiliate_programs SET timezone = $2 WHERE id = $1', [PROGRAMS[i], zone]);

        const rows: ClickRow[] = s.hits.map((h, i) => ({
          id: `R${run}-${i}`,
          kind: h.kind,
          at: h.at,
          linkId: 1,
          trackerId: 1,
          offerId: null,
          brandId: h.brand,
          siteId: h.site,
          toplistId: h.toplist,
          position: h.position,
          programId: h.program,
          subId: null,
          referrer: null,
          userAgent: null,
          country: null,
          flag: h.flagged ? 'bot' : null,
        }));
        // Several batches, so buckets are added to as well as created.
        const size = Math.ceil(rows.length / s.batches);
        for (let i = 0; i < rows.length; i += size) await repo.insertClicks(rows.slice(i, i + size));
        const jobs: PostbackJob[] = s.convs.map((c, i) => ({
          log: {
            program: `op-${c.program}`,
            method: 'GET',
            contentType: null,
            query: {},
            body: null,
            remoteIp: null,
          },
          receivedAt: c.at,
          conversion: {
            id: `V${run}-${i}`,
            programId: c.program,
            transactionId: `tx-${i % 30}`,
            event: c.event,
            amount: null,
            currency: null,
            playerRef: null,
            clickId: c.click === null ? null : `R${run}-${c.click}`,
          },
        }));
        for (let i = 0; i < jobs.length; i += 7) {
          const batch = jobs.slice(i, i + 7);
          await t.db.tx((q) => repo.with(q).writePostbacks(batch));
        }

        // The raw computation: every counted hit and every conversion that won its transaction id.
        const zoneOf = (site: number | null, program: number | null) => {
          if (s.mode === 'fixed') return s.zone;
          if (s.mode === 'site') return (site === null ? null : s.siteZones[SITES.indexOf(site)]) ?? 'UTC';
          return program === null ? 'UTC' : (s.programZones[PROGRAMS.indexOf(program)] as string);
        };
        const taken = new Set<string>();
        const conversions = s.convs.flatMap((c, i) => {
          const key = `${c.program}/tx-${i % 30}`;
          if (taken.has(key)) return [];
          taken.add(key);
          const h = c.click === null ? undefined : s.hits[c.click];
          const by =
            h && h.kind === 'click' && (h.program === null || h.program === c.program) ? h : undefined;
          return [
            {
              ...c,
              site: by?.site ?? null,
              toplist: by?.toplist ?? null,
              position: by?.position ?? null,
              brand: by?.brand ?? null,
            },
          ];
        });
        const from = shiftDay(s.anchor, -s.startBefore);
        const to = shiftDay(from, s.days);
        const expected = new Map<string, StatsRow>();
        const add = (
          d: {
            site: number | null;
            toplist: number | null;
            position: number | null;
            brand: number | null;
            program: number | null;
            at: Date;
          },
          what: (r: StatsRow) => void,
        ) => {
          if (s.siteFilter !== undefined && d.site !== s.siteFilter) return;
          if (s.programFilter !== undefined && d.program !== s.programFilter) return;
          const tz = zoneOf(d.site, d.program);
          const day = localDay(d.at, tz);
          if (day < from || day > to) return;
          const key = JSON.stringify([day, tz, d.site, d.toplist, d.position, d.brand, d.program]);
          let r = expected.get(key);
          if (!r) {
            r = {
              day,
              timezone: tz,
              siteId: d.site,
              toplistId: d.toplist,
              position: d.position,
              brandId: d.brand,
              programId: d.program,
              clicks: 0,
              impressions: 0,
              events: {},
            };
            expected.set(key, r);
          }
          what(r);
        };
        for (const h of s.hits)
          if (!h.flagged)
            add(h, (r) => {
              if (h.kind === 'click') r.clicks++;
              else r.impressions++;
            });
        for (const c of conversions)
          add(c, (r) => {
            r.events[c.event] = (r.events[c.event] ?? 0) + 1;
          });

        const got = await repo.stats({
          from,
          to,
          tz: s.mode,
          zone: s.zone,
          siteId: s.siteFilter,
          programId: s.programFilter,
          limit: 10_000,
          offset: 0,
        });
        const order = (rs: StatsRow[]) =>
          rs
            .map((r) => JSON.stringify({ ...r, events: Object.fromEntries(Object.entries(r.events).sort()) }))
            .sort();
        expect(order(got.rows)).toEqual(order([...expected.values()]));
        expect(got.total).toBe(expected.size);

        // Reconciliation of one programme in one zone: our clicks, registrations and FTDs per day.
        const program = s.programFilter ?? 1;
        const days = await aggregates.reconcile(program, from, to, s.zone);
        const ours = (day: string) => ({
          day,
          ourClicks: s.hits.filter(
            (h) =>
              h.program === program && h.kind === 'click' && !h.flagged && localDay(h.at, s.zone) === day,
          ).length,
          ourRegistrations: conversions.filter(
            (c) => c.program === program && c.event === 'registration' && localDay(c.at, s.zone) === day,
          ).length,
          ourFtds: conversions.filter(
            (c) => c.program === program && c.event === 'ftd' && localDay(c.at, s.zone) === day,
          ).length,
        });
        expect(
          days.map((d) => ({
            day: d.day,
            ourClicks: d.ourClicks,
            ourRegistrations: d.ourRegistrations,
            ourFtds: d.ourFtds,
          })),
        ).toEqual(Array.from({ length: s.days + 1 }, (_, i) => ours(shiftDay(from, i))));
      }),
      // A counterexample is reported as found: shrinking costs a database round per step.
      { numRuns: Number(process.env.ROLLUP_PROPERTY_RUNS ?? 30), endOnFailure: true },
    );
  }, 300_000);
});
