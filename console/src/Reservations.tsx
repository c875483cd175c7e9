import { useState } from 'react';
import { api, type Creative, type Reservation, type ReservationSummary, type Statement } from './api.ts';
import { creativeBadge, preview, UploadForm } from './Creatives.tsx';
import { useAction } from './form.tsx';
import { ACTIONS, LoadedTable, Table } from './table.tsx';
import { InputField, OutcomeLine, SelectField, Status, useLoad } from './ui.tsx';

const STATUSES: [string, string][] = [
  ['held', 'Awaiting approval (held)'],
  ['approving', 'Being approved'],
  ['booked', 'Booked'],
  ['rejected', 'Rejected'],
  ['expired', 'Expired'],
];

const badge = (status: string) => (
  <span className={`badge ${status === 'booked' || status === 'held' ? '' : 'off'}`}>{status}</span>
);

const when = (iso: string) => iso.replace('T', ' ').slice(0, 16);

/** Why Approve and Reject cannot be pressed now, or null when they can. */
function blocked(r: Pick<Reservation, 'status' | 'expires_at'>, now: number): string | null {
  if (r.status === 'approving') return 'Its draft order push is in flight.';
  if (r.status !== 'held') return `It is ${r.status}: nothing left to decide.`;
  if (Date.parse(r.expires_at) <= now) return 'Its hold has run out: approving it would be refused.';
  return null;
}

/** The reservations inbox: held reservations first, each opened with its lines, timeline, Approve and Reject. */
export function ReservationsScreen() {
  const [status, setStatus] = useState('held');
  const list = useLoad(
    () =>
      api<{ data: ReservationSummary[] }>('GET', `/market/reservations${status ? `?status=${status}` : ''}`),
    status,
  );
  const [openId, setOpenId] = useState<string | null>(null);
  const rows = list.data?.data ?? [];
  // The opened reservation stays open after a decision moves it out of the filtered list.
  const currentId = openId ?? rows[0]?.id;
  return (
    <section>
      <h1>Reservations</h1>
      <SelectField
        id="reservation-status"
        label="Show"
        value={status}
        onChange={(v) => {
          setStatus(v);
          setOpenId(null);
        }}
        options={STATUSES}
        all="All reservations"
      />
      <LoadedTable
        load={list}
        empty={status === 'held' ? 'No reservation awaits approval.' : 'No reservations.'}
        testId="reservations"
        rowProps={(r) => ({ 'aria-current': r.id === currentId })}
        columns={[
          {
            head: 'Campaign',
            rowHeader: true,
            cell: (r) => <strong>{r.campaign_name}</strong>,
            sub: (r) => `${r.advertiser_id} · ${r.currency}`,
          },
          { head: 'Status', cell: (r) => badge(r.status), sub: (r) => r.last_error ?? undefined },
          { head: 'Holds until', cell: (r) => when(r.expires_at) },
          { head: 'Lines', num: true, cell: (r) => r.lines },
          { head: 'Impressions', num: true, cell: (r) => r.impressions.toLocaleString('en') },
          {
            head: ACTIONS,
            cell: (r) => (
              <button
                type="button"
                aria-pressed={r.id === currentId}
                onClick={() => setOpenId(r.id)}
                aria-label={`Open reservation ${r.campaign_name}`}
              >
                Open
              </button>
            ),
          },
        ]}
      />
      {currentId && <ReservationDetail key={currentId} id={currentId} onDecided={list.reload} />}
    </section>
  );
}

/** One reservation: its lines (price, risk, line item ids), Approve, Reject with a reason, and its timeline. */
function ReservationDetail({ id, onDecided }: { id: string; onDecided: () => void }) {
  const [version, setVersion] = useState(0);
  const load = useLoad(
    () => api<{ data: Reservation }>('GET', `/market/reservations/${id}`),
    `${id}:${version}`,
  );
  const creatives = useLoad(
    () => api<{ data: Creative[] }>('GET', `/creatives?reservation_id=${encodeURIComponent(id)}`),
    `${id}:${version}`,
  );
  const action = useAction();
  const [reason, setReason] = useState('');
  const r = load.data?.data;
  const creativesOf = (lineNo: number) =>
    (creatives.data?.data ?? []).filter((c) => c.reservation_line_no === lineNo && c.status !== 'replaced');
  const decide = async (path: 'approve' | 'reject') => {
    action.setOutcome({});
    await action.run(async () => {
      const res = await api<{ data: Reservation }>(
        'POST',
        `/market/reservations/${id}/${path}`,
        path === 'reject' ? { reason } : undefined,
      );
      onDecided();
      return path === 'approve'
        ? `Booked: draft order ${res.data.order_id} on the ad server.`
        : `Rejected: ${res.data.reason}.`;
    });
    // A failed approval is on the timeline too.
    setVersion((n) => n + 1);
  };
  const why = r ? blocked(r, Date.now()) : null;
  return (
    <section aria-labelledby="reservation-detail" className="detail">
      <Status load={load}>
        {r && (
          <>
            <div className="row spread">
              <h2 id="reservation-detail">
                {r.campaign_name} {badge(r.status)}
              </h2>
              <button
                type="button"
                className="primary"
                disabled={why !== null || action.busy}
                aria-describedby={why ? 'reservation-blocked' : undefined}
                onClick={() => decide('approve')}
              >
                {action.busy ? 'Working…' : 'Approve and push draft order'}
              </button>
            </div>
            {why && (
              <p id="reservation-blocked" className="muted">
                {why}
              </p>
            )}
            <p data-testid="reservation-order">
              Order: {r.order_id ? <code>{r.order_id}</code> : <span className="muted">none yet</span>} ·
              holds until {when(r.expires_at)}
              {r.reason && ` · reason: ${r.reason}`}
            </p>
            {r.last_error && (
              <p className="error" role="alert">
                Last approval failed: {r.last_error}
              </p>
            )}
            <OutcomeLine outcome={action.outcome} shown={['reason']} />
            <h3>Lines</h3>
            <Table
              testId="reservation-lines"
              rows={r.lines}
              rowKey={(l) => l.line_no}
              columns={[
                { head: 'Line', rowHeader: true, cell: (l) => l.line_no, sub: (l) => l.product_id },
                { head: 'Geo · month', cell: (l) => `${l.geo} · ${l.month}` },
                { head: 'Impressions', num: true, cell: (l) => l.impressions.toLocaleString('en') },
                { head: 'Price', num: true, cell: (l) => `${l.price} ${r.currency}`, sub: (l) => l.pricing },
                {
                  head: 'Availability',
                  cell: (l) => (l.at_risk ? <span className="badge off">at risk</span> : 'covered'),
                },
                {
                  head: 'Creatives',
                  cell: (l) => <LineCreatives creatives={creativesOf(l.line_no)} loaded={!!creatives.data} />,
                },
                {
                  head: 'line_item_id',
                  cell: (l) =>
                    l.line_item_id ? <code>{l.line_item_id}</code> : <span className="muted">—</span>,
                },
              ]}
            />
            {r.status === 'held' && (
              <UploadForm
                title="Upload a creative for a line"
                onUploaded={() => setVersion((n) => n + 1)}
                target={{ reservation_id: r.id }}
                lineNos={r.lines.map((l) => l.line_no)}
              />
            )}
            <form
              className="row"
              onSubmit={(e) => {
                e.preventDefault();
                void decide('reject');
              }}
            >
              <InputField
                id="reject-reason"
                label="Reason for rejecting"
                value={reason}
                required
                maxLength={1000}
                onChange={setReason}
                aria-invalid={action.outcome.field === 'reason'}
              >
                {action.outcome.field === 'reason' && (
                  <span className="error" role="alert">
                    {action.outcome.error}
                  </span>
                )}
              </InputField>
              <button type="submit" disabled={why !== null || action.busy}>
                Reject
              </button>
            </form>
            {r.status === 'booked' && <IssueStatement reservation={r} />}
            <h3>Timeline</h3>
            <Table
              testId="reservation-timeline"
              rows={r.events.map((e, n) => ({ ...e, n }))}
              rowKey={(e) => e.n}
              columns={[
                { head: 'When', rowHeader: true, cell: (e) => when(e.at) },
                {
                  head: 'What',
                  cell: (e) => e.kind,
                  sub: (e) => (e.detail.message as string | undefined) ?? undefined,
                },
                { head: 'Who', cell: (e) => e.actor },
              ]}
            />
          </>
        )}
      </Status>
    </section>
  );
}

/** A line's creatives (replaced ones left out): a thumbnail, the name and its moderation state, moderated on Creatives. */
function LineCreatives({ creatives, loaded }: { creatives: Creative[]; loaded: boolean }) {
  if (!loaded) return <span className="muted">…</span>;
  if (!creatives.length) return <span className="muted">none yet</span>;
  return (
    <ul className="plain">
      {creatives.map((c) => (
        <li key={c.id}>
          <img src={preview(c)} alt={c.name} height={24} /> {c.name} {creativeBadge(c.status)}
          {c.status === 'pending' && (
            <>
              {' '}
              <a href="#/creatives">moderate</a>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * A booked reservation's statements: those issued (Statements opens them) and Issue for a month of
 * its lines; a month not over yet in the account's time zone is refused by the server, with why.
 */
function IssueStatement({ reservation }: { reservation: Reservation }) {
  const months = [...new Set(reservation.lines.map((l) => l.month))].sort();
  const [month, setMonth] = useState(months[0] ?? '');
  const [version, setVersion] = useState(0);
  const issued = useLoad(
    () => api<{ data: Statement[] }>('GET', `/market/reservations/${reservation.id}/statements`),
    `${reservation.id}:${version}`,
  );
  const action = useAction();
  const done = new Set((issued.data?.data ?? []).map((s) => s.month));
  const issue = () =>
    action.run(async () => {
      const res = await api<{ data: Statement }>(
        'POST',
        `/market/reservations/${reservation.id}/statements`,
        {
          month,
        },
      );
      setVersion((n) => n + 1);
      return `Statement ${res.data.month} issued: ${res.data.total} ${res.data.currency}. Statements lists it.`;
    });
  return (
    <>
      <h3>Statements</h3>
      <Status load={issued}>
        <p className="muted small" data-testid="reservation-statements">
          {done.size ? `Issued for ${[...done].sort().join(', ')}.` : 'None issued yet.'}
        </p>
      </Status>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void issue();
        }}
      >
        <SelectField
          id="statement-month"
          label="Month"
          value={month}
          onChange={setMonth}
          options={months.map((m): [string, string] => [m, done.has(m) ? `${m} (issued)` : m])}
        />
        <button type="submit" disabled={action.busy || done.has(month)}>
          Issue statement
        </button>
      </form>
      <OutcomeLine outcome={action.outcome} />
    </>
  );
}
