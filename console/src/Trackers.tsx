import { useState } from 'react';
import type { Tracker } from '../../src/modules/catalog/types.ts';
import { api } from './api.ts';
import { type FieldSpec, FormCard, shownOf, useAction, useForm } from './form.tsx';
import { ACTIONS, Table } from './table.tsx';
import { OutcomeLine } from './ui.tsx';

/** A comma-separated list as the API's array (blanks dropped), and back. */
const listOf = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const textOf = (list: readonly string[]) => list.join(', ');

type TrackerValues = {
  campaignName: string;
  landingUrl: string;
  tcLink: string;
  countries: string;
  markets: string;
};

const specsOf = (id: string): readonly FieldSpec<keyof TrackerValues>[] => [
  { key: 'campaignName', id: `${id}-campaign`, label: 'Campaign name', required: true },
  {
    key: 'landingUrl',
    id: `${id}-landing`,
    label: 'Landing URL (where /go redirects)',
    type: 'url',
    required: true,
  },
  { key: 'tcLink', id: `${id}-tc`, label: 'Terms and conditions link', type: 'url' },
  {
    key: 'countries',
    id: `${id}-countries`,
    label: 'Countries (comma-separated names; empty: every country)',
    field: 'geos.countries',
  },
  { key: 'markets', id: `${id}-markets`, label: 'Markets (comma-separated codes)', field: 'geos.markets' },
];

const valuesOf = (t?: Tracker): TrackerValues => ({
  campaignName: t?.campaignName ?? '',
  landingUrl: t?.landingUrl ?? '',
  tcLink: t?.tcLink ?? '',
  countries: textOf(t?.geos.countries ?? []),
  markets: textOf(t?.geos.markets ?? []),
});

/** One tracker's form: adds a tracker to the offer, or edits the one given. */
function TrackerForm({
  offerId,
  tracker,
  onSaved,
}: {
  offerId: number;
  tracker?: Tracker;
  onSaved: () => void;
}) {
  const form = useForm<TrackerValues>(() => valuesOf(tracker));
  const id = tracker ? `tracker-${tracker.id}` : `new-tracker-${offerId}`;
  const specs = specsOf(id);
  const save = () =>
    form.run(async () => {
      const { f } = form;
      const body = {
        campaignName: f.campaignName,
        landingUrl: f.landingUrl,
        tcLink: f.tcLink,
        geos: { countries: listOf(f.countries), markets: listOf(f.markets) },
      };
      // Both answer the offer with its trackers; the screen reloads the offer list.
      if (tracker) await api('PATCH', `/offers/${offerId}/trackers/${tracker.id}`, body);
      else await api('POST', `/offers/${offerId}/trackers`, body);
      if (!tracker) form.setF(valuesOf());
      onSaved();
      return tracker
        ? `Tracker ${f.campaignName} saved.`
        : `Tracker ${f.campaignName} added: /go links of this offer now redirect to ${f.landingUrl}.`;
    });
  return (
    <FormCard
      id={`${id}-heading`}
      title={tracker ? `Tracker: ${tracker.campaignName}` : `New tracker for offer ${offerId}`}
      heading="h4"
      form={form}
      specs={specs}
      shown={shownOf(specs)}
      onSubmit={save}
      submit={tracker ? `Save tracker ${tracker.campaignName}` : `Add tracker to offer ${offerId}`}
    />
  );
}

/**
 * An offer's trackers (where its /go links redirect, by visitor geo): each editable and
 * removable, and a form to add one. A new offer serves no tracking link until it has one.
 */
export function Trackers({
  offerId,
  trackers,
  onChanged,
}: {
  offerId: number;
  trackers: readonly Tracker[];
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState<number | null>(null);
  const action = useAction();
  const remove = (t: Tracker) =>
    window.confirm(`Remove tracker ${t.campaignName}? Its /go links stop redirecting there.`) &&
    void action.run(async () => {
      await api('DELETE', `/offers/${offerId}/trackers/${t.id}`);
      onChanged();
      return `Tracker ${t.campaignName} removed.`;
    });
  return (
    <section aria-label={`Trackers of offer ${offerId}`} className="trackers">
      <h4>Trackers</h4>
      {trackers.length === 0 ? (
        <p className="muted">No tracker yet: this offer's tracking links lead nowhere until one is added.</p>
      ) : (
        <Table
          rows={trackers}
          columns={[
            { head: 'Campaign', rowHeader: true, cell: (t) => t.campaignName },
            { head: 'Landing URL', cell: (t) => <code>{t.landingUrl}</code> },
            {
              head: 'Geos',
              cell: (t) => textOf([...t.geos.countries, ...t.geos.markets]) || 'every country',
            },
            {
              head: ACTIONS,
              cell: (t) => (
                <>
                  <button type="button" onClick={() => setEditing(editing === t.id ? null : t.id)}>
                    Edit tracker {t.campaignName}
                  </button>{' '}
                  <button type="button" onClick={() => remove(t)}>
                    Remove tracker {t.campaignName}
                  </button>
                </>
              ),
            },
          ]}
        />
      )}
      <OutcomeLine outcome={action.outcome} />
      {trackers
        .filter((t) => t.id === editing)
        .map((t) => (
          <TrackerForm
            key={t.id}
            offerId={offerId}
            tracker={t}
            onSaved={() => {
              setEditing(null);
              onChanged();
            }}
          />
        ))}
      <TrackerForm offerId={offerId} onSaved={onChanged} />
    </section>
  );
}
