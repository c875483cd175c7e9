import { type CsvColumn, csvColumns, toCsv } from '../../lib/csv.ts';
import { invalidField } from '../../lib/errors.ts';
import { type PageMeta, pageMeta } from '../../lib/paging.ts';
import { daysBetween, isDay, isTimezone } from '../../lib/time.ts';
import type { CatalogService } from '../catalog/service.ts';
import {
  STATS_DIMENSIONS,
  type StatsDimension,
  type StatsRow,
  type StatsZoneMode,
} from '../tracking/types.ts';
import type { StatsRepository } from './stats-repository.ts';

export const STATS_DEFAULT_PER_PAGE = 100;
export const STATS_MAX_PER_PAGE = 1000;
/** A CSV export holds at most this many rows; a wider one asks for a narrower query. */
export const STATS_MAX_EXPORT_ROWS = 50_000;
const MAX_DAYS = 366;
/** A grouped report keeps at most this many dimensions. */
export const STATS_MAX_GROUP = 2;
/** A `by=sub_id` report reads raw clicks and conversions, so its range is shorter. */
export const SUB_ID_MAX_DAYS = 31;

/** The stats query as the admin API takes it. */
export interface StatsQuery {
  from: string;
  to: string;
  /** `program` (default), `site`, `UTC` or an IANA zone name. */
  tz?: string | undefined;
  programId?: number | undefined;
  siteId?: number | undefined;
  /** Only these sites' rows (a person limited to some sites); undefined: every site. */
  siteIds?: readonly number[] | undefined;
  toplistId?: number | undefined;
  brandId?: number | undefined;
  /** `sub_id`: rows are also split by the clicks' sub_id. */
  by?: 'sub_id' | undefined;
  /** One or two dimensions, comma-separated, or `total`: rows are summed over every other one. */
  group?: string | undefined;
  page?: number | undefined;
  perPage?: number | undefined;
}

/** One stats row with the derived counts and rates (rates as decimal strings, never floats). */
export interface StatsLine extends StatsRow {
  registrations: number;
  ftds: number;
  conversions: number;
  /** Registrations per counted click, 4 decimals; null without clicks. */
  conversionRate: string | null;
  /** FTDs per counted click, 4 decimals; null without clicks. */
  ftdRate: string | null;
}

const rate = (n: number, clicks: number) => (clicks ? (n / clicks).toFixed(4) : null);

function line(r: StatsRow): StatsLine {
  const registrations = r.events.registration ?? 0;
  const ftds = r.events.ftd ?? 0;
  return {
    ...r,
    registrations,
    ftds,
    conversions: Object.values(r.events).reduce((a, b) => a + b, 0),
    conversionRate: rate(registrations, r.clicks),
    ftdRate: rate(ftds, r.clicks),
  };
}

/** Reads `group`: `total`, or up to two known dimensions, each once; undefined when absent. */
export function groupOf(group: string | undefined): StatsDimension[] | undefined {
  if (group === undefined) return undefined;
  if (group.trim() === 'total') return [];
  const dims = group.split(',').map((d) => d.trim());
  const known: readonly string[] = STATS_DIMENSIONS;
  const unknown = dims.find((d) => !known.includes(d));
  if (unknown !== undefined)
    throw invalidField(
      'group',
      `"${unknown}" is not a dimension: use total or one or two of ${STATS_DIMENSIONS.join(', ')}`,
    );
  if (new Set(dims).size !== dims.length) throw invalidField('group', 'names a dimension twice');
  if (dims.length > STATS_MAX_GROUP)
    throw invalidField('group', `groups by at most ${STATS_MAX_GROUP} dimensions`);
  return dims as StatsDimension[];
}

/** Reads `tz`: the per-row modes, `UTC` in any case, or a validated IANA zone. */
function zoneOf(tz: string | undefined, known: ReadonlySet<string>): { tz: StatsZoneMode; zone?: string } {
  if (tz === undefined || tz === 'program') return { tz: 'program' };
  if (tz === 'site') return { tz: 'site' };
  if (tz.toUpperCase() === 'UTC') return { tz: 'fixed', zone: 'UTC' };
  if (!isTimezone(tz, known))
    throw invalidField('tz', 'must be program, site, UTC or an IANA time zone such as Europe/Malta');
  return { tz: 'fixed', zone: tz };
}

const perCurrency = (m: Record<string, string | null>) =>
  Object.entries(m)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([c, v]) => `${c}:${v ?? '-'}`)
    .join(' ');

const CSV_COLUMNS: CsvColumn<StatsLine>[] = csvColumns(
  [
    'day',
    'timezone',
    'siteId',
    'toplistId',
    'position',
    'brandId',
    'programId',
    'clicks',
    'impressions',
    'blockedClicks',
    'registrations',
    'ftds',
    'conversions',
    'conversionRate',
    'ftdRate',
    'revenue',
    'commission',
    'epc',
    'events',
  ],
  {
    // Money per currency, `EUR:12.5000` separated by spaces (EPC `-` without clicks).
    revenue: (r) => perCurrency(r.revenue),
    commission: (r) => perCurrency(r.commission),
    epc: (r) => perCurrency(r.epc),
    // Every event with its count, `event:n` separated by spaces, names as the operators sent them.
    events: (r) =>
      Object.entries(r.events)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([e, n]) => `${e}:${n}`)
        .join(' '),
  },
);

/** Stats by day × site × toplist × position × brand × programme, and sites' reporting zones. */
export class TrackingStats {
  constructor(
    /** On the primary: the sites' time zones are written and read back there. */
    private readonly repo: StatsRepository,
    /** The same queries on the read replica (when configured): stats pages and CSV. */
    private readonly reports: StatsRepository,
    private readonly catalog: CatalogService,
    /** The database's time zone names. */
    private readonly zones: () => Promise<ReadonlySet<string>>,
  ) {}

  private check(q: StatsQuery): void {
    for (const f of ['from', 'to'] as const)
      if (!isDay(q[f])) throw invalidField(f, 'must be a date YYYY-MM-DD');
    const days = daysBetween(q.from, q.to);
    if (days < 0) throw invalidField('to', 'must not be before from');
    if (days >= MAX_DAYS) throw invalidField('to', `the range is at most ${MAX_DAYS} days`);
    if (q.by === 'sub_id' && days >= SUB_ID_MAX_DAYS)
      throw invalidField('to', `with by=sub_id the range is at most ${SUB_ID_MAX_DAYS} days`);
  }

  private async filter(q: StatsQuery) {
    return {
      from: q.from,
      to: q.to,
      ...zoneOf(q.tz, await this.zones()),
      programId: q.programId,
      siteId: q.siteId,
      siteIds: q.siteIds,
      toplistId: q.toplistId,
      brandId: q.brandId,
      bySubId: q.by === 'sub_id',
      group: groupOf(q.group),
    };
  }

  /** One page of stats rows. */
  async page(q: StatsQuery): Promise<{ data: StatsLine[]; meta: PageMeta & { tz: string } }> {
    this.check(q);
    const page = q.page ?? 1;
    const perPage = q.perPage ?? STATS_DEFAULT_PER_PAGE;
    const f = await this.filter(q);
    const { rows, total } = await this.reports.stats({ ...f, limit: perPage, offset: (page - 1) * perPage });
    return { data: rows.map(line), meta: { ...pageMeta(total, page, perPage), tz: f.zone ?? f.tz } };
  }

  /** Every row of the query as CSV; 422 when there are more than the export limit. */
  async csv(q: StatsQuery): Promise<string> {
    this.check(q);
    const { rows } = await this.reports.stats({
      ...(await this.filter(q)),
      limit: STATS_MAX_EXPORT_ROWS + 1,
      offset: 0,
    });
    if (rows.length > STATS_MAX_EXPORT_ROWS)
      throw invalidField(
        'to',
        `more than ${STATS_MAX_EXPORT_ROWS} rows: narrow the range or filter by program, site, toplist or brand`,
      );
    const columns: typeof CSV_COLUMNS =
      q.by === 'sub_id'
        ? [...CSV_COLUMNS.slice(0, 7), ['sub_id', (r) => r.subId ?? null], ...CSV_COLUMNS.slice(7)]
        : CSV_COLUMNS;
    return toCsv(
      columns.map(([name]) => name),
      rows.map(line).map((r) => columns.map(([, get]) => get(r))),
    );
  }

  /** A site's reporting zone (UTC until one is set). */
  async siteTimezone(siteId: number): Promise<{ siteId: number; timezone: string }> {
    await this.catalog.sites.get(siteId);
    return { siteId, timezone: (await this.repo.siteTimezone(siteId)) ?? 'UTC' };
  }

  /** Sets the zone stats with `tz=site` cut this site's days in. */
  async setSiteTimezone(siteId: number, timezone: string): Promise<{ siteId: number; timezone: string }> {
    if (!isTimezone(timezone, await this.zones()))
      throw invalidField('timezone', 'must be an IANA time zone such as Europe/Malta');
    await this.catalog.sites.get(siteId);
    await this.repo.setSiteTimezone(siteId, timezone);
    return { siteId, timezone };
  }
}
