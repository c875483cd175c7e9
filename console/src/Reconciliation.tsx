import type { Compared, ReconcileDay } from '../../src/modules/tracking/types.ts';
import { api } from './api.ts';
import { Status, useLoad } from './ui.tsx';

interface Reconciliation {
  timezone: string;
  thresholdPercent: number;
  days: ReconcileDay[];
}

const FIGURES = [
  ['clicks', 'Clicks'],
  ['registrations', 'Registrations'],
  ['ftds', 'FTDs'],
] as const;

function Figure({ c, name }: { c: Compared; name: string }) {
  const diff =
    c.difference === null
      ? '—'
      : `${c.difference > 0 ? '+' : ''}${c.difference}${c.differencePercent === null ? '' : ` (${c.differencePercent} %)`}`;
  return (
    <>
      <td className="num">{c.ours}</td>
      <td className="num">{c.operator ?? '—'}</td>
      <td className={`num ${c.flagged ? 'flagged' : ''}`}>
        {c.flagged && <span className="sr-only">{name} differ beyond the threshold: </span>}
        {c.flagged && <span aria-hidden="true">⚠ </span>}
        {diff}
      </td>
    </>
  );
}

/** Per day of one programme: our clicks and postbacks against the operator's report, discrepancies highlighted. */
export function ReconciliationTable({
  programId,
  from,
  to,
}: {
  programId: string;
  from: string;
  to: string;
}) {
  const qs = new URLSearchParams({ from, to }).toString();
  const rec = useLoad(
    () => api<{ data: Reconciliation }>('GET', `/tracking/programs/${programId}/reconciliation?${qs}`),
    `${programId}?${qs}`,
  );
  const r = rec.data?.data;
  const flagged = r?.days.filter((d) => d.flagged).length ?? 0;
  return (
    <section aria-labelledby="rec-heading">
      <h2 id="rec-heading">Reconciliation with the operator's report</h2>
      <Status load={rec} empty={r?.days.length === 0 && 'No days in this range.'}>
        {r && (
          <>
            <p className="muted small" data-testid="rec-summary">
              Days in {r.timezone} (the programme's report zone). Differences beyond {r.thresholdPercent} %
              are flagged: {flagged} of {r.days.length} days.
            </p>
            <div className="table-wrap">
              <table className="reconciliation" data-testid="reconciliation">
                <thead>
                  <tr>
                    <th scope="col" rowSpan={2}>
                      Day
                    </th>
                    <th scope="col" rowSpan={2}>
                      Report
                    </th>
                    {FIGURES.map(([k, label]) => (
                      <th key={k} scope="colgroup" colSpan={3} className="group">
                        {label}
                      </th>
                    ))}
                  </tr>
                  <tr>
                    {FIGURES.map(([k]) => [
                      <th key={`${k}-o`} scope="col" className="num">
                        Ours
                      </th>,
                      <th key={`${k}-p`} scope="col" className="num">
                        Operator
                      </th>,
                      <th key={`${k}-d`} scope="col" className="num">
                        Difference
                      </th>,
                    ])}
                  </tr>
                </thead>
                <tbody>
                  {r.days.map((d) => (
                    <tr key={d.day} className={d.flagged ? 'flagged-row' : undefined}>
                      <th scope="row">{d.day}</th>
                      <td className="small">
                        {d.pulled ? (
                          'pulled'
                        ) : d.lastPull?.status === 'failed' ? (
                          <span className="error">failed: {d.lastPull.reason}</span>
                        ) : (
                          <span className="muted">not pulled</span>
                        )}
                      </td>
                      {FIGURES.map(([k, label]) => (
                        <Figure key={k} c={d[k]} name={label} />
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Status>
    </section>
  );
}
