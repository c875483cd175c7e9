import { useState } from 'react';
import type { PostbackEntry } from '../../src/modules/reporting/records.ts';
import type { ConversionRecord as Conversion } from '../../src/modules/reporting/records-repository.ts';
import { api } from './api.ts';
import { programFilter, usePrograms, useSites } from './choices.ts';
import { DateRange, Fields, useAction } from './form.tsx';
import { useDebounced, useNames, usePagedList } from './lists.tsx';
import { formatMoney } from './money.ts';
import { LoadedTable, Pager, type TableProps } from './table.tsx';
import { InputField, OutcomeLine } from './ui.tsx';

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const when = (iso: string) => new Date(iso).toLocaleString();

/**
 * The list of both screens, paged by the server under their filter form: programme, the other
 * selects, UTC days, then the text fields (debounced).
 */
function useFilteredList<T extends { id: string; receivedAt: string }>(path: string) {
  const programs = usePrograms();
  const [f, setF] = useState<Record<string, string>>({ from: day(-29), to: day(0) });
  const settled = useDebounced(f);
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(settled)) if (v.trim()) params[k] = v.trim();
  type Select = [key: string, label: string, all: string, options: [string | number, string][]];
  const set = (k: string) => (v: string) => setF({ ...f, [k]: v });
  const form = ({
    label,
    selects,
    texts,
  }: {
    label: string;
    selects: Select[];
    texts: [key: string, label: string][];
  }) => (
    <form className="row wrap" aria-label={label} onSubmit={(e) => e.preventDefault()}>
      <Fields
        specs={[
          programFilter('program_id', 'flt-program_id', programs),
          ...selects.map(([key, label, all, options]) => ({ key, id: `flt-${key}`, label, all, options })),
        ]}
        f={f}
        set={set}
      />
      <DateRange id="flt" from={f.from ?? ''} to={f.to ?? ''} onChange={(r) => setF({ ...f, ...r })} />
      {texts.map(([k, text]) => (
        <InputField
          key={k}
          id={`flt-${k}`}
          label={text}
          value={f[k] ?? ''}
          maxLength={200}
          onChange={set(k)}
        />
      ))}
    </form>
  );
  const list = usePagedList<T>(path, { params, perPage: 50, search: false });
  /** The page as a table led by when each record was received, and its pager (`unit` names the pages). */
  const table = ({
    unit,
    columns,
    ...props
  }: Omit<TableProps<T>, 'rows'> & { unit: string; empty: string }) => (
    <LoadedTable
      load={list}
      columns={[{ head: 'Received', cell: (r) => when(r.receivedAt) }, ...columns]}
      {...props}
    >
      <Pager list={list} label={`${unit} pages`} />
    </LoadedTable>
  );
  return { programs, params, form, list, table };
}

/** Conversions: filtered by programme, event, attribution, days and ids; paged by the server; CSV of the same filter. */
export function ConversionsScreen() {
  const flt = useFilteredList<Conversion>('/tracking/conversions');
  const programName = (id: number) =>
    flt.programs.data?.data.find((p) => p.id === id)?.name ?? `programme ${id}`;
  const shown = flt.list.data?.data ?? [];
  const sites = useSites();
  const ids = (pick: (c: Conversion) => number | null) =>
    shown.map(pick).filter((id): id is number => id !== null);
  const brands = useNames(
    '/brands',
    ids((c) => c.brandId),
    (b) => String(b.name),
  );
  const toplists = useNames(
    '/toplists',
    ids((c) => c.toplistId),
    (t) => `${t.name} (${(t.geo as { code: string }).code})`,
  );
  const attribution = (c: Conversion) =>
    [
      c.brandId !== null && (brands[c.brandId] ?? `brand ${c.brandId}`),
      c.toplistId !== null &&
        `${toplists[c.toplistId] ?? `toplist ${c.toplistId}`}${c.position === null ? '' : ` #${c.position}`}`,
      c.siteId !== null && sites.domainOf(c.siteId),
    ]
      .filter(Boolean)
      .join(' · ');
  return (
    <section>
      <div className="row spread">
        <h1>Conversions</h1>
        <a
          className="button"
          href={`/api/admin/v1/tracking/conversions?${new URLSearchParams({ ...flt.params, format: 'csv' })}`}
          download
        >
          Export CSV
        </a>
      </div>
      {flt.form({
        label: 'Conversion filters',
        selects: [
          [
            'attributed',
            'Attributed',
            'Either',
            [
              ['true', 'Attributed'],
              ['false', 'Unattributed'],
            ],
          ],
        ],
        texts: [
          ['event', 'Event'],
          ['transaction_id', 'Transaction id'],
          ['click_id', 'Click id'],
          ['sub_id', 'Sub id'],
        ],
      })}
      {flt.table({
        unit: 'Conversion',
        empty: 'No conversions match.',
        testId: 'conversions',
        columns: [
          { head: 'Programme', cell: (c) => programName(c.programId) },
          { head: 'Event', cell: (c) => c.event },
          { head: 'Transaction', cell: (c) => <code>{c.transactionId}</code> },
          {
            head: 'Amount',
            num: true,
            cell: (c) =>
              c.amount === null ? '—' : c.currency ? formatMoney(c.amount, c.currency) : c.amount,
          },
          {
            head: 'Attribution',
            cell: (c) => (c.attributed ? attribution(c) : <span className="badge off">unattributed</span>),
          },
          { head: 'Sub id', cell: (c) => c.subId ?? '' },
        ],
      })}
    </section>
  );
}

/** The raw postback log: every postback received with its outcomes; a replayable one can be processed again. */
export function PostbacksScreen() {
  const flt = useFilteredList<PostbackEntry>('/tracking/postbacks');
  const { list } = flt;
  const action = useAction();
  const replay = (p: PostbackEntry) =>
    action.run(async () => {
      const r = await api<{
        data: { status: number; code: string; duplicate: boolean; message: string | null };
      }>('POST', `/tracking/postbacks/${p.id}/replay`);
      list.reload();
      const why = r.data.message ? ` (${r.data.message})` : r.data.duplicate ? ' (duplicate)' : '';
      return `Replayed ${p.id}: ${r.data.code}${why}.`;
    });
  return (
    <section>
      <h1>Postback log</h1>
      {flt.form({
        label: 'Postback filters',
        selects: [
          [
            'outcome',
            'Outcome',
            'Any',
            [
              ['accepted', 'Accepted'],
              ['duplicate', 'Duplicate'],
              ['rejected', 'Rejected'],
            ],
          ],
        ],
        texts: [
          ['code', 'Error code'],
          ['reason', 'Reason'],
          ['transaction_id', 'Transaction id'],
        ],
      })}
      <OutcomeLine outcome={action.outcome} />
      {flt.table({
        unit: 'Postback',
        empty: 'No postbacks match.',
        testId: 'postbacks',
        columns: [
          { head: 'Programme', cell: (p) => p.program },
          {
            head: 'Parameters',
            className: 'small break',
            cell: (p) => <code>{JSON.stringify(p.params)}</code>,
          },
          {
            head: 'Outcomes',
            cell: (p) =>
              p.outcomes.map((o) => (
                <div key={o.decidedAt} className="small">
                  <span className={o.status < 300 ? 'badge' : 'badge off'}>{o.code}</span> {o.status}
                  {o.replay && ' (replay)'}
                  {o.message && <div className="muted">{o.message}</div>}
                </div>
              )),
          },
          {
            head: 'Replay',
            cell: (p) =>
              p.replayable && (
                <button type="button" onClick={() => replay(p)} aria-label={`Replay ${p.id}`}>
                  Replay
                </button>
              ),
          },
        ],
      })}
    </section>
  );
}
