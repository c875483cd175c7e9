import { useState } from 'react';
import type { Delivery, WebhookEndpoint } from '../../src/modules/webhooks/types.ts';
import { WEBHOOK_EVENTS } from '../../src/modules/webhooks/types.ts';
import { api, type Page, type Site } from './api.ts';
import { useSites } from './choices.ts';
import { Fields, FormCard, useAction, useForm } from './form.tsx';
import { ListScreen, usePicked } from './lists.tsx';
import { LoadedTable, Table } from './table.tsx';
import { IssuedSecret, OutcomeLine, SelectField, Status, useIssued, useLoad } from './ui.tsx';

type WithSecret = { data: WebhookEndpoint; secret: string };

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

/** Change webhooks: endpoints (enabled or disabled), create with the secret shown once, test, rotate, and the delivery log. */
export function WebhooksScreen() {
  const pick = usePicked<WebhookEndpoint>('/webhooks', { search: false });
  const sites = useSites();
  const issued = useIssued();
  const siteName = (id: number | null) => (id === null ? 'every site' : sites.domainOf(id));
  const shown = (r: WithSecret, why: string) => {
    issued.issue(r.secret, why);
    pick.saved(r.data);
  };
  return (
    <ListScreen
      wide
      title="Webhooks"
      listLabel="Webhook endpoints"
      unit="endpoint"
      pick={pick}
      empty="No webhook endpoints yet."
      item={(e) => (
        <>
          <span className={e.enabled ? 'badge' : 'badge off'}>{e.enabled ? 'enabled' : 'disabled'}</span>{' '}
          {e.url} <span className="muted">{siteName(e.siteId)}</span>
        </>
      )}
      notice={
        <IssuedSecret
          state={issued}
          testId="webhook-secret"
          copyLabel="Copy secret"
          text={(why) => `Signing secret (${why}): copy it now, it is shown only once.`}
        />
      }
      detail={(endpoint) =>
        endpoint && (
          <EndpointDetail
            id={endpoint.id}
            siteName={siteName}
            onChanged={pick.list.reload}
            onRotated={(r) => shown(r, 'rotated')}
            onDeleted={() => {
              pick.setPicked(null);
              pick.list.reload();
            }}
          />
        )
      }
    >
      <NewEndpoint sites={sites.data?.data ?? []} onCreated={(r) => shown(r, 'created')} />
    </ListScreen>
  );
}

function NewEndpoint({ sites, onCreated }: { sites: Site[]; onCreated: (r: WithSecret) => void }) {
  const form = useForm({ url: '', siteId: '' });
  const [events, setEvents] = useState<string[]>([...WEBHOOK_EVENTS]);
  const create = () =>
    form.run(async () => {
      const r = await api<WithSecret>('POST', '/webhooks', {
        url: form.f.url.trim(),
        events,
        siteId: form.f.siteId ? Number(form.f.siteId) : null,
      });
      form.setF({ ...form.f, url: '' });
      onCreated(r);
      return `Endpoint ${r.data.url} created.`;
    });
  const toggle = (ev: string) =>
    setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev]);
  return (
    <FormCard
      id="new-webhook"
      record={{ unit: 'endpoint' }}
      grid={false}
      outcome={form.outcome}
      shown={['url']}
      onSubmit={create}
    >
      <Fields specs={[{ key: 'url', id: 'webhook-url', label: 'URL (https)' }]} {...form} />
      <SelectField
        id="webhook-site"
        label="Site"
        value={form.f.siteId}
        onChange={form.set('siteId')}
        all="Every site (workspace)"
        options={sites.map((s) => [s.id, s.domain])}
      />
      <fieldset aria-invalid={form.outcome.field === 'events'}>
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((ev) => (
          <label key={ev} className="check">
            <input type="checkbox" checked={events.includes(ev)} onChange={() => toggle(ev)} /> {ev}
          </label>
        ))}
      </fieldset>
    </FormCard>
  );
}

function EndpointDetail({
  id,
  siteName,
  onChanged,
  onRotated,
  onDeleted,
}: {
  id: string;
  siteName: (id: number | null) => string;
  onChanged: () => void;
  onRotated: (r: WithSecret) => void;
  onDeleted: () => void;
}) {
  const endpoint = useLoad(() => api<{ data: WebhookEndpoint }>('GET', `/webhooks/${id}`), id);
  const deliveries = useLoad(() => api<Page<Delivery>>('GET', `/webhooks/${id}/deliveries?per_page=50`), id);
  const action = useAction();
  const [open, setOpen] = useState<string | null>(null);
  /** Runs an action on the endpoint, then shows its state, its deliveries and the list afresh. */
  const act = (what: () => Promise<string | undefined>) =>
    action.run(async () => {
      try {
        return await what();
      } finally {
        endpoint.reload();
        deliveries.reload();
        onChanged();
      }
    });
  /** The buttons that change the endpoint (keyed apart from their text, which Enable/Disable swaps). */
  const changes = (e: WebhookEndpoint) => [
    {
      key: 'test',
      text: 'Send test',
      run: async () => {
        const r = await api<{ data: Delivery }>('POST', `/webhooks/${id}/test`);
        const tried = r.data.log[0];
        // A failed test is the action's failure: it shows as an error, not in the success colour.
        if (r.data.status !== 'succeeded') throw new Error(`Test failed: ${r.data.lastError}`);
        return `Test delivered: HTTP ${tried?.httpStatus} in ${tried?.latencyMs} ms.`;
      },
    },
    {
      key: 'rotate',
      text: 'Rotate secret',
      run: async () => {
        if (!window.confirm('Rotate the signing secret? The old one keeps signing for 24 hours.')) return;
        onRotated(await api<WithSecret>('POST', `/webhooks/${id}/rotate`, {}));
        return 'Secret rotated.';
      },
    },
    {
      key: 'enable',
      text: e.enabled ? 'Disable' : 'Enable',
      run: async () => {
        await api('PATCH', `/webhooks/${id}`, { enabled: !e.enabled });
        return e.enabled ? 'Endpoint disabled.' : 'Endpoint enabled.';
      },
    },
  ];
  const e = endpoint.data?.data;
  return (
    <Status load={endpoint}>
      {e && (
        <div>
          <h2>
            Endpoint <code>{e.id}</code>
          </h2>
          <p>
            <span className={e.enabled ? 'badge' : 'badge off'} data-testid="webhook-state">
              {e.enabled ? 'enabled' : 'disabled'}
            </span>{' '}
            {e.url} · {siteName(e.siteId)} · {e.events.join(', ')}
          </p>
          {!e.enabled && (
            <p className="error" role="alert">
              Disabled {when(e.disabledAt)}: {e.disabledReason}
            </p>
          )}
          <p className="muted small">
            Secret <code>{e.secretHint}</code>
            {e.previousSecretExpiresAt &&
              ` · the previous secret also signs until ${when(e.previousSecretExpiresAt)}`}
          </p>
          <div className="row">
            {changes(e).map(({ key, text, run }) => (
              <button key={key} type="button" onClick={() => act(run)}>
                {text}
              </button>
            ))}
            <button
              type="button"
              onClick={() => {
                if (!window.confirm(`Delete the endpoint ${e.url} and its delivery log?`)) return;
                void action.run(async () => {
                  await api('DELETE', `/webhooks/${id}`);
                  onDeleted();
                  return undefined;
                });
              }}
            >
              Delete
            </button>
          </div>
          <OutcomeLine outcome={action.outcome} />
          <h3>Deliveries</h3>
          <LoadedTable
            load={deliveries}
            empty="Nothing sent yet."
            label="Deliveries"
            columns={[
              { head: 'Created', cell: (d) => when(d.createdAt) },
              { head: 'Event', cell: (d) => d.eventType },
              {
                head: 'Status',
                cell: (d) => (
                  <span className={d.status === 'failed' ? 'badge off' : 'badge'}>{d.status}</span>
                ),
              },
              {
                head: 'Tries',
                cell: (d) => (
                  <button
                    type="button"
                    aria-expanded={open === d.id}
                    onClick={() => setOpen(open === d.id ? null : d.id)}
                  >
                    {d.attempts} / {d.maxAttempts}
                  </button>
                ),
              },
              { head: 'Next try', cell: (d) => when(d.nextAttemptAt) },
              { head: 'Last error', className: 'small', cell: (d) => d.lastError ?? '' },
            ]}
            expanded={(d) =>
              open === d.id && (
                <Table
                  label={`Tries of ${d.id}`}
                  rows={d.log}
                  rowKey={(a) => a.attempt}
                  columns={[
                    { head: 'Try', cell: (a) => a.attempt },
                    { head: 'At', cell: (a) => when(a.startedAt) },
                    { head: 'HTTP', cell: (a) => a.httpStatus ?? '—' },
                    { head: 'Latency', cell: (a) => `${a.latencyMs} ms` },
                    {
                      head: 'Error',
                      className: 'small',
                      cell: (a) => a.error ?? (a.succeeded ? 'ok' : ''),
                    },
                    { head: 'Next try', cell: (a) => when(a.nextAttemptAt) },
                  ]}
                />
              )
            }
          />
        </div>
      )}
    </Status>
  );
}
