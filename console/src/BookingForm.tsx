import { useState } from 'react';
import { api, type Booking, type Connection, type Placement } from './api.ts';
import { Fields, FormCard, shownOf, useAction, useForm } from './form.tsx';
import { type Outcome, OutcomeLine, SelectField, useLoad } from './ui.tsx';

/** What the operator enters for one line: placement, month (the flight), goal, sizes and the approved creative. */
export type LineDraft = {
  placement_id: string;
  month: string;
  goal: string;
  sizes: string;
  image_url: string;
  landing_url: string;
};

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

const lineSpecs = (prefix: string) =>
  [
    { key: 'month', id: `line-${prefix}month`, label: 'Month (flight)', field: `${prefix}month` },
    { key: 'goal', id: `line-${prefix}goal`, label: 'Goal impressions', field: `${prefix}goal_impressions` },
    {
      key: 'sizes',
      id: `line-${prefix}sizes`,
      label: "Sizes (default: the placement's)",
      field: `${prefix}sizes`,
    },
    {
      key: 'image_url',
      id: `line-${prefix}image`,
      label: 'Creative image URL',
      field: `${prefix}creatives.0.image_url`,
    },
    {
      key: 'landing_url',
      id: `line-${prefix}landing`,
      label: 'Creative landing URL',
      field: `${prefix}creatives.0.landing_url`,
    },
  ] as const;

const BOOKING_SPECS = [
  { key: 'advertiser', id: 'booking-advertiser', label: 'Advertiser', field: 'advertiser.name' },
  { key: 'campaign', id: 'booking-campaign', label: 'Campaign', field: 'campaign.name' },
  { key: 'ref', id: 'booking-ref', label: 'Campaign reference', field: 'campaign.external_ref' },
] as const;

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
  const mapped = placements.filter((p) => connection && p.slots[connection.id]);
  return (
    <fieldset>
      <legend>Line</legend>
      <SelectField
        id={`line-${prefix}placement`}
        label="Placement"
        value={value.placement_id}
        onChange={set('placement_id')}
        options={mapped.map((p) => [p.id, `${p.name} (${p.sizes.join(', ')})`])}
        all="Choose a placement"
      />
      <Fields specs={lineSpecs(prefix)} f={value} set={set} outcome={outcome} />
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
  const forecast = useAction();
  if (!connection) return null;
  if (connection.forecast_declared !== true)
    return <p className="muted small">This ad server does not forecast: book on the listed availability.</p>;
  const run = () => {
    forecast.setOutcome({});
    return forecast.run(async () => {
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
      if (!f)
        throw new Error(`No forecast: ${r.data.message ?? 'none for this slot'} (booking can proceed).`);
      return `Forecast: ${f.available_impressions.toLocaleString('en')} available of ${f.forecasted_impressions.toLocaleString('en')} forecast.`;
    });
  };
  return (
    <div className="row">
      <button type="button" onClick={run} disabled={!line.placement_id || !/^\d{4}-\d{2}$/.test(line.month)}>
        Run forecast
      </button>
      <span className="muted small">forecast capability: {connection.capabilities.forecast}</span>
      <OutcomeLine outcome={forecast.outcome} />
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
  const form = useForm({ connectionId: '', advertiser: '', campaign: '', ref: '' });
  const [line, setLine] = useState<LineDraft>(emptyLine(nextMonth()));
  const connections = conns.data?.data ?? [];
  const connection = connections.find((c) => c.id === form.f.connectionId) ?? connections[0];
  const placements = places.data?.data ?? [];

  const submit = () =>
    form.run(async () => {
      if (!connection) return undefined;
      const r = await api<{ data: Booking }>('POST', '/adserver/bookings', {
        connection_id: connection.id,
        currency: connection.currency ?? '',
        advertiser: { name: form.f.advertiser },
        campaign: { name: form.f.campaign, external_ref: form.f.ref },
        lines: [lineBody(line, placements)],
      });
      onCreated(r.data);
      return `Booking ${r.data.campaign_name} created.`;
    });

  return (
    <FormCard
      record={{ unit: 'booking' }}
      grid={false}
      outcome={form.outcome}
      shown={[...shownOf(BOOKING_SPECS), ...shownOf(lineSpecs('lines.0.'))]}
      onSubmit={submit}
      primary
      disabled={!connection}
    >
      <SelectField
        id="booking-connection"
        label="Ad server"
        value={connection?.id ?? ''}
        onChange={form.set('connectionId')}
        options={connections.map((c) => [c.id, `${c.publisher} (${c.environment}, ${c.currency ?? '?'})`])}
      />
      <Fields specs={BOOKING_SPECS} {...form} />
      <LineFields
        value={line}
        onChange={setLine}
        placements={placements}
        connection={connection}
        outcome={form.outcome}
        prefix="lines.0."
      />
    </FormCard>
  );
}
