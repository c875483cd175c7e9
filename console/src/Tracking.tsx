import { useEffect, useState } from 'react';
import { api, type Brand, type Page, type Site, type Toplist } from './api.ts';
import { ReconciliationTable } from './Reconciliation.tsx';
import { StatsChart } from './StatsChart.tsx';
import {
  type Dimension,
  daysBetween,
  METRICS,
  type Metric,
  type StatsRow,
  seriesOf,
  totalsBy,
} from './stats.ts';
import { SelectField, Status, useLoad } from './ui.tsx';

interface Program {
  id: number;
  slug: string;
  name: string;
  timezone: string;
}

const DIMENSIONS: [Dimension, string][] = [
  ['total', 'Nothing (totals)'],
  ['site', 'Site'],
  ['toplist', 'Toplist'],
  ['position', 'Position'],
  ['brand', 'Brand'],
];

const localDay = (d: Date) =>
  new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 10);

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

/** Names of the toplists that appear in the numbers, fetched one by one (there can be hundreds of toplists). */
function useToplistNames(ids: number[]) {
  const [names, setNames] = useState<Record<number, string>>({});
  const missing = ids.filter((id) => !(id in names)).slice(0, 30);
  const key = missing.join(',');
  useEffect(() => {
    for (const id of key ? key.split(',').map(Number) : []) {
      api<{ data: Toplist }>('GET', `/toplists/${id}`).then(
        (r) => setNames((n) => ({ ...n, [id]: `${r.data.name} (${r.data.geo.code})` })),
        () => setNames((n) => ({ ...n, [id]: `toplist ${id}` })),
      );
    }
  }, [key]);
  return names;
}

/** Clicks, impressions and conversions per day, broken down by site, toplist, position or brand; CSV export. */
export function TrackingScreen() {
  const [f, setF] = useState(() => ({
    from: localDay(new Date(Date.now() - 13 * 86_400_000)),
    to: localDay(new Date()),
    timezone: '',
    site: '',
    program: '',
    dim: 'total' as Dimension,
    metric: 'clicks' as Metric,
  }));
  const [tz, setTz] = useState('');
  const sites = useLoad(() => api<Page<Site>>('GET', '/sites?per_page=100'), '');
  const brands = useLoad(() => api<Page<Brand>>('GET', '/brands?per_page=100'), '');
  const programs = useLoad(() => api<Page<Program>>('GET', '/tracking/programs?per_page=100'), '');

  const query = new URLSearchParams({ from: f.from, to: f.to });
  if (f.timezone.trim()) query.set('tz', f.timezone.trim());
  if (f.site) query.set('site_id', f.site);
  if (f.program) query.set('program_id', f.program);
  const qs = query.toString();
  const stats = useLoad(() => allStats(qs), qs);
  const rows = stats.data?.rows ?? [];
  const toplistNames = useToplistNames(
    f.dim === 'toplist' ? [...new Set(rows.map((r) => r.toplistId).filter((id) => id !== null))] : [],
  );

  const label = (key: string): string => {
    if (key === 'none') return 'unattributed';
    if (key === 'other') return 'all others';
    if (f.dim === 'total') return key;
    const id = Number(key);
    if (f.dim === 'site') return sites.data?.data.find((s) => s.id === id)?.domain ?? `site ${key}`;
    if (f.dim === 'brand') return brands.data?.data.find((b) => b.id === id)?.name ?? `brand ${key}`;
    if (f.dim === 'toplist') return toplistNames[id] ?? `toplist ${key}`;
    return `position ${key}`;
  };
  const days = daysBetween(f.from, f.to);
  const series = seriesOf(rows, days, f.dim, f.metric);
  const totals = totalsBy(rows, f.dim);
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
        <div className="field">
          <label htmlFor="t-from">From</label>
          <input
            id="t-from"
            type="date"
            value={f.from}
            max={f.to}
            onChange={(e) => set('from')(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="t-to">To</label>
          <input
            id="t-to"
            type="date"
            value={f.to}
            min={f.from}
            onChange={(e) => set('to')(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="t-tz">Time zone</label>
          <input
            id="t-tz"
            value={tz}
            placeholder="program (default)"
            title="program, site, UTC or a zone such as Europe/Malta; applied on Enter"
            onChange={(e) => setTz(e.target.value)}
            onBlur={() => setF({ ...f, timezone: tz })}
            list="t-tz-list"
          />
          <datalist id="t-tz-list">
            <option value="program">each programme's zone</option>
            <option value="site">each site's zone</option>
            <option value="UTC" />
            <option value={Intl.DateTimeFormat().resolvedOptions().timeZone} />
          </datalist>
        </div>
        <SelectField
          id="t-site"
          label="Site"
          all="All sites"
          value={f.site}
          onChange={set('site')}
          options={(sites.data?.data ?? []).map((x) => [x.id, x.domain])}
        />
        <SelectField
          id="t-program"
          label="Programme"
          all="All programmes"
          value={f.program}
          onChange={set('program')}
          options={(programs.data?.data ?? []).map((p) => [p.id, p.name])}
        />
        <SelectField
          id="t-dim"
          label="Break down by"
          value={f.dim}
          onChange={set('dim')}
          options={DIMENSIONS}
        />
        {f.dim !== 'total' && (
          <SelectField
            id="t-metric"
            label="Metric"
            value={f.metric}
            onChange={set('metric')}
            options={METRICS.map((m) => [m, m])}
          />
        )}
      </form>
      <Status
        loading={stats.loading && !stats.data}
        error={stats.error}
        empty={rows.length === 0 && 'No clicks, impressions or conversions in this range.'}
      >
        <p className="muted small" data-testid="stats-summary">
          Days cut in {zoneText(stats.data?.tz)}. {METRICS.map((m) => `${sum(m)} ${m}`).join(' · ')}
        </p>
        <StatsChart days={days} series={series} label={label} summary={summary} />
        <div className="table-wrap">
          <table data-testid="stats-totals">
            <caption className="sr-only">Totals by {f.dim}</caption>
            <thead>
              <tr>
                <th scope="col">{DIMENSIONS.find(([d]) => d === f.dim)?.[1].replace(' (totals)', '')}</th>
                <th scope="col" className="num">
                  Clicks
                </th>
                <th scope="col" className="num">
                  Impressions
                </th>
                <th scope="col" className="num">
                  Registrations
                </th>
                <th scope="col" className="num">
                  FTDs
                </th>
                <th scope="col" className="num">
                  Conversions
                </th>
                <th scope="col" className="num">
                  Reg. per click
                </th>
              </tr>
            </thead>
            <tbody>
              {totals.map((t) => (
                <tr key={t.key}>
                  <th scope="row">{f.dim === 'total' ? 'All' : label(t.key)}</th>
                  <td className="num">{t.clicks}</td>
                  <td className="num">{t.impressions}</td>
                  <td className="num">{t.registrations}</td>
                  <td className="num">{t.ftds}</td>
                  <td className="num">{t.conversions}</td>
                  <td className="num">
                    {t.clicks ? `${((100 * t.registrations) / t.clicks).toFixed(1)} %` : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Status>
      {f.program ? (
        <ReconciliationTable programId={f.program} from={f.from} to={f.to} />
      ) : (
        <p className="muted">Pick a programme to reconcile its days with the operator's report.</p>
      )}
    </section>
  );
}
