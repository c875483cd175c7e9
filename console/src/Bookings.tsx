import { type FormEvent, useState } from 'react';
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
import { Field, failure, type Outcome, OutcomeLine, Status, useLoad } from './ui.tsx';

/** A push's state in words; a booking is "pushed" only when its current revision was accepted. */
function pushState(b: Pick<Booking, 'order_id' | 'revision' | 'pushed_revision' | 'last_push_error'>) {
  if (b.last_push_error) return <span className="badge off">push failed</span>;
  if (!b.order_id) return <span className="badge off">not pushed</span>;
  if (b.pushed_revision !== b.revision)
    return <span className="badge off">changed since revision {b.pushed_revision}</span>;
  return <span className="badge">pushed (draft)</span>;
}

const DELIVERY_COLUMNS = [
  'Days',
  'Ad server impressions',
  'Podium /imp',
  'Impression discrepancy',
  'Ad server clicks',
  'Podium /go',
  'Click discrepancy',
];

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
      <Status
        loading={list.loading && !list.data}
        error={list.error}
        empty={bookings.length === 0 && 'No bookings yet: create one above.'}
      >
        <div className="table-wrap">
          <table className="connections" data-testid="bookings">
            <thead>
              <tr>
                <th scope="col">Campaign</th>
                <th scope="col">Ad server</th>
                <th scope="col">Order</th>
                <th scope="col">State</th>
                <th scope="col" className="num">
                  Lines
                </th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {bookings.map((b) => (
                <tr key={b.id} aria-current={b.id === current?.id}>
                  <td>
                    <strong>{b.campaign_name}</strong>
                    <div className="muted small">
                      {b.advertiser_name} · {b.external_ref} · {b.currency}
                    </div>
                  </td>
                  <td>{b.publisher}</td>
                  <td>{b.order_id ? <code>{b.order_id}</code> : <span className="muted">none yet</span>}</td>
                  <td>
                    {pushState(b)}
                    <div className="muted small">revision {b.revision}</div>
                  </td>
                  <td className="num">{b.lines}</td>
                  <td>
                    <button
                      type="button"
                      aria-pressed={b.id === current?.id}
                      onClick={() => setOpenId(b.id)}
                      aria-label={`Open booking ${b.campaign_name}`}
                    >
                      Open
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Status>
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
  const [outcome, setOutcome] = useState<Outcome>({});
  const [pushing, setPushing] = useState(false);
  const b = booking.data?.data;

  const push = async () => {
    setPushing(true);
    setOutcome({});
    try {
      const r = await api<{ data: Booking }>('POST', `/adserver/bookings/${id}/push`);
      onPushed();
      setOutcome({ ok: `Pushed revision ${r.data.revision}: order ${r.data.order_id}.` });
    } catch (err) {
      setOutcome(failure(err));
    } finally {
      // A failed push is in the history too.
      setPushed((n) => n + 1);
      setPushing(false);
    }
  };

  return (
    <section aria-labelledby="booking-detail" className="detail">
      <Status loading={booking.loading && !b} error={booking.error}>
        {b && (
          <>
            <div className="row spread">
              <h2 id="booking-detail">
                {b.campaign_name} <span className="muted">({b.advertiser_name})</span>
              </h2>
              <button type="button" className="primary" onClick={push} disabled={pushing}>
                {pushing ? 'Pushing…' : b.order_id ? 'Push changes' : 'Push as draft order'}
              </button>
            </div>
            <p data-testid="booking-order">
              Order: {b.order_id ? <code>{b.order_id}</code> : <span className="muted">not pushed yet</span>}{' '}
              · {pushState(b)} · revision {b.revision}
              {b.pushed_revision !== null && `, pushed ${b.pushed_revision}`}
            </p>
            {b.last_push_error && (
              <p className="error" role="alert">
                Last push failed: {b.last_push_error}
              </p>
            )}
            <OutcomeLine outcome={outcome} />
            <h3>Lines</h3>
            <div className="table-wrap">
              <table data-testid="booking-lines">
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    <th scope="col">Month</th>
                    <th scope="col">Slot</th>
                    <th scope="col">Sizes · geo</th>
                    <th scope="col" className="num">
                      Goal
                    </th>
                    <th scope="col">line_item_id</th>
                    <th scope="col">Banner code</th>
                  </tr>
                </thead>
                <tbody>
                  {b.lines.map((l) => (
                    <tr key={l.line_no}>
                      <th scope="row">
                        {l.line_no}
                        <div className="muted small">{l.external_ref}</div>
                      </th>
                      <td>{l.month}</td>
                      <td>
                        <code>{l.inventory_id}</code>
                      </td>
                      <td>
                        {l.sizes.join(', ')}
                        <div className="muted small">{l.geo.length ? l.geo.join(', ') : 'all geos'}</div>
                      </td>
                      <td className="num">{l.goal_impressions.toLocaleString('en')}</td>
                      <td>
                        {l.line_item_id ? (
                          <code>{l.line_item_id}</code>
                        ) : (
                          <span className="muted">not pushed</span>
                        )}
                      </td>
                      <td>
                        {l.click_codes.length ? (
                          l.click_codes.map((c) => <code key={c}>{c}</code>)
                        ) : (
                          <span className="muted">no creative yet</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Tags lines={b.lines} />
            <EditLines booking={b} onSaved={() => setPushed((n) => n + 1)} />
            <Delivery id={id} version={pushed} />
          </>
        )}
      </Status>
      <h3>Push history</h3>
      <Status
        loading={pushes.loading && !pushes.data}
        error={pushes.error}
        empty={(pushes.data?.data.length ?? 0) === 0 && 'Never pushed.'}
      >
        <div className="table-wrap">
          <table data-testid="booking-pushes">
            <thead>
              <tr>
                <th scope="col">Revision</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  HTTP
                </th>
                <th scope="col" className="num">
                  Calls
                </th>
                <th scope="col">Idempotency key</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {pushes.data?.data.map((p) => (
                <tr key={p.idempotency_key}>
                  <th scope="row">{p.revision}</th>
                  <td>
                    <span className={`badge ${p.status === 'succeeded' ? '' : 'off'}`}>{p.status}</span>
                  </td>
                  <td className="num">{p.http_status ?? '—'}</td>
                  <td className="num">{p.calls}</td>
                  <td className="small break">
                    <code>{p.idempotency_key}</code>
                  </td>
                  <td className="small break">
                    {p.error ? <span className="error">{p.error}</span> : <span className="muted">none</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Status>
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
      <Status loading={delivery.loading && !d} error={delivery.error}>
        {d && (
          <>
            <p className="muted small">
              {d.lines.every((l) => l.days.length === 0) &&
                'No delivery reported yet: the ad server reports once the order is live and a pull has run. '}
              Days in the account time zone {d.timezone}. Discrepancy = (ad server − Podium) / ad server.
            </p>
            <div className="table-wrap">
              <table data-testid="booking-delivery">
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    {DELIVERY_COLUMNS.map((c) => (
                      <th key={c} scope="col" className="num">
                        {c}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {d.lines.map((l) => (
                    <tr key={l.line_no}>
                      <th scope="row">
                        {l.line_no} · {l.month}
                        <div className="muted small">
                          {l.line_item_id ? <code>{l.line_item_id}</code> : 'not pushed'}
                        </div>
                      </th>
                      <td className="num">{l.days.length}</td>
                      <td className="num">{l.totals.impressions.toLocaleString('en')}</td>
                      <td className="num">{l.totals.podium_impressions.toLocaleString('en')}</td>
                      <td className="num">{pct(l.totals.impression_discrepancy_pct)}</td>
                      <td className="num">{l.totals.clicks.toLocaleString('en')}</td>
                      <td className="num">{l.totals.podium_clicks.toLocaleString('en')}</td>
                      <td className="num">{pct(l.totals.click_discrepancy_pct)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
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
  const [goal, setGoal] = useState('');
  const [image, setImage] = useState('');
  const [landing, setLanding] = useState('');
  const [added, setAdded] = useState<LineDraft>(emptyLine(first?.month ?? ''));
  const [outcome, setOutcome] = useState<Outcome>({});
  const [addOutcome, setAddOutcome] = useState<Outcome>({});

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!line) return;
    setOutcome({});
    const [w, h] = (line.sizes[0] ?? '0x0').split('x').map(Number) as [number, number];
    try {
      await api('PATCH', `/adserver/bookings/${booking.id}/lines/${line.line_no}`, {
        ...(goal ? { goal_impressions: Number(goal) } : {}),
        ...(image || landing
          ? { creatives: [{ image_url: image, landing_url: landing, width: w, height: h }] }
          : {}),
      });
      setOutcome({ ok: `Line ${line.line_no} saved: push to send the change.` });
      onSaved();
    } catch (err) {
      setOutcome(failure(err));
    }
  };

  const add = async (e: FormEvent) => {
    e.preventDefault();
    setAddOutcome({});
    try {
      await api('POST', `/adserver/bookings/${booking.id}/lines`, lineBody(added, places.data?.data ?? []));
      setAddOutcome({ ok: 'Line added: push to create it.' });
      onSaved();
    } catch (err) {
      setAddOutcome(failure(err));
    }
  };

  return (
    <div className="row wrap">
      <form onSubmit={save} className="card" aria-labelledby="edit-line" noValidate>
        <h3 id="edit-line">Edit a line</h3>
        <div className="field">
          <label htmlFor="edit-line-no">Line</label>
          <select id="edit-line-no" value={lineNo} onChange={(e) => setLineNo(e.target.value)}>
            {booking.lines.map((l) => (
              <option key={l.line_no} value={l.line_no}>
                {l.line_no} · {l.month} · {l.sizes.join(', ')}
              </option>
            ))}
          </select>
        </div>
        <Field
          id="edit-goal"
          label="Goal impressions"
          value={goal}
          onChange={setGoal}
          outcome={outcome}
          field="goal_impressions"
        />
        <Field
          id="edit-image"
          label="Approved creative image URL"
          value={image}
          onChange={setImage}
          outcome={outcome}
          field="creatives.0.image_url"
        />
        <Field
          id="edit-landing"
          label="Approved creative landing URL"
          value={landing}
          onChange={setLanding}
          outcome={outcome}
          field="creatives.0.landing_url"
        />
        <button type="submit">Save line</button>
        <OutcomeLine
          outcome={outcome}
          shown={['goal_impressions', 'creatives.0.image_url', 'creatives.0.landing_url']}
        />
      </form>
      <form onSubmit={add} className="card" aria-labelledby="add-line" noValidate>
        <h3 id="add-line">Add a line</h3>
        <LineFields
          value={added}
          onChange={setAdded}
          placements={places.data?.data ?? []}
          connection={conn.data?.data}
          outcome={addOutcome}
          prefix=""
        />
        <button type="submit">Add line</button>
        <OutcomeLine outcome={addOutcome} shown={['month', 'goal_impressions', 'sizes']} />
      </form>
    </div>
  );
}
