import type { StatsLine } from '../../src/modules/reporting/stats.ts';
import { api } from './api.ts';
import { useNames } from './lists.tsx';
import { changeOf, type Money, moneyText } from './money.ts';
import type { Period } from './periods.ts';
import type { Dimension, StatsRow } from './stats.ts';
import { Table } from './table.tsx';
import { Status, useLoad } from './ui.tsx';

/** A breakdown level: any dimension of the chart but the totals. */
export type Level = Exclude<Dimension, 'total'>;

type Row = StatsRow & Pick<StatsLine, 'revenue' | 'commission' | 'epc' | 'blockedClicks'>;

const COLUMN: Record<Level, keyof Row> = {
  site: 'siteId',
  toplist: 'toplistId',
  position: 'position',
  brand: 'brandId',
  program: 'programId',
};
/** Groups the table shows at most (the API's page). */
const MAX_GROUPS = 1000;

const idOf = (r: Row, level: Level) => r[COLUMN[level]] as number | null;
const keyOf = (r: Row, levels: readonly Level[]) => levels.map((l) => String(idOf(r, l))).join('/') || 'all';

/** Money of a row as one line per currency (EPC leaves out currencies without clicks). */
const money = (m: Money) => moneyText(m);

/**
 * The totals of the filter `query` (site, programme, zone) by up to two levels for `period`, each
 * with money per currency and its clicks against `previous`, summed by the server (`group`).
 */
export function BreakdownTable({
  query,
  period,
  previous,
  levels,
  siteName,
  programName,
}: {
  query: string;
  period: Period;
  previous: Period;
  levels: readonly Level[];
  siteName: (id: number) => string;
  programName: (id: number) => string;
}) {
  const group = levels.length ? levels.join(',') : 'total';
  const load = (p: Period) =>
    api<{ data: Row[] }>(
      'GET',
      `/tracking/stats?${new URLSearchParams({ ...Object.fromEntries(new URLSearchParams(query)), from: p.from, to: p.to, group, per_page: String(MAX_GROUPS) })}`,
    ).then((r) => r.data);
  const key = `${query}|${group}|${period.from}|${period.to}|${previous.from}|${previous.to}`;
  const data = useLoad(async () => {
    const [now, before] = await Promise.all([load(period), load(previous)]);
    return { now, before: new Map(before.map((r) => [keyOf(r, levels), r.clicks])) };
  }, key);
  const rows = data.data?.now ?? [];
  const ids = (level: Level) =>
    levels.includes(level) ? rows.map((r) => idOf(r, level)).filter((id) => id !== null) : [];
  const brands = useNames('/brands', ids('brand'), (b) => String(b.name));
  const toplists = useNames(
    '/toplists',
    ids('toplist'),
    (t) => `${t.name} (${(t.geo as { code: string }).code})`,
  );
  const name = (r: Row, level: Level): string => {
    const id = idOf(r, level);
    if (id === null) return level === 'program' ? 'no programme' : 'unattributed';
    if (level === 'site') return siteName(id);
    if (level === 'program') return programName(id);
    if (level === 'brand') return brands[id] ?? `brand ${id}`;
    if (level === 'toplist') return toplists[id] ?? `toplist ${id}`;
    return `position ${id}`;
  };
  const heads: Record<Level, string> = {
    site: 'Site',
    toplist: 'Toplist',
    position: 'Position',
    brand: 'Brand',
    program: 'Programme',
  };
  return (
    <Status load={data} empty={rows.length === 0 && 'No clicks, impressions or conversions in this range.'}>
      <Table
        testId="stats-totals"
        caption={levels.length ? `Totals by ${levels.join(' and ')}` : 'Totals'}
        rows={rows}
        rowKey={(r) => keyOf(r, levels)}
        columns={[
          ...(levels.length
            ? levels.map((level, i) => ({
                head: heads[level],
                rowHeader: i === 0,
                cell: (r: Row) => name(r, level),
              }))
            : [{ head: 'All', rowHeader: true, cell: () => 'All' }]),
          { head: 'Clicks', num: true, cell: (r) => r.clicks },
          { head: 'Impressions', num: true, cell: (r) => r.impressions },
          // Sent to the site's compliant fallback page instead of the operator: shown when there are any.
          ...(rows.some((r) => r.blockedClicks > 0)
            ? [{ head: 'Blocked clicks', num: true, cell: (r: Row) => r.blockedClicks }]
            : []),
          { head: 'Registrations', num: true, cell: (r) => r.registrations },
          { head: 'FTDs', num: true, cell: (r) => r.ftds },
          { head: 'Conversions', num: true, cell: (r) => r.conversions },
          {
            head: 'Reg. per click',
            num: true,
            cell: (r) => (r.clicks ? `${((100 * r.registrations) / r.clicks).toFixed(1)} %` : '—'),
          },
          { head: 'Revenue', num: true, cell: (r) => money(r.revenue) },
          { head: 'Commission', num: true, cell: (r) => money(r.commission) },
          {
            head: 'EPC',
            num: true,
            cell: (r) => money(r.epc),
          },
          {
            head: `Clicks ${previous.from === previous.to ? previous.from : `${previous.from} – ${previous.to}`}`,
            num: true,
            cell: (r) => {
              const before = data.data?.before.get(keyOf(r, levels)) ?? 0;
              const change = changeOf(r.clicks, before);
              return (
                <>
                  {before} {change && <span className={`change ${change.dir}`}>{change.text}</span>}
                </>
              );
            },
          },
        ]}
      />
    </Status>
  );
}
