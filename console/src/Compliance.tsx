import { useState } from 'react';
import type { ReportEntry } from '../../src/modules/compliance/repository.ts';
import { siteFilter, useSites } from './choices.ts';
import { Fields } from './form.tsx';
import { useDebounced, usePagedList } from './lists.tsx';
import { LoadedTable, Pager } from './table.tsx';
import { InputField } from './ui.tsx';

const entryKey = (e: ReportEntry) =>
  `${e.status}:${e.scope}:${e.toplistId}:${e.itemId}:${e.country}:${e.rule}`;

/** The report's query parameters from the filter form (a country as an uppercase code). */
function reportParams(f: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  if (f.site) out.site_id = f.site;
  if (f.status) out.status = f.status;
  if (f.brand_id?.trim()) out.brand_id = f.brand_id.trim();
  if (f.country?.trim()) out.country = f.country.trim().toUpperCase();
  return out;
}

/**
 * Compliance: what the live lists withhold now (from a list, or from a global list's visitors of a
 * country) and show by override, where, why and since when; filtered and paged by the server, with
 * a CSV of the same filter.
 */
export function ComplianceScreen() {
  const sites = useSites();
  const [f, setF] = useState<Record<string, string>>({});
  const params = reportParams(useDebounced(f));
  const list = usePagedList<ReportEntry>('/compliance/report', { params, perPage: 50, search: false });
  const set = (k: string) => (v: string) => setF({ ...f, [k]: v });
  return (
    <section>
      <div className="row spread">
        <h1>Compliance</h1>
        <a
          className="button"
          href={`/api/admin/v1/compliance/report?${new URLSearchParams({ ...params, format: 'csv' })}`}
          download
        >
          Export CSV
        </a>
      </div>
      <p className="muted">
        Items the live lists do not show where their brand may not be advertised (restricted country, no
        licence where one is required, offer or trackers for other countries), and violations a list was
        published over by an override.
      </p>
      <form className="row wrap" aria-label="Compliance filters" onSubmit={(e) => e.preventDefault()}>
        <Fields
          specs={[
            siteFilter('flt-site', sites),
            {
              key: 'status',
              id: 'flt-status',
              label: 'Status',
              all: 'Withheld or overridden',
              options: [
                ['withheld', 'Withheld'],
                ['overridden', 'Shown by override'],
              ],
            },
          ]}
          f={f}
          set={set}
        />
        <InputField
          id="flt-brand_id"
          label="Brand id"
          value={f.brand_id ?? ''}
          maxLength={10}
          inputMode="numeric"
          onChange={set('brand_id')}
        />
        <InputField
          id="flt-country"
          label="Country (code)"
          value={f.country ?? ''}
          maxLength={2}
          placeholder="SE"
          onChange={set('country')}
        />
      </form>
      <LoadedTable
        load={list}
        rowKey={entryKey}
        empty="Nothing is withheld: every live list may show every item it ranks."
        testId="compliance-report"
        columns={[
          {
            head: 'Since',
            cell: (e) => (e.since ? new Date(e.since).toLocaleString() : '—'),
          },
          {
            head: 'Status',
            cell: (e) =>
              e.status === 'withheld' ? (
                <span className="badge off">withheld</span>
              ) : (
                <span className="badge">override</span>
              ),
          },
          {
            head: 'List',
            cell: (e) => <code>{e.toplistSlug}</code>,
            sub: (e) =>
              `#${e.toplistId} · ${sites.domainOf(e.siteId)} · ${e.geo.type} ${e.geo.code} · v${e.version}`,
          },
          {
            head: 'Where',
            cell: (e) => e.country,
            sub: (e) => (e.scope === 'visitors' ? 'visitors of the global list' : 'covered by the list'),
          },
          { head: 'Brand', cell: (e) => e.brandName, sub: (e) => `#${e.brandId} · position ${e.position}` },
          { head: 'Rule', cell: (e) => <code>{e.rule}</code>, sub: (e) => e.reason },
        ]}
      >
        <Pager list={list} label="Compliance report pages" />
      </LoadedTable>
    </section>
  );
}
