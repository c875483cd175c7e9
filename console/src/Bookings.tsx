import { useState } from 'react';
import { AdServersTabs } from './AdServers.tsx';
import {
  api,
  type Booking,
  type BookingDelivery,
  type BookingLine,
  type BookingSummary,
  type Connection,
  type Placement,
  type Push,
} from './api.ts';
import { emptyLine, type LineDraft, LineFields, lineBody, NewBooking } from './BookingForm.tsx';
import { Fields, FormCard, shownOf, useAction, useForm } from './form.tsx';
import { ACTIONS, type Column, LoadedTable, Table } from './table.tsx';
import { OutcomeLine, SelectField, Status, useLoad } from './ui.tsx';

/** A table of a booking's lines (as booked, as delivered): each row keyed and headed by its line number. */
function LinesTable<L extends { line_no: number }>({
  testId,
  lines,
  line,
  columns,
}: {
  testId: string;
  lines: readonly L[];
  /** How the heading cell shows a line. */
  line: Pick<Column<L>, 'cell' | 'sub'>;
  columns: Column<L>[];
}) {
  return (
    <Table
      testId={testId}
      rows={lines}
      rowKey={(l) => l.line_no}
      columns={[{ head: 'Line', rowHeader: true, ...line }, ...columns]}
    />
  );
}

/** A push's state in words; a booking is "pushed" only when its current revision was accepted. */
function pushState(b: Pick<Booking, 'order_id' | 'revision' | 'pushed_revision' | 'last_push_error'>) {
  if (b.last_push_error) return <span className="badge off">push failed</span>;
  if (!b.order_id) return <span className="badge off">not pushed</span>;
  if (b.pushed_revision !== b.revision)
    return <span className="badge off">changed since revision {b.pushed_revision}</span>;
  return <span className="badge">pushed (draft)</span>;
}

/** An id the ad server issued, or a muted note while there is none. */
const orderCode = (id: string | null, none: string) =>
  id ? <code>{id}</code> : <span className="muted">{none}</span>;

const pct = (v: string | null) => (v === null ? '—' : `${v} %`);

/** Bookings on the ad servers: the list, and one booking's lines, pushed order, push history and delivery. */
export function BookingsScreen() {
  const list = useLoad(() => api<{ data: BookingSummary[] }>('GET', '/adserver/bookings'), '');
  const [openId, setOpenId] = useState<string | null>(null);
  const bookings = list.data?.data ?? [];
  const current = bookings.find((b) => b.id === openId) ?? bookings[0];
  return (
    <section>
      <div className="row spread">
        <h1>Bookings</h1>
        <AdServersTabs />
      </div>
      <NewBooking
        onCreated={(b) => {
          setOpenId(b.id);
          list.reload();
        }}
      />
      <LoadedTable
        load={list}
        empty="No bookings yet: create one above."
        className="connections"
        testId="bookings"
        rowProps={(b) => ({ 'aria-current': b.id === current?.id })}
        columns={[
          {
            head: 'Campaign',
            cell: (b) => <strong>{b.campaign_name}</strong>,
            sub: (b) => `${b.advertiser_name} · ${b.external_ref} · ${b.currency}`,
          },
          { head: 'Ad server', cell: (b) => b.publisher },
          { head: 'Order', cell: (b) => orderCode(b.order_id, 'none yet') },
          {
            head: 'State',
            cell: (b) => pushState(b),
            sub: (b) => `revision ${b.revision}`,
          },
          { head: 'Lines', num: true, cell: (b) => b.lines },
          {
            head: ACTIONS,
            cell: (b) => (
              <button
                type="button"
                aria-pressed={b.id === current?.id}
                onClick={() => setOpenId(b.id)}
                aria-label={`Open booking ${b.campaign_name}`}
              >
                Open
              </button>
            ),
          },
        ]}
      />
      {current && <BookingDetail key={current.id} id={current.id} onPushed={list.reload} />}
    </section>
  );
}

/** One booking: Push, its lines with the ids the ad server issued, every push, and its delivery. */
function BookingDetail({ id, onPushed }: { id: string; onPushed: () => void }) {
  // Bumped by each push: the booking, its pushes and its delivery load again.
  const [pushed, setPushed] = useState(0);
  const booking = useLoad(() => api<{ data: Booking }>('GET', `/adserver/bookings/${id}`), `${id}:${pushed}`);
  const pushes = useLoad(
    () => api<{ data: Push[] }>('GET', `/adserver/bookings/${id}/pushes`),
    `${id}:${pushed}`,
  );
  const pusher = useAction();
  const b = booking.data?.data;

  const push = async () => {
    pusher.setOutcome({});
    await pusher.run(async () => {
      const r = await api<{ data: Booking }>('POST', `/adserver/bookings/${id}/push`);
      onPushed();
      return `Pushed revision ${r.data.revision}: order ${r.data.order_id}.`;
    });
    // A failed push is in the history too.
    setPushed((n) => n + 1);
  };

  return (
    <section aria-labelledby="booking-detail" className="detail">
      <Status load={booking}>
        {b && (
          <>
            <div className="row spread">
              <h2 id="booking-detail">
                {b.campaign_name} <span className="muted">({b.advertiser_name})</span>
              </h2>
              <button type="button" className="primary" onClick={push} disabled={pusher.busy}>
                {pusher.busy ? 'Pushing…' : b.order_id ? 'Push changes' : 'Push as draft order'}
              </button>
            </div>
            <p data-testid="booking-order">
              Order: {orderCode(b.order_id, 'not pushed yet')} · {pushState(b)} · revision {b.revision}
              {b.pushed_revision !== null && `, pushed ${b.pushed_revision}`}
            </p>
            {b.last_push_error && (
              <p className="error" role="alert">
                Last push failed: {b.last_push_error}
              </p>
            )}
            <OutcomeLine outcome={pusher.outcome} />
            <h3>Lines</h3>
            <LinesTable
              testId="booking-lines"
              lines={b.lines}
              line={{ cell: (l) => l.line_no, sub: (l) => l.external_ref }}
              columns={[
                { head: 'Month', cell: (l) => l.month },
                { head: 'Slot', cell: (l) => <code>{l.inventory_id}</code> },
                {
                  head: 'Sizes · geo',
                  cell: (l) => l.sizes.join(', '),
                  sub: (l) => (l.geo.length ? l.geo.join(', ') : 'all geos'),
                },
                { head: 'Goal', num: true, cell: (l) => l.goal_impressions.toLocaleString('en') },
                { head: 'line_item_id', cell: (l) => orderCode(l.line_item_id, 'not pushed') },
                {
                  head: 'Banner code',
                  cell: (l) =>
                    l.click_codes.length ? (
                      l.click_codes.map((c) => <code key={c}>{c}</code>)
                    ) : (
                      <span className="muted">no creative yet</span>
                    ),
                },
              ]}
            />
            <Tags lines={b.lines} />
            <EditLines booking={b} onSaved={() => setPushed((n) => n + 1)} />
            <Delivery id={id} version={pushed} />
          </>
        )}
      </Status>
      <h3>Push history</h3>
      <LoadedTable
        load={pushes}
        empty="Never pushed."
        testId="booking-pushes"
        rowKey={(p) => p.idempotency_key}
        columns={[
          { head: 'Revision', rowHeader: true, cell: (p) => p.revision },
          {
            head: 'Status',
            cell: (p) => <span className={`badge ${p.status === 'succeeded' ? '' : 'off'}`}>{p.status}</span>,
          },
          { head: 'HTTP', num: true, cell: (p) => p.http_status ?? '—' },
          { head: 'Calls', num: true, cell: (p) => p.calls },
          {
            head: 'Idempotency key',
            className: 'small break',
            cell: (p) => <code>{p.idempotency_key}</code>,
          },
          {
            head: 'Error',
            className: 'small break',
            cell: (p) =>
              p.error ? <span className="error">{p.error}</span> : <span className="muted">none</span>,
          },
        ]}
      />
    </section>
  );
}

/** Delivery per line: the ad server's figures (the billing reference) beside Podium's /imp and /go counts. */
function Delivery({ id, version }: { id: string; version: number }) {
  const delivery = useLoad(
    () => api<{ data: BookingDelivery }>('GET', `/adserver/bookings/${id}/delivery`),
    `${id}:${version}`,
  );
  const d = delivery.data?.data;
  return (
    <>
      <h3>Delivery</h3>
      <Status load={delivery}>
        {d && (
          <>
            <p className="muted small">
              {d.lines.every((l) => l.days.length === 0) &&
                'No delivery reported yet: the ad server reports once the order is live and a pull has run. '}
              Days in the account time zone {d.timezone}. Discrepancy = (ad server − Podium) / ad server.
            </p>
            <LinesTable
              testId="booking-delivery"
              lines={d.lines}
              line={{
                cell: (l) => `${l.line_no} · ${l.month}`,
                sub: (l) => (l.line_item_id ? <code>{l.line_item_id}</code> : 'not pushed'),
              }}
              columns={[
                { head: 'Days', num: true, cell: (l) => l.days.length },
                {
                  head: 'Ad server impressions',
                  num: true,
                  cell: (l) => l.totals.impressions.toLocaleString('en'),
                },
                {
                  head: 'Podium /imp',
                  num: true,
                  cell: (l) => l.totals.podium_impressions.toLocaleString('en'),
                },
                {
                  head: 'Impression discrepancy',
                  num: true,
                  cell: (l) => pct(l.totals.impression_discrepancy_pct),
                },
                { head: 'Ad server clicks', num: true, cell: (l) => l.totals.clicks.toLocaleString('en') },
                { head: 'Podium /go', num: true, cell: (l) => l.totals.podium_clicks.toLocaleString('en') },
                { head: 'Click discrepancy', num: true, cell: (l) => pct(l.totals.click_discrepancy_pct) },
              ]}
            />
          </>
        )}
      </Status>
    </>
  );
}

/** The third-party tags generated for each line, exactly as they are pushed. */
function Tags({ lines }: { lines: BookingLine[] }) {
  const tagged = lines.filter((l) => l.creatives.length);
  return (
    <>
      <h3>Tags</h3>
      {tagged.length === 0 ? (
        <p className="muted">No approved creative yet: the lines are pushed empty and get their tag later.</p>
      ) : (
        tagged.map((l) =>
          l.creatives.map((c, j) => (
            <figure key={l.click_codes[j] ?? l.line_no} className="tag">
              <figcaption>
                Line {l.line_no} · {c.width}x{c.height} · /go and /imp code <code>{l.click_codes[j]}</code>
              </figcaption>
              <pre data-testid={`tag-${l.line_no}`} className="small break">
                {c.type === 'third_party_tag' ? c.tag : c.image_url}
              </pre>
            </figure>
          )),
        )
      )}
    </>
  );
}

const LINE_SPECS = [
  { key: 'goal', id: 'edit-goal', label: 'Goal impressions', field: 'goal_impressions' },
  { key: 'image', id: 'edit-image', label: 'Approved creative image URL', field: 'creatives.0.image_url' },
  {
    key: 'landing',
    id: 'edit-landing',
    label: 'Approved creative landing URL',
    field: 'creatives.0.landing_url',
  },
] as const;

/** Edits a line's goal and approved creative, and adds lines; each change is a revision to push. */
function EditLines({ booking, onSaved }: { booking: Booking; onSaved: () => void }) {
  const conn = useLoad(
    () => api<{ data: Connection }>('GET', `/adserver/connections/${booking.connection_id}`),
    booking.connection_id,
  );
  const places = useLoad(() => api<{ data: Placement[] }>('GET', '/adserver/placements'), booking.id);
  const first = booking.lines[0];
  const [lineNo, setLineNo] = useState(String(first?.line_no ?? 1));
  const line = booking.lines.find((l) => String(l.line_no) === lineNo) ?? first;
  const form = useForm({ goal: '', image: '', landing: '' });
  const [added, setAdded] = useState<LineDraft>(emptyLine(first?.month ?? ''));
  const addForm = useAction();

  const save = () =>
    form.run(async () => {
      if (!line) return undefined;
      const { goal, image, landing } = form.f;
      const [w, h] = (line.sizes[0] ?? '0x0').split('x').map(Number) as [number, number];
      await api('PATCH', `/adserver/bookings/${booking.id}/lines/${line.line_no}`, {
        ...(goal ? { goal_impressions: Number(goal) } : {}),
        ...(image || landing
          ? { creatives: [{ image_url: image, landing_url: landing, width: w, height: h }] }
          : {}),
      });
      onSaved();
      return `Line ${line.line_no} saved: push to send the change.`;
    });

  const add = () =>
    addForm.run(async () => {
      await api('POST', `/adserver/bookings/${booking.id}/lines`, lineBody(added, places.data?.data ?? []));
      onSaved();
      return 'Line added: push to create it.';
    });

  return (
    <div className="row wrap">
      <FormCard
        id="edit-line"
        title="Edit a line"
        heading="h3"
        grid={false}
        outcome={form.outcome}
        shown={shownOf(LINE_SPECS)}
        onSubmit={save}
        submit="Save line"
      >
        <SelectField
          id="edit-line-no"
          label="Line"
          value={lineNo}
          onChange={setLineNo}
          options={booking.lines.map((l) => [l.line_no, `${l.line_no} · ${l.month} · ${l.sizes.join(', ')}`])}
        />
        <Fields specs={LINE_SPECS} {...form} />
      </FormCard>
      <FormCard
        id="add-line"
        title="Add a line"
        heading="h3"
        grid={false}
        outcome={addForm.outcome}
        shown={['month', 'goal_impressions', 'sizes']}
        onSubmit={add}
        submit="Add line"
      >
        <LineFields
          value={added}
          onChange={setAdded}
          placements={places.data?.data ?? []}
          connection={conn.data?.data}
          outcome={addForm.outcome}
          prefix=""
        />
      </FormCard>
    </div>
  );
}
