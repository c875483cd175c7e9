import { useState } from 'react';
import type { StatsLine } from '../../src/modules/reporting/stats.ts';
import type { WebhookEndpoint } from '../../src/modules/webhooks/types.ts';
import { ApiError, api, type Connection, type Program } from './api.ts';
import { useNames } from './lists.tsx';
import { type Change, changeOf, formatMoney, knownMoney, type Money, moneyText } from './money.ts';
import { localToday, type Period, PRESETS, type Preset, periodOf, previousOf } from './periods.ts';
import { Table } from './table.tsx';
import { SelectField, Status, useLoad } from './ui.tsx';

/** The figures of a grouped stats row the dashboard reads. */
type Line = Pick<StatsLine, 'brandId' | 'toplistId' | 'clicks' | 'ftds' | 'revenue' | 'commission' | 'epc'>;

const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
const TOP = 5;

/** The stats of `p` summed by `group` (`total`: one row, none without data), days cut in the browser's zone. */
const grouped = (p: Period, group: string, perPage = TOP) =>
  api<{ data: Line[] }>(
    'GET',
    `/tracking/stats?from=${p.from}&to=${p.to}&tz=${encodeURIComponent(ZONE)}&group=${group}&per_page=${perPage}`,
  ).then((r) => r.data);

const EMPTY: Line = {
  brandId: null,
  toplistId: null,
  clicks: 0,
  ftds: 0,
  revenue: {},
  commission: {},
  epc: {},
};

/** A section the signed-in person's scopes do not open is left out rather than shown failing. */
const unlessForbidden = <T,>(p: Promise<T>): Promise<T | null> =>
  p.catch((e) => {
    if (e instanceof ApiError && e.status === 403) return null;
    throw e;
  });

function ChangeText({ change }: { change: Change | null }) {
  if (!change) return null;
  return (
    <span className={`change ${change.dir}`} title="against the previous period">
      {change.text}
    </span>
  );
}

function CountTile({ label, now, before }: { label: string; now: number; before: number }) {
  return (
    <section className="tile" aria-label={label}>
      <span className="muted small">{label}</span>
      <strong>{now.toLocaleString()}</strong>
      <span className="small">
        <ChangeText change={changeOf(now, before)} />{' '}
        <span className="muted">vs {before.toLocaleString()}</span>
      </span>
    </section>
  );
}

/** One line per currency: the amount and its change against the same currency before. */
function MoneyTile({ label, now, before }: { label: string; now: Money; before: Money }) {
  const currencies = [...new Set([...Object.keys(now), ...Object.keys(before)])].sort();
  return (
    <section className="tile" aria-label={label}>
      <span className="muted small">{label}</span>
      {currencies.length === 0 && <strong>—</strong>}
      {currencies.map((c) => {
        const a = now[c] ?? null;
        const b = before[c] ?? null;
        return (
          <span key={c} className="money-line">
            <strong>{a === null ? '—' : formatMoney(a, c)}</strong>{' '}
            <span className="small">
              <ChangeText change={changeOf(Number(a ?? 0), Number(b ?? 0))} />{' '}
              <span className="muted">vs {b === null ? '—' : formatMoney(b, c)}</span>
            </span>
          </span>
        );
      })}
    </section>
  );
}

/** The first screen: this period's figures against the previous one, the leaders, and what needs attention. */
export function DashboardScreen() {
  const [preset, setPreset] = useState<Preset>('7d');
  const today = localToday();
  const period = periodOf(preset, today);
  const before = previousOf(preset, period);
  const key = `${preset}:${today}`;
  const totals = useLoad(async () => {
    const [now, prev] = await Promise.all([grouped(period, 'total'), grouped(before, 'total')]);
    return { now: now[0] ?? EMPTY, prev: prev[0] ?? EMPTY };
  }, `totals:${key}`);
  const leaders = useLoad(async () => {
    const [brands, toplists] = await Promise.all([grouped(period, 'brand'), grouped(period, 'toplist')]);
    return {
      brands: brands.filter((r) => r.brandId !== null),
      toplists: toplists.filter((r) => r.toplistId !== null),
    };
  }, `leaders:${key}`);
  const attention = useLoad(async () => {
    const [hooks, connections, reconciled] = await Promise.all([
      unlessForbidden(api<{ data: WebhookEndpoint[] }>('GET', '/webhooks?per_page=100').then((r) => r.data)),
      unlessForbidden(api<{ data: Connection[] }>('GET', '/adserver/connections').then((r) => r.data)),
      unlessForbidden(flaggedDays(period)),
    ]);
    return {
      hooks: hooks?.filter((h) => h.disabledAt !== null) ?? null,
      connections: connections?.filter((c) => c.status !== 'connected') ?? null,
      reconciled: reconciled ?? [],
    };
  }, `attention:${key}`);

  const brandNames = useNames(
    '/brands',
    (leaders.data?.brands ?? []).map((r) => r.brandId as number),
    (b) => String(b.name),
  );
  const toplistNames = useNames(
    '/toplists',
    (leaders.data?.toplists ?? []).map((r) => r.toplistId as number),
    (t) => `${t.name} (${(t.geo as { code: string }).code})`,
  );
  const now = totals.data?.now;
  const prev = totals.data?.prev;
  const leaderColumns = (name: (r: Line) => string, head: string) => [
    { head, rowHeader: true, cell: name },
    { head: 'Clicks', num: true, cell: (r: Line) => r.clicks.toLocaleString() },
    { head: 'FTDs', num: true, cell: (r: Line) => r.ftds.toLocaleString() },
    { head: 'Commission', num: true, cell: (r: Line) => moneyText(r.commission) },
    { head: 'EPC', num: true, cell: (r: Line) => moneyText(r.epc) },
  ];
  const fmt = (d: string) =>
    new Date(`${d}T12:00:00Z`).toLocaleDateString(undefined, { dateStyle: 'medium' });
  const span = (p: Period) => (p.from === p.to ? fmt(p.from) : `${fmt(p.from)} – ${fmt(p.to)}`);

  return (
    <section>
      <div className="row spread">
        <h1>Home</h1>
        <SelectField
          id="home-period"
          label="Period"
          value={preset}
          options={[...PRESETS]}
          onChange={(v) => setPreset(v as Preset)}
        />
      </div>
      <p className="muted small" data-testid="home-period">
        {span(period)}, compared with {span(before)} · days in {ZONE}
      </p>
      <Status load={totals}>
        {now && prev && (
          <div className="tiles" data-testid="kpis" aria-busy={totals.loading}>
            <CountTile label="Clicks" now={now.clicks} before={prev.clicks} />
            <CountTile label="FTDs" now={now.ftds} before={prev.ftds} />
            <MoneyTile label="Revenue" now={now.revenue} before={prev.revenue} />
            <MoneyTile label="Commission" now={now.commission} before={prev.commission} />
            <MoneyTile label="EPC" now={knownMoney(now.epc)} before={knownMoney(prev.epc)} />
          </div>
        )}
      </Status>
      <div className="columns">
        <Status
          load={leaders}
          empty={leaders.data?.brands.length === 0 && 'No clicks or conversions in this period.'}
        >
          <Table
            testId="top-brands"
            caption="Top brands by clicks"
            rows={leaders.data?.brands ?? []}
            rowKey={(r) => String(r.brandId)}
            columns={leaderColumns((r) => brandNames[r.brandId as number] ?? `brand ${r.brandId}`, 'Brand')}
          />
          <Table
            testId="top-toplists"
            caption="Top toplists by clicks"
            rows={leaders.data?.toplists ?? []}
            rowKey={(r) => String(r.toplistId)}
            columns={leaderColumns(
              (r) => toplistNames[r.toplistId as number] ?? `toplist ${r.toplistId}`,
              'Toplist',
            )}
          />
        </Status>
      </div>
      <h2>Needs attention</h2>
      <Status load={attention}>
        <ul data-testid="attention">
          {attention.data?.hooks?.map((h) => (
            <li key={h.id}>
              <a href="#/webhooks">Webhook {h.url}</a> is disabled
              {h.disabledReason ? `: ${h.disabledReason}` : ''}.
            </li>
          ))}
          {attention.data?.reconciled.map((r) => (
            <li key={r.program.id}>
              <a href="#/tracking">{r.program.name}</a>: {r.flagged} of {r.days} days differ from the
              operator's report beyond {r.threshold} %.
            </li>
          ))}
          {attention.data?.connections?.map((c) => (
            <li key={c.id}>
              <a href="#/adservers">Ad server {c.publisher}</a> ({c.environment}) is not connected
              {c.last_error ? `: ${c.last_error}` : ''}.
            </li>
          ))}
          {attention.data &&
            !attention.data.hooks?.length &&
            !attention.data.connections?.length &&
            !attention.data.reconciled.length && (
              <li className="muted">
                Nothing: every webhook and ad server is working and the operators' reports agree.
              </li>
            )}
        </ul>
      </Status>
    </section>
  );
}

/** Programmes read for reconciliation warnings (one request each). */
const RECONCILED_PROGRAMS = 20;

/**
 * The programmes (the first 20) whose days in `p` differ from their operator's report beyond the
 * threshold, with how many days do.
 */
async function flaggedDays(p: Period) {
  const programs = await api<{ data: Program[] }>(
    'GET',
    `/tracking/programs?per_page=${RECONCILED_PROGRAMS}`,
  );
  const checked = await Promise.all(
    programs.data.map(async (program) => {
      const r = await api<{ data: { thresholdPercent: number; days: { flagged: boolean }[] } }>(
        'GET',
        `/tracking/programs/${program.id}/reconciliation?from=${p.from}&to=${p.to}`,
      );
      const flagged = r.data.days.filter((d) => d.flagged).length;
      return { program, flagged, days: r.data.days.length, threshold: r.data.thresholdPercent };
    }),
  );
  return checked.filter((c) => c.flagged > 0);
}
