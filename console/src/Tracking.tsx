import { useState } from 'react';
import { api } from './api.ts';
import { BreakdownTable, type Level } from './Breakdown.tsx';
import { programFilter, siteFilter, usePrograms, useSites } from './choices.ts';
import { DateRange, Fields } from './form.tsx';
import { useNames } from './lists.tsx';
import { localToday, PRESETS, type Preset, periodOf, presetOf, previousOf } from './periods.ts';
import { ReconciliationTable } from './Reconciliation.tsx';
import { StatsChart } from './StatsChart.tsx';
import { type Dimension, daysBetween, METRICS, type Metric, type StatsRow, seriesOf } from './stats.ts';
import { InputField, SelectField, Status, useLoad } from './ui.tsx';

const DIMENSIONS: [Dimension, string][] = [
  ['total', 'Nothing (totals)'],
  ['site', 'Site'],
  ['toplist', 'Toplist'],
  ['position', 'Position'],
  ['brand', 'Brand'],
  ['program', 'Programme'],
];
const CUSTOM = 'custom';

const STATS_PAGE = 1000;
const STATS_MAX_PAGES = 20;

/** Every row of a stats query, page by page (at most 20 000 rows: a wider query asks to narrow it). */
async function allStats(qs: string): Promise<{ rows: StatsRow[]; tz: string }> {
  const rows: StatsRow[] = [];
  for (let page = 1; page <= STATS_MAX_PAGES; page++) {
    const r = await api<{ data: StatsRow[]; meta: { total: number; tz: string } }>(
      'GET',
      `/tracking/stats?${qs}&page=${page}&per_page=${STATS_PAGE}`,
    );
    rows.push(...r.data);
    if (rows.length >= r.meta.total || r.data.length === 0) return { rows, tz: r.meta.tz };
  }
  throw new Error(
    `more than ${STATS_PAGE * STATS_MAX_PAGES} rows: narrow the range or filter by site or programme`,
  );
}

const zoneText = (tz: string | undefined) =>
  tz === 'program' ? "each programme's time zone" : tz === 'site' ? "each site's time zone" : (tz ?? '');

/** Clicks, impressions and conversions per day, broken down by site, toplist, position or brand; CSV export. */
export function TrackingScreen() {
  const today = localToday();
  const [f, setF] = useState(() => ({
    from: new Date(Date.parse(`${today}T00:00:00Z`) - 13 * 86_400_000).toISOString().slice(0, 10),
    to: today,
    timezone: '',
    site: '',
    program: '',
    dim: 'total' as Dimension,
    dim2: '',
    metric: 'clicks' as Metric,
  }));
  const [tz, setTz] = useState('');
  const sites = useSites();
  const programs = usePrograms();

  // The filter without its days: the breakdown asks it for this period and the previous one.
  const filter = new URLSearchParams();
  if (f.timezone.trim()) filter.set('tz', f.timezone.trim());
  if (f.site) filter.set('site_id', f.site);
  if (f.program) filter.set('program_id', f.program);
  const filterQs = filter.toString();
  const qs = new URLSearchParams({ from: f.from, to: f.to, ...Object.fromEntries(filter) }).toString();
  const stats = useLoad(() => allStats(qs), qs);
  const rows = stats.data?.rows ?? [];
  // Toplists and brands can be thousands: only the names the numbers show are fetched, one by one.
  const idsOf = (dim: Dimension, pick: (r: StatsRow) => number | null) =>
    f.dim === dim ? rows.map(pick).filter((id) => id !== null) : [];
  const toplistNames = useNames(
    '/toplists',
    idsOf('toplist', (r) => r.toplistId),
    (t) => `${t.name} (${(t.geo as { code: string }).code})`,
  );
  const brandNames = useNames(
    '/brands',
    idsOf('brand', (r) => r.brandId),
    (b) => String(b.name),
  );

  const programName = (id: number) => programs.data?.data.find((p) => p.id === id)?.name ?? `programme ${id}`;
  const preset = presetOf(f, today);
  const previous = previousOf(preset, f);
  const levels = [f.dim, f.dim2].filter((d): d is Level => d !== '' && d !== 'total');
  const label = (key: string): string => {
    if (key === 'none') return 'unattributed';
    if (key === 'other') return 'all others';
    if (f.dim === 'total') return key;
    const id = Number(key);
    if (f.dim === 'site') return sites.domainOf(id);
    if (f.dim === 'brand') return brandNames[id] ?? `brand ${key}`;
    if (f.dim === 'toplist') return toplistNames[id] ?? `toplist ${key}`;
    if (f.dim === 'program') return programName(id);
    return `position ${key}`;
  };
  const days = daysBetween(f.from, f.to);
  const series = seriesOf(rows, days, f.dim, f.metric);
  const sum = (m: Metric) => rows.reduce((n, r) => n + r[m], 0);
  const summary =
    `${f.dim === 'total' ? 'Clicks, impressions and conversions' : `${f.metric} by ${f.dim}`} per day from ${f.from} to ${f.to}: ` +
    METRICS.map((m) => `${sum(m)} ${m}`).join(', ');
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v });

  return (
    <section>
      <div className="row spread">
        <h1>Tracking</h1>
        <a className="button" href={`/api/admin/v1/tracking/stats?${qs}&format=csv`} download>
          Export CSV
        </a>
      </div>
      <form
        className="row"
        aria-label="Tracking filters"
        onSubmit={(e) => {
          e.preventDefault();
          setF({ ...f, timezone: tz });
        }}
      >
        <SelectField
          id="t-period"
          label="Period"
          value={preset ?? CUSTOM}
          options={[...PRESETS, [CUSTOM, 'Custom range']]}
          onChange={(v) => v !== CUSTOM && setF({ ...f, ...periodOf(v as Preset, today) })}
        />
        <DateRange id="t" from={f.from} to={f.to} onChange={(r) => setF({ ...f, ...r })} />
        <InputField
          id="t-tz"
          label="Time zone"
          value={tz}
          placeholder="program (default)"
          title="program, site, UTC or a zone such as Europe/Malta; applied on Enter"
          onChange={setTz}
          onBlur={() => setF({ ...f, timezone: tz })}
          list="t-tz-list"
        >
          <datalist id="t-tz-list">
            <option value="program">each programme's zone</option>
            <option value="site">each site's zone</option>
            <option value="UTC" />
            <option value={Intl.DateTimeFormat().resolvedOptions().timeZone} />
          </datalist>
        </InputField>
        <Fields
          specs={[
            siteFilter('t-site', sites),
            programFilter('program', 't-program', programs),
            { key: 'dim', id: 't-dim', label: 'Break down by', options: DIMENSIONS },
            ...(f.dim === 'total'
              ? []
              : [
                  {
                    key: 'dim2' as const,
                    id: 't-then',
                    label: 'Then by',
                    all: 'Nothing',
                    options: DIMENSIONS.filter(([d]) => d !== 'total' && d !== f.dim),
                  },
                ]),
            ...(f.dim === 'total'
              ? []
              : [
                  {
                    key: 'metric' as const,
                    id: 't-metric',
                    label: 'Metric',
                    options: METRICS.map((m): [string, string] => [m, m]),
                  },
                ]),
          ]}
          f={f}
          set={set}
        />
      </form>
      <Status
        load={stats}
        empty={rows.length === 0 && 'No clicks, impressions or conversions in this range.'}
      >
        <p className="muted small" data-testid="stats-summary">
          Days cut in {zoneText(stats.data?.tz)}. {METRICS.map((m) => `${sum(m)} ${m}`).join(' · ')}
        </p>
        <StatsChart days={days} series={series} label={label} summary={summary} />
        <BreakdownTable
          query={filterQs}
          period={f}
          previous={previous}
          levels={levels}
          siteName={sites.domainOf}
          programName={programName}
        />
      </Status>
      {f.program ? (
        <ReconciliationTable programId={f.program} from={f.from} to={f.to} />
      ) : (
        <p className="muted">Pick a programme to reconcile its days with the operator's report.</p>
      )}
    </section>
  );
}
