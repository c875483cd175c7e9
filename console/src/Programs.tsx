import { useEffect, useState } from 'react';
import type { ReportSettings, ReportTest } from '../../src/modules/reporting/aggregates.ts';
import type { Backfill } from '../../src/modules/reporting/backfill-repository.ts';
import { MAPPING_FIELDS, type OperatorRow } from '../../src/modules/reporting/report-mapping.ts';
import { api, type Program } from './api.ts';
import { DateRange, type FieldSpec, FormCard, useAction, useForm } from './form.tsx';
import { ListScreen, usePicked, withNote } from './lists.tsx';
import { PairsEditor, pairsToObject } from './pairs.tsx';
import { LoadedTable, Table } from './table.tsx';
import { IssuedSecret, OutcomeLine, Status, useIssued, useLoad } from './ui.tsx';

// A report row's figures: the mapping's fields from `campaign` on (the rest locate the rows in the answer).
const REPORT_COLUMNS = MAPPING_FIELDS.slice(MAPPING_FIELDS.indexOf('campaign')) as (keyof OperatorRow)[];

type WithToken = { data: Program & { postbackToken: string; postbackUrl: string } };

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** Affiliate programmes: create and edit (with the postback parameter mapping), the postback token, the operator report. */
export function ProgramsScreen() {
  const pick = usePicked<Program>('/tracking/programs');
  const { saved } = pick;
  const issued = useIssued();
  const shown = (r: WithToken, why: string) => {
    issued.issue(r.data.postbackUrl, why);
    saved(r.data);
  };
  return (
    <ListScreen
      wide
      unit="programme"
      pick={pick}
      search={{ id: 'program-search', label: 'Search programmes', placeholder: 'name or slug' }}
      empty="No programmes yet."
      item={withNote((p) => p.slug)}
      newButton
      notice={
        <IssuedSecret
          state={issued}
          testId="postback-url"
          copyLabel="Copy postback URL"
          text={(why) => `Postback URL with its token (${why}): copy it now, the token is shown only once.`}
        />
      }
      detail={(program) =>
        program ? (
          <>
            <ProgramForm program={program} onSaved={saved} />
            <TokenPanel program={program} onRotated={(r) => shown(r, 'rotated')} />
            <ReportPanel program={program} />
          </>
        ) : (
          <ProgramForm onCreated={(r) => shown(r, 'created')} onSaved={saved} />
        )
      }
    />
  );
}

const PROGRAM_SPECS: FieldSpec<
  'slug' | 'name' | 'affiliateId' | 'landingParams' | 'timezone' | 'currency' | 'trackerIds'
>[] = [
  { key: 'slug', id: 'program-slug', label: 'Slug' },
  { key: 'name', id: 'program-name', label: 'Name' },
  { key: 'affiliateId', id: 'program-affiliate', label: 'Affiliate id' },
  { key: 'landingParams', id: 'program-landing', label: 'Landing parameters' },
  { key: 'timezone', id: 'program-timezone', label: 'Report time zone' },
  { key: 'currency', id: 'program-currency', label: 'Currency' },
  { key: 'trackerIds', id: 'program-trackers', label: 'Tracker ids (comma-separated)' },
];

/** Creates a programme (its postback token is then shown once) or edits one, with its parameter mapping. */
function ProgramForm({
  program,
  onCreated,
  onSaved,
}: {
  program?: Program;
  onCreated?: (r: WithToken) => void;
  onSaved: (p: Program) => void;
}) {
  const form = useForm({
    slug: program?.slug ?? '',
    name: program?.name ?? '',
    affiliateId: program?.affiliateId ?? '',
    landingParams: program?.landingParams ?? '',
    timezone: program?.timezone ?? 'UTC',
    currency: program?.currency ?? 'EUR',
    trackerIds: program?.trackerIds.join(', ') ?? '',
  });
  const [map, setMap] = useState<[string, string][]>(Object.entries(program?.paramMap ?? {}));
  const save = () =>
    form.run(async () => {
      const { trackerIds, ...f } = form.f;
      const body = {
        ...f,
        paramMap: pairsToObject(map),
        trackerIds: trackerIds
          .split(/[\s,]+/)
          .filter(Boolean)
          .map(Number),
      };
      if (!program) {
        onCreated?.(await api<WithToken>('POST', '/tracking/programs', body));
        return undefined;
      }
      const { slug: _slug, ...patch } = body;
      const r = await api<{ data: Program }>('PATCH', `/tracking/programs/${program.id}`, patch);
      onSaved(r.data);
      return 'Programme saved.';
    });
  return (
    <FormCard
      id="program-heading"
      record={{ unit: 'programme', name: program?.name }}
      form={form}
      specs={program ? PROGRAM_SPECS.slice(1) : PROGRAM_SPECS}
      // The mapping's errors (`paramMap.<name>`) show under the mapping.
      shown={form.outcome.field?.startsWith('paramMap') ? [form.outcome.field] : []}
      onSubmit={save}
      footer={
        <>
          <PairsEditor
            id="param-map"
            legend="Postback parameter mapping (our name → the operator's parameter)"
            keyLabel="Our parameter"
            valueLabel="Operator parameter"
            pairs={map}
            onChange={setMap}
            max={10}
          />
          {form.outcome.field?.startsWith('paramMap') && (
            <p className="error" role="alert">
              {form.outcome.error}
            </p>
          )}
        </>
      }
    />
  );
}

/** The postback token: only its hint is ever shown again; rotating issues a new one at once. */
function TokenPanel({ program, onRotated }: { program: Program; onRotated: (r: WithToken) => void }) {
  const form = useAction();
  const rotate = () =>
    form.run(async () => {
      if (!window.confirm(`Rotate the postback token of ${program.name}? The old one stops working at once.`))
        return undefined;
      onRotated(await api<WithToken>('POST', `/tracking/programs/${program.id}/token`));
      return 'Token rotated.';
    });
  return (
    <section className="card" aria-labelledby="token-heading">
      <h2 id="token-heading">Postback token</h2>
      <p>
        Current token <code data-testid="token-hint">{program.postbackTokenHint}</code>
      </p>
      <button type="button" onClick={rotate} disabled={form.busy}>
        Rotate token
      </button>
      <OutcomeLine outcome={form.outcome} />
    </section>
  );
}

/** The operator's report endpoint and credential, a test of one day, and pulls of past days with their progress. */
function ReportPanel({ program }: { program: Program }) {
  const base = `/tracking/programs/${program.id}/report`;
  const report = useLoad(() => api<{ data: ReportSettings }>('GET', base), base);
  const r = report.data?.data;
  return (
    <section className="card" aria-labelledby="report-heading">
      <h2 id="report-heading">Operator report</h2>
      <Status load={report}>{r && <ReportForm base={base} report={r} onSaved={report.reload} />}</Status>
      {r?.url && (
        <>
          <ReportTestButton base={base} />
          <Backfills base={base} />
        </>
      )}
    </section>
  );
}

function ReportForm({
  base,
  report,
  onSaved,
}: {
  base: string;
  report: ReportSettings;
  onSaved: () => void;
}) {
  const form = useForm({ url: report.url ?? '', key: '' });
  const [mapping, setMapping] = useState<[string, string][]>(Object.entries(report.mapping ?? {}));
  const save = () =>
    form.run(async () => {
      await api('PUT', base, {
        url: form.f.url.trim(),
        ...(form.f.key ? { key: form.f.key } : {}),
        mapping: pairsToObject(mapping),
      });
      form.setF({ ...form.f, key: '' });
      onSaved();
      return 'Report endpoint saved.';
    });
  return (
    <FormCard
      className=""
      label="Report endpoint"
      form={form}
      specs={[
        { key: 'url', id: 'report-url', label: 'Report URL (https)' },
        {
          key: 'key',
          id: 'report-key',
          label: report.keySet ? 'New credential (set; leave empty to keep)' : 'Credential',
          type: 'password',
        },
      ]}
      shown={['mapping']}
      onSubmit={save}
      submit="Save report endpoint"
      footer={
        <PairsEditor
          id="report-map"
          legend="Report column mapping (our figure → the operator's column)"
          keyLabel="Our figure"
          valueLabel="Operator column"
          pairs={mapping}
          onChange={setMapping}
          max={20}
        />
      }
    />
  );
}

/** Fetches one day from the operator and shows what was parsed; nothing is stored. */
function ReportTestButton({ base }: { base: string }) {
  const form = useAction();
  const [result, setResult] = useState<ReportTest | null>(null);
  const test = () =>
    form.run(async () => {
      const r = await api<{ data: ReportTest }>('POST', `${base}/test`);
      setResult(r.data);
      return undefined;
    });
  return (
    <div>
      <button type="button" onClick={test} disabled={form.busy}>
        {form.busy ? 'Testing…' : 'Test'}
      </button>
      <OutcomeLine outcome={form.outcome} />
      {result && (
        <div data-testid="report-test" role="status">
          <p>
            {result.day}: <strong>{result.outcome}</strong>
            {result.status !== null && ` (HTTP ${result.status})`} · {result.message} · {result.rowCount} rows
            {result.currency && ` in ${result.currency}`}
          </p>
          {result.rows.length > 0 && (
            <Table
              label="First rows of the report"
              rows={result.rows}
              rowKey={(row) => JSON.stringify(row)}
              columns={REPORT_COLUMNS.map((k) => ({
                head: k,
                num: k !== 'campaign' && k !== 'tracker',
                cell: (row: OperatorRow) => row[k],
              }))}
            />
          )}
        </div>
      )}
    </div>
  );
}

/** "Pull now" for a range of past days, and the requested pulls with their progress (polled while running). */
function Backfills({ base }: { base: string }) {
  const [range, setRange] = useState({ from: day(-7), to: day(-1) });
  const [tick, setTick] = useState(0);
  const list = useLoad(() => api<{ data: Backfill[] }>('GET', `${base}/backfills`), `${base}:${tick}`);
  const form = useForm({});
  // Each answer that still has a pull queued or running asks again a second later (keyed on the
  // answer, not on "some are running", which stays true between answers and would ask only once).
  useEffect(() => {
    if (!list.data?.data.some((b) => b.status === 'queued' || b.status === 'running')) return;
    const timer = setTimeout(() => setTick((n) => n + 1), 1000);
    return () => clearTimeout(timer);
  }, [list.data]);
  const pull = () =>
    form.run(async () => {
      await api('POST', `${base}/pull`, range);
      setTick((n) => n + 1);
      return `Pull of ${range.from} to ${range.to} queued.`;
    });
  return (
    <div>
      <FormCard className="row" label="Pull now" form={form} onSubmit={pull} submit="Pull now" grid={false}>
        <DateRange id="pull" from={range.from} to={range.to} onChange={setRange} />
      </FormCard>
      <LoadedTable
        load={list}
        empty="No pulls requested yet."
        testId="backfills"
        columns={[
          { head: 'Days', cell: (b) => `${b.from} – ${b.to}` },
          {
            head: 'Status',
            cell: (b) => <span className={b.status === 'failed' ? 'badge off' : 'badge'}>{b.status}</span>,
          },
          {
            head: 'Progress',
            cell: (b) => (
              <>
                <progress
                  max={b.daysTotal}
                  value={b.daysDone}
                  aria-label={`Days pulled of ${b.from} – ${b.to}`}
                />{' '}
                {b.daysDone} / {b.daysTotal}
              </>
            ),
          },
          { head: 'Error', className: 'small', cell: (b) => b.error ?? '' },
        ]}
      />
    </div>
  );
}
