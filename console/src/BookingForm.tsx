import { type FormEvent, useState } from 'react';
import { api, type Booking, type Connection, type Placement } from './api.ts';
import { Field, failure, type Outcome, OutcomeLine, SelectField, useLoad } from './ui.tsx';

/** What the operator enters for one line: placement, month (the flight), goal, sizes and the approved creative. */
export interface LineDraft {
  placement_id: string;
  month: string;
  goal: string;
  sizes: string;
  image_url: string;
  landing_url: string;
}

export const emptyLine = (month: string): LineDraft => ({
  placement_id: '',
  month,
  goal: '',
  sizes: '',
  image_url: '',
  landing_url: '',
});

/** The API's line from the form: sizes default to the placement's; the creative takes the first size. */
export function lineBody(l: LineDraft, placements: Placement[]) {
  const placement = placements.find((p) => String(p.id) === l.placement_id);
  const sizes = l.sizes.trim()
    ? l.sizes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : (placement?.sizes ?? []);
  const [w, h] = (sizes[0] ?? '0x0').split('x').map(Number) as [number, number];
  return {
    placement_id: Number(l.placement_id),
    month: l.month,
    goal_impressions: Number(l.goal),
    sizes,
    ...(l.image_url || l.landing_url
      ? { creatives: [{ image_url: l.image_url, landing_url: l.landing_url, width: w, height: h }] }
      : {}),
  };
}

/** The fields of one line; `prefix` is the API field prefix its 422s name (`lines.0.` or none). */
export function LineFields({
  value,
  onChange,
  placements,
  connection,
  outcome,
  prefix,
}: {
  value: LineDraft;
  onChange: (l: LineDraft) => void;
  placements: Placement[];
  connection: Connection | undefined;
  outcome: Outcome;
  prefix: string;
}) {
  const set = (k: keyof LineDraft) => (v: string) => onChange({ ...value, [k]: v });
  const id = (k: string) => `line-${prefix}${k}`;
  const mapped = placements.filter((p) => connection && p.slots[connection.id]);
  return (
    <fieldset>
      <legend>Line</legend>
      <SelectField
        id={id('placement')}
        label="Placement"
        value={value.placement_id}
        onChange={set('placement_id')}
        options={mapped.map((p) => [p.id, `${p.name} (${p.sizes.join(', ')})`])}
        all="Choose a placement"
      />
      <Field
        id={id('month')}
        label="Month (flight)"
        value={value.month}
        onChange={set('month')}
        outcome={outcome}
        field={`${prefix}month`}
      />
      <Field
        id={id('goal')}
        label="Goal impressions"
        value={value.goal}
        onChange={set('goal')}
        outcome={outcome}
        field={`${prefix}goal_impressions`}
      />
      <Field
        id={id('sizes')}
        label="Sizes (default: the placement's)"
        value={value.sizes}
        onChange={set('sizes')}
        outcome={outcome}
        field={`${prefix}sizes`}
      />
      <Field
        id={id('image')}
        label="Creative image URL"
        value={value.image_url}
        onChange={set('image_url')}
        outcome={outcome}
        field={`${prefix}creatives.0.image_url`}
      />
      <Field
        id={id('landing')}
        label="Creative landing URL"
        value={value.landing_url}
        onChange={set('landing_url')}
        outcome={outcome}
        field={`${prefix}creatives.0.landing_url`}
      />
      <ForecastButton line={value} placements={placements} connection={connection} />
    </fieldset>
  );
}

/**
 * The line's forecast, offered only when the ad server declared `capabilities.forecast` (the
 * marketplace never calls it otherwise, and never shows an invented number).
 */
function ForecastButton({
  line,
  placements,
  connection,
}: {
  line: LineDraft;
  placements: Placement[];
  connection: Connection | undefined;
}) {
  const [shown, setShown] = useState<Outcome>({});
  if (!connection) return null;
  if (connection.forecast_declared !== true)
    return <p className="muted small">This ad server does not forecast: book on the listed availability.</p>;
  const run = async () => {
    setShown({});
    try {
      const body = lineBody(line, placements);
      const [y, m] = line.month.split('-').map(Number) as [number, number];
      const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
      const r = await api<{
        data: {
          forecast: { available_impressions: number; forecasted_impressions: number } | null;
          message: string | null;
        };
      }>('POST', `/adserver/connections/${connection.id}/forecast`, {
        placement_id: body.placement_id,
        start_date: `${line.month}-01`,
        end_date: `${line.month}-${String(last).padStart(2, '0')}`,
        ...(body.sizes.length ? { sizes: body.sizes } : {}),
      });
      const f = r.data.forecast;
      setShown(
        f
          ? {
              ok: `Forecast: ${f.available_impressions.toLocaleString('en')} available of ${f.forecasted_impressions.toLocaleString('en')} forecast.`,
            }
          : { error: `No forecast: ${r.data.message ?? 'none for this slot'} (booking can proceed).` },
      );
    } catch (err) {
      setShown(failure(err));
    }
  };
  return (
    <div className="row">
      <button type="button" onClick={run} disabled={!line.placement_id || !/^\d{4}-\d{2}$/.test(line.month)}>
        Run forecast
      </button>
      <span className="muted small">forecast capability: {connection.capabilities.forecast}</span>
      <OutcomeLine outcome={shown} />
    </div>
  );
}

/** The next calendar month, `YYYY-MM` (a new booking's default flight). */
export function nextMonth(now = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return d.toISOString().slice(0, 7);
}

/** Creates a booking: connection, advertiser, campaign and its first line. */
export function NewBooking({ onCreated }: { onCreated: (b: Booking) => void }) {
  const conns = useLoad(() => api<{ data: Connection[] }>('GET', '/adserver/connections'), 'new-booking');
  const places = useLoad(() => api<{ data: Placement[] }>('GET', '/adserver/placements'), 'new-booking');
  const [connectionId, setConnectionId] = useState('');
  const [advertiser, setAdvertiser] = useState('');
  const [campaign, setCampaign] = useState('');
  const [ref, setRef] = useState('');
  const [line, setLine] = useState<LineDraft>(emptyLine(nextMonth()));
  const [outcome, setOutcome] = useState<Outcome>({});
  const connections = conns.data?.data ?? [];
  const connection = connections.find((c) => c.id === connectionId) ?? connections[0];
  const placements = places.data?.data ?? [];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!connection) return;
    setOutcome({});
    try {
      const r = await api<{ data: Booking }>('POST', '/adserver/bookings', {
        connection_id: connection.id,
        currency: connection.currency ?? '',
        advertiser: { name: advertiser },
        campaign: { name: campaign, external_ref: ref },
        lines: [lineBody(line, placements)],
      });
      setOutcome({ ok: `Booking ${r.data.campaign_name} created.` });
      onCreated(r.data);
    } catch (err) {
      setOutcome(failure(err));
    }
  };

  return (
    <form onSubmit={submit} className="card" aria-labelledby="new-booking" noValidate>
      <h2 id="new-booking">New booking</h2>
      <SelectField
        id="booking-connection"
        label="Ad server"
        value={connection?.id ?? ''}
        onChange={setConnectionId}
        options={connections.map((c) => [c.id, `${c.publisher} (${c.environment}, ${c.currency ?? '?'})`])}
      />
      <Field
        id="booking-advertiser"
        label="Advertiser"
        value={advertiser}
        onChange={setAdvertiser}
        outcome={outcome}
        field="advertiser.name"
      />
      <Field
        id="booking-campaign"
        label="Campaign"
        value={campaign}
        onChange={setCampaign}
        outcome={outcome}
        field="campaign.name"
      />
      <Field
        id="booking-ref"
        label="Campaign reference"
        value={ref}
        onChange={setRef}
        outcome={outcome}
        field="campaign.external_ref"
      />
      <LineFields
        value={line}
        onChange={setLine}
        placements={placements}
        connection={connection}
        outcome={outcome}
        prefix="lines.0."
      />
      <button type="submit" className="primary" disabled={!connection}>
        Create booking
      </button>
      <OutcomeLine
        outcome={outcome}
        shown={[
          'advertiser.name',
          'campaign.name',
          'campaign.external_ref',
          'lines.0.month',
          'lines.0.goal_impressions',
          'lines.0.sizes',
          'lines.0.creatives.0.image_url',
          'lines.0.creatives.0.landing_url',
        ]}
      />
    </form>
  );
}
