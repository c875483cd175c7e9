import { api, type Toplist } from './api.ts';
import { Fields, FormCard, shownOf, useForm } from './form.tsx';

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
  const form = useForm(() => ({
    from: toLocalInput(toplist.liveFrom),
    until: toLocalInput(toplist.liveUntil),
  }));
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const specs = [
    { key: 'from', id: 'live-from', label: `Live from (${zone})`, type: 'datetime-local', field: 'liveFrom' },
    {
      key: 'until',
      id: 'live-until',
      label: `Live until (${zone})`,
      type: 'datetime-local',
      field: 'liveUntil',
    },
  ] as const;

  const save = (window: { liveFrom: string | null; liveUntil: string | null }, ok: string) =>
    form.run(async () => {
      const r = await api<{ data: Toplist }>('PATCH', `/toplists/${toplist.id}`, window);
      form.setF({ from: toLocalInput(r.data.liveFrom), until: toLocalInput(r.data.liveUntil) });
      onSaved();
      return ok;
    });
  return (
    <FormCard
      id="schedule-heading"
      title="Schedule"
      grid={false}
      outcome={form.outcome}
      shown={shownOf(specs)}
      onSubmit={() =>
        save(
          { liveFrom: fromLocalInput(form.f.from), liveUntil: fromLocalInput(form.f.until) },
          'Schedule saved.',
        )
      }
      submit="Save schedule"
      footer={
        <p className="muted small">Empty means no limit. A change applies to the live edition at once.</p>
      }
      actions={
        <button
          type="button"
          onClick={() => save({ liveFrom: null, liveUntil: null }, 'Schedule cleared.')}
          disabled={!toplist.liveFrom && !toplist.liveUntil}
        >
          Clear schedule
        </button>
      }
    >
      <WindowSummary t={toplist} />
      <div className="row">
        <Fields specs={specs} {...form} />
      </div>
    </FormCard>
  );
}
