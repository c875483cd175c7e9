import { type ReactNode, useState } from 'react';
import { api, type BookingSummary, type Creative, upload } from './api.ts';
import { useAction } from './form.tsx';
import { ACTIONS, LoadedTable } from './table.tsx';
import { InputField, OutcomeLine, SelectField, useLoad } from './ui.tsx';

const STATUSES: [string, string][] = [
  ['pending', 'Awaiting moderation'],
  ['approved', 'Approved'],
  ['rejected', 'Rejected'],
  ['replaced', 'Replaced'],
];

/** A creative's moderation state as a badge. */
export const creativeBadge = (status: string) => (
  <span className={`badge ${status === 'approved' || status === 'pending' ? '' : 'off'}`}>{status}</span>
);

/** The image on this origin (the console's CSP loads images from itself; a CDN base may be elsewhere). */
export const preview = (c: Creative) => `/creatives/${c.url.slice(c.url.lastIndexOf('/') + 1)}`;

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** The creative library with its moderation queue (pending first), and the upload form for a booking line. */
export function CreativesScreen() {
  const [status, setStatus] = useState('pending');
  const [version, setVersion] = useState(0);
  const list = useLoad(
    () => api<{ data: Creative[] }>('GET', `/creatives${status ? `?status=${status}` : ''}`),
    `${status}:${version}`,
  );
  const reload = () => setVersion((n) => n + 1);
  const action = useAction();
  const [reason, setReason] = useState('');
  const decide = (c: Creative, path: 'approve' | 'reject') =>
    action.run(async () => {
      const res = await api<{ data: Creative }>(
        'POST',
        `/creatives/${c.id}/${path}`,
        path === 'reject' ? { reason } : undefined,
      );
      reload();
      return path === 'approve'
        ? res.data.booking_id
          ? `Approved ${res.data.name}: line ${res.data.line_no} of ${res.data.booking_id} shows it; its follow-up push is queued.`
          : `Approved ${res.data.name}: line ${res.data.reservation_line_no} of ${res.data.reservation_id} carries it once the reservation is approved.`
        : `Rejected ${res.data.name}: ${res.data.reason}.`;
    });
  return (
    <section>
      <h1>Creatives</h1>
      <BookingUploadForm onUploaded={reload} />
      <h2>Library</h2>
      <div className="row">
        <SelectField
          id="creative-status"
          label="Show"
          value={status}
          onChange={setStatus}
          options={STATUSES}
          all="All creatives"
        />
        <InputField
          id="creative-reason"
          label="Reason for rejecting"
          value={reason}
          maxLength={500}
          onChange={setReason}
          aria-invalid={action.outcome.field === 'reason'}
        />
      </div>
      <OutcomeLine outcome={action.outcome} />
      <LoadedTable
        load={list}
        empty={status === 'pending' ? 'No creative awaits moderation.' : 'No creatives.'}
        testId="creatives"
        columns={[
          {
            head: 'Image',
            cell: (c) => <img src={preview(c)} alt={c.name} width={Math.min(c.width, 364)} />,
          },
          {
            head: 'Creative',
            rowHeader: true,
            cell: (c) => <strong>{c.name}</strong>,
            sub: (c) => `${c.width}x${c.height} · ${c.format} · ${kb(c.bytes)}`,
          },
          {
            head: 'Line',
            cell: (c) =>
              c.booking_id
                ? `${c.booking_id} · line ${c.line_no}`
                : `${c.reservation_id} · line ${c.reservation_line_no} (awaiting approval)`,
            sub: (c) => c.landing_url,
          },
          { head: 'Status', cell: (c) => creativeBadge(c.status), sub: (c) => c.reason ?? undefined },
          {
            head: ACTIONS,
            cell: (c) =>
              c.status === 'pending' ? (
                <div className="row">
                  <button
                    type="button"
                    className="primary"
                    disabled={action.busy}
                    aria-label={`Approve ${c.name}`}
                    onClick={() => void decide(c, 'approve')}
                  >
                    Approve
                  </button>
                  <button
                    type="button"
                    disabled={action.busy}
                    aria-label={`Reject ${c.name}`}
                    onClick={() => void decide(c, 'reject')}
                  >
                    Reject
                  </button>
                </div>
              ) : null,
          },
        ]}
      />
    </section>
  );
}

/** Uploads for a line of a booking picked from the bookings list (the library screen's form). */
function BookingUploadForm({ onUploaded }: { onUploaded: () => void }) {
  const bookings = useLoad(() => api<{ data: BookingSummary[] }>('GET', '/adserver/bookings'), 'bookings');
  const [booking, setBooking] = useState('');
  const options: [string, string][] = (bookings.data?.data ?? []).map((b) => [
    b.id,
    `${b.campaign_name} · ${b.advertiser_name} (${b.id})`,
  ]);
  const chosen = booking || options[0]?.[0] || '';
  return (
    <UploadForm
      title="Upload a creative"
      onUploaded={onUploaded}
      target={chosen ? { booking_id: chosen } : undefined}
      picker={
        <SelectField
          id="creative-booking"
          label="Booking"
          value={chosen}
          onChange={setBooking}
          options={options}
        />
      }
    />
  );
}

/** Where an upload goes: a booking, or a reservation before its approval. */
export type UploadTarget = { booking_id: string } | { reservation_id: string };

/**
 * Uploads one image file for a line of `target` (a line number typed, or picked from `lineNos`):
 * the server checks its type, weight and size against the line's.
 */
export function UploadForm({
  title,
  onUploaded,
  target,
  picker,
  lineNos,
}: {
  title: string;
  onUploaded: () => void;
  target: UploadTarget | undefined;
  picker?: ReactNode;
  lineNos?: readonly number[];
}) {
  const [line, setLine] = useState(String(lineNos?.[0] ?? 1));
  const [landing, setLanding] = useState('');
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const action = useAction();
  const submit = () =>
    action.run(async () => {
      if (!file) throw new Error('Choose an image file first.');
      const q = new URLSearchParams({ ...target, line_no: line, landing_url: landing });
      if (name.trim()) q.set('name', name.trim());
      const res = await upload<{ data: Creative }>(`/creatives?${q}`, file);
      onUploaded();
      return `Uploaded ${res.data.name} (${res.data.width}x${res.data.height}, ${kb(res.data.bytes)}): it awaits moderation.`;
    });
  const beside = (field: string) =>
    action.outcome.field === field && (
      <span className="error" role="alert">
        {action.outcome.fieldError ?? action.outcome.error}
      </span>
    );
  return (
    <form
      className="card"
      aria-label="Upload a creative"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h2>{title}</h2>
      {picker}
      {lineNos ? (
        <SelectField
          id="creative-line"
          label="Line"
          value={line}
          onChange={setLine}
          options={lineNos.map((n) => [String(n), `Line ${n}`])}
          outcome={action.outcome}
          field="line_no"
        />
      ) : (
        <InputField id="creative-line" label="Line" type="number" min={1} value={line} onChange={setLine}>
          {beside('line_no')}
        </InputField>
      )}
      <InputField
        id="creative-landing"
        label="Landing page"
        type="url"
        required
        value={landing}
        onChange={setLanding}
        aria-invalid={action.outcome.field === 'landing_url'}
      >
        {beside('landing_url')}
      </InputField>
      <InputField
        id="creative-name"
        label="Name (optional)"
        value={name}
        maxLength={200}
        onChange={setName}
      />
      <div className="field">
        <label htmlFor="creative-file">Image (PNG, JPEG, GIF or WebP)</label>
        <input
          id="creative-file"
          type="file"
          accept="image/png,image/jpeg,image/gif,image/webp"
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          aria-invalid={action.outcome.field === 'body'}
        />
        {beside('body')}
      </div>
      <button type="submit" className="primary" disabled={action.busy || !target}>
        {action.busy ? 'Uploading…' : 'Upload'}
      </button>
      <OutcomeLine outcome={action.outcome} shown={['body', 'landing_url', 'line_no']} />
    </form>
  );
}
