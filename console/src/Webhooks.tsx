import { type FormEvent, Fragment, useState } from 'react';
import type { Delivery, WebhookEndpoint } from '../../src/modules/webhooks/types.ts';
import { WEBHOOK_EVENTS } from '../../src/modules/webhooks/types.ts';
import { api, type Page, type Site } from './api.ts';
import { Field, failure, type Outcome, OutcomeLine, SelectField, Status, useLoad } from './ui.tsx';

type WithSecret = { data: WebhookEndpoint; secret: string };

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

/** Change webhooks: endpoints (enabled or disabled), create with the secret shown once, test, rotate, and the delivery log. */
export function WebhooksScreen() {
  const endpoints = useLoad(() => api<Page<WebhookEndpoint>>('GET', '/webhooks?per_page=100'), '');
  const sites = useLoad(() => api<Page<Site>>('GET', '/sites?per_page=100'), '');
  const [selected, setSelected] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ id: string; secret: string; why: string } | null>(null);
  const current = selected ?? endpoints.data?.data[0]?.id ?? null;
  const siteName = (id: number | null) =>
    id === null ? 'every site' : (sites.data?.data.find((s) => s.id === id)?.domain ?? `site ${id}`);
  const shown = (r: WithSecret, why: string) => {
    setSecret({ id: r.data.id, secret: r.secret, why });
    setSelected(r.data.id);
    endpoints.reload();
  };
  return (
    <section className="split wide-right">
      <div>
        <h1>Webhooks</h1>
        <Status
          loading={endpoints.loading}
          error={endpoints.error}
          empty={endpoints.data?.data.length === 0 && 'No webhook endpoints yet.'}
        >
          <ul className="picklist" aria-label="Webhook endpoints">
            {endpoints.data?.data.map((e) => (
              <li key={e.id}>
                <button type="button" aria-pressed={e.id === current} onClick={() => setSelected(e.id)}>
                  <span className={e.enabled ? 'badge' : 'badge off'}>
                    {e.enabled ? 'enabled' : 'disabled'}
                  </span>{' '}
                  {e.url} <span className="muted">{siteName(e.siteId)}</span>
                </button>
              </li>
            ))}
          </ul>
        </Status>
        <NewEndpoint sites={sites.data?.data ?? []} onCreated={(r) => shown(r, 'created')} />
      </div>
      <div>
        {secret && (
          <div className="notice" role="status">
            <p>Signing secret ({secret.why}): copy it now, it is shown only once.</p>
            <code className="secret" data-testid="webhook-secret">
              {secret.secret}
            </code>
            <button type="button" onClick={() => navigator.clipboard.writeText(secret.secret)}>
              Copy secret
            </button>
            <button type="button" onClick={() => setSecret(null)}>
              Done
            </button>
          </div>
        )}
        {current !== null && (
          <EndpointDetail
            key={current}
            id={current}
            siteName={siteName}
            onChanged={endpoints.reload}
            onRotated={(r) => shown(r, 'rotated')}
            onDeleted={() => {
              setSelected(null);
              endpoints.reload();
            }}
          />
        )}
      </div>
    </section>
  );
}

function NewEndpoint({ sites, onCreated }: { sites: Site[]; onCreated: (r: WithSecret) => void }) {
  const [url, setUrl] = useState('');
  const [siteId, setSiteId] = useState('');
  const [events, setEvents] = useState<string[]>([...WEBHOOK_EVENTS]);
  const [outcome, setOutcome] = useState<Outcome>({});
  const create = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const r = await api<WithSecret>('POST', '/webhooks', {
        url: url.trim(),
        events,
        siteId: siteId ? Number(siteId) : null,
      });
      setUrl('');
      setOutcome({ ok: `Endpoint ${r.data.url} created.` });
      onCreated(r);
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const toggle = (ev: string) =>
    setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev]);
  return (
    <form onSubmit={create} className="card" aria-labelledby="new-webhook" noValidate>
      <h2 id="new-webhook">New endpoint</h2>
      <Field
        id="webhook-url"
        label="URL (https)"
        value={url}
        onChange={setUrl}
        outcome={outcome}
        field="url"
      />
      <SelectField
        id="webhook-site"
        label="Site"
        value={siteId}
        onChange={setSiteId}
        all="Every site (workspace)"
        options={sites.map((s) => [s.id, s.domain])}
      />
      <fieldset aria-invalid={outcome.field === 'events'}>
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((ev) => (
          <label key={ev} className="check">
            <input type="checkbox" checked={events.includes(ev)} onChange={() => toggle(ev)} /> {ev}
          </label>
        ))}
      </fieldset>
      <OutcomeLine outcome={outcome} shown={['url']} />
      <button type="submit">Create endpoint</button>
    </form>
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
  const [outcome, setOutcome] = useState<Outcome>({});
  const [open, setOpen] = useState<string | null>(null);
  const act = async (what: () => Promise<string | undefined>) => {
    try {
      const ok = await what();
      setOutcome(ok ? { ok } : {});
      endpoint.reload();
      deliveries.reload();
      onChanged();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const e = endpoint.data?.data;
  return (
    <Status loading={endpoint.loading && !e} error={endpoint.error}>
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
            <button
              type="button"
              onClick={() =>
                act(async () => {
                  const r = await api<{ data: Delivery }>('POST', `/webhooks/${id}/test`);
                  const tried = r.data.log[0];
                  return r.data.status === 'succeeded'
                    ? `Test delivered: HTTP ${tried?.httpStatus} in ${tried?.latencyMs} ms.`
                    : `Test failed: ${r.data.lastError}`;
                })
              }
            >
              Send test
            </button>
            <button
              type="button"
              onClick={() =>
                act(async () => {
                  if (!window.confirm('Rotate the signing secret? The old one keeps signing for 24 hours.'))
                    return;
                  onRotated(await api<WithSecret>('POST', `/webhooks/${id}/rotate`, {}));
                  return 'Secret rotated.';
                })
              }
            >
              Rotate secret
            </button>
            <button
              type="button"
              onClick={() =>
                act(async () => {
                  await api('PATCH', `/webhooks/${id}`, { enabled: !e.enabled });
                  return e.enabled ? 'Endpoint disabled.' : 'Endpoint enabled.';
                })
              }
            >
              {e.enabled ? 'Disable' : 'Enable'}
            </button>
            <button
              type="button"
              onClick={async () => {
                if (!window.confirm(`Delete the endpoint ${e.url} and its delivery log?`)) return;
                try {
                  await api('DELETE', `/webhooks/${id}`);
                  onDeleted();
                } catch (err) {
                  setOutcome(failure(err));
                }
              }}
            >
              Delete
            </button>
          </div>
          <OutcomeLine outcome={outcome} />
          <h3>Deliveries</h3>
          <Status
            loading={deliveries.loading && !deliveries.data}
            error={deliveries.error}
            empty={deliveries.data?.data.length === 0 && 'Nothing sent yet.'}
          >
            <table aria-label="Deliveries">
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Tries</th>
                  <th scope="col">Next try</th>
                  <th scope="col">Last error</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.data?.data.map((d) => (
                  <Fragment key={d.id}>
                    <tr>
                      <td>{when(d.createdAt)}</td>
                      <td>{d.eventType}</td>
                      <td>
                        <span className={d.status === 'failed' ? 'badge off' : 'badge'}>{d.status}</span>
                      </td>
                      <td>
                        <button
                          type="button"
                          aria-expanded={open === d.id}
                          onClick={() => setOpen(open === d.id ? null : d.id)}
                        >
                          {d.attempts} / {d.maxAttempts}
                        </button>
                      </td>
                      <td>{when(d.nextAttemptAt)}</td>
                      <td className="small">{d.lastError ?? ''}</td>
                    </tr>
                    {open === d.id && (
                      <tr>
                        <td colSpan={6}>
                          <table aria-label={`Tries of ${d.id}`}>
                            <thead>
                              <tr>
                                <th scope="col">Try</th>
                                <th scope="col">At</th>
                                <th scope="col">HTTP</th>
                                <th scope="col">Latency</th>
                                <th scope="col">Error</th>
                                <th scope="col">Next try</th>
                              </tr>
                            </thead>
                            <tbody>
                              {d.log.map((a) => (
                                <tr key={a.attempt}>
                                  <td>{a.attempt}</td>
                                  <td>{when(a.startedAt)}</td>
                                  <td>{a.httpStatus ?? '—'}</td>
                                  <td>{a.latencyMs} ms</td>
                                  <td className="small">{a.error ?? (a.succeeded ? 'ok' : '')}</td>
                                  <td>{when(a.nextAttemptAt)}</td>
                                </tr>
                              ))}
                            </tbody>
                          </table>
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </Status>
        </div>
      )}
    </Status>
  );
}
