import { type FormEvent, useState } from 'react';
import { api, type Toplist } from './api.ts';
import { Field, failure, type Outcome, OutcomeLine } from './ui.tsx';

/** Where now falls in a toplist's publish window (evaluated by the server at read time, too). */
export function windowState(t: Pick<Toplist, 'liveFrom' | 'liveUntil'>, now = Date.now()) {
  if (t.liveFrom && Date.parse(t.liveFrom) > now) return 'before' as const;
  if (t.liveUntil && Date.parse(t.liveUntil) <= now) return 'after' as const;
  return t.liveFrom || t.liveUntil ? ('inside' as const) : ('none' as const);
}

/** An ISO timestamp as the value of a `datetime-local` input, in the browser's time zone. */
const toLocalInput = (iso: string | null): string => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (v: string): string | null => (v ? new Date(v).toISOString() : null);
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '');

function WindowSummary({ t }: { t: Toplist }) {
  const state = windowState(t);
  const text = {
    none: 'No schedule: the live edition is served as soon as it is published.',
    before: `Scheduled: sites receive it from ${when(t.liveFrom)}${t.liveUntil ? ` until ${when(t.liveUntil)}` : ''}.`,
    inside: `In its window${t.liveUntil ? ` until ${when(t.liveUntil)}` : ` since ${when(t.liveFrom)}`}.`,
    after: `Window ended ${when(t.liveUntil)}: sites no longer receive it.`,
  }[state];
  return (
    <p data-testid="schedule-state">
      <span className={`badge ${state === 'before' || state === 'after' ? 'off' : ''}`}>
        {state === 'none'
          ? 'unscheduled'
          : state === 'before'
            ? 'scheduled'
            : state === 'after'
              ? 'ended'
              : 'in window'}
      </span>{' '}
      {text}
      {!t.liveVersion && state !== 'none' && ' It is not published, so the window applies once it is.'}
    </p>
  );
}

/** The publish window (`liveFrom` / `liveUntil`): the toplist is served only inside it. */
export function ToplistSchedule({ toplist, onSaved }: { toplist: Toplist; onSaved: () => void }) {
  const [from, setFrom] = useState(toLocalInput(toplist.liveFrom));
  const [until, setUntil] = useState(toLocalInput(toplist.liveUntil));
  const [outcome, setOutcome] = useState<Outcome>({});
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

  const save = async (window: { liveFrom: string | null; liveUntil: string | null }, ok: string) => {
    try {
      const r = await api<{ data: Toplist }>('PATCH', `/toplists/${toplist.id}`, window);
      setFrom(toLocalInput(r.data.liveFrom));
      setUntil(toLocalInput(r.data.liveUntil));
      setOutcome({ ok });
      onSaved();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save({ liveFrom: fromLocalInput(from), liveUntil: fromLocalInput(until) }, 'Schedule saved.');
  };
  return (
    <form onSubmit={submit} className="card" aria-labelledby="schedule-heading" noValidate>
      <h2 id="schedule-heading">Schedule</h2>
      <WindowSummary t={toplist} />
      <div className="row">
        <Field
          id="live-from"
          label={`Live from (${zone})`}
          type="datetime-local"
          value={from}
          onChange={setFrom}
          outcome={outcome}
          field="liveFrom"
        />
        <Field
          id="live-until"
          label={`Live until (${zone})`}
          type="datetime-local"
          value={until}
          onChange={setUntil}
          outcome={outcome}
          field="liveUntil"
        />
      </div>
      <p className="muted small">Empty means no limit. A change applies to the live edition at once.</p>
      <div className="row">
        <button type="submit">Save schedule</button>
        <button
          type="button"
          onClick={() => save({ liveFrom: null, liveUntil: null }, 'Schedule cleared.')}
          disabled={!toplist.liveFrom && !toplist.liveUntil}
        >
          Clear schedule
        </button>
      </div>
      <OutcomeLine outcome={outcome} shown={['liveFrom', 'liveUntil']} />
    </form>
  );
}
