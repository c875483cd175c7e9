import { useState } from 'react';
import { api, CAPABILITIES, type Connection } from './api.ts';
import { ConnectionDetail } from './ConnectionDetail.tsx';
import { Fields, FormCard, shownOf, useAction, useForm } from './form.tsx';
import { ACTIONS, Table } from './table.tsx';
import { OutcomeLine, SelectField, Status, useLoad } from './ui.tsx';

const STATE_TEXT: Record<Connection['state'], string> = {
  unverified: 'not verified yet',
  connected: 'connected',
  auth_error: 'key refused (401)',
  forbidden: 'key lacks a scope (403)',
  unreachable: 'unreachable',
  invalid_response: 'invalid /health answer',
};

/** Status badge: connected, or error with the probe's state. */
export function StatusBadge({ c }: { c: Connection }) {
  return c.status === 'connected' ? (
    <span className="badge">connected</span>
  ) : (
    <span className="badge off">error · {STATE_TEXT[c.state]}</span>
  );
}

/** The four capabilities, each confirmed or not verified; a forecast the server does not offer says so. */
export function Capabilities({ c }: { c: Connection }) {
  return (
    <ul className="caps" aria-label={`Capabilities of ${c.publisher}`}>
      {CAPABILITIES.map((cap) => {
        const confirmed = c.capabilities[cap] === 'confirmed';
        const notOffered = cap === 'forecast' && c.forecast_declared === false;
        return (
          <li key={cap} className={`cap ${confirmed ? 'confirmed' : notOffered ? 'absent' : ''}`}>
            <span aria-hidden="true">{confirmed ? '✓' : notOffered ? '✕' : '○'}</span> {cap.replace('_', ' ')}
            : {confirmed ? 'confirmed' : notOffered ? 'not offered' : 'not verified'}
          </li>
        );
      })}
    </ul>
  );
}

/** The two views of the Ad servers area: connections (inventory, placements) and bookings. */
export function AdServersTabs() {
  const bookings = window.location.hash.startsWith('#/adservers/bookings');
  return (
    <nav aria-label="Ad servers views" className="tabs">
      <a
        href="#/adservers"
        className={bookings ? 'button' : 'button current'}
        aria-current={bookings ? undefined : 'page'}
      >
        Connections
      </a>
      <a
        href="#/adservers/bookings"
        className={bookings ? 'button current' : 'button'}
        aria-current={bookings ? 'page' : undefined}
      >
        Bookings
      </a>
    </nav>
  );
}

/** Ad-server connections: status, capabilities, account, last error, Re-verify; add one; open one for inventory and placements. */
export function AdServersScreen() {
  const list = useLoad(() => api<{ data: Connection[] }>('GET', '/adserver/connections'), '');
  const [openId, setOpenId] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const [verifying, setVerifying] = useState<string | null>(null);
  const action = useAction();
  const connections = list.data?.data ?? [];
  const current = connections.find((c) => c.id === openId) ?? connections[0];

  const reverify = async (c: Connection) => {
    setVerifying(c.id);
    action.setOutcome({});
    await action.run(async () => {
      const r = await api<{ data: Connection }>('POST', `/adserver/connections/${c.id}/verify`);
      list.reload();
      return `Re-verified ${c.publisher} (${c.environment}): ${r.data.status}.`;
    });
    setVerifying(null);
  };

  return (
    <section>
      <div className="row spread">
        <h1>Ad servers</h1>
        <AdServersTabs />
        <button type="button" onClick={() => setAdding(!adding)} aria-expanded={adding}>
          {adding ? 'Close the form' : 'Add a connection'}
        </button>
      </div>
      {adding && (
        <AddConnection
          onAdded={(c) => {
            setAdding(false);
            setOpenId(c.id);
            action.setOutcome({ ok: `Added ${c.publisher} (${c.environment}): ${c.status}.` });
            list.reload();
          }}
        />
      )}
      <OutcomeLine outcome={action.outcome} />
      <Status
        load={list}
        empty={connections.length === 0 && 'No ad-server connections yet. Add one to sync its inventory.'}
      >
        <Table
          className="connections"
          rows={connections}
          rowProps={(c) => ({
            'data-testid': `connection-${c.publisher}`,
            'aria-current': c.id === current?.id,
          })}
          columns={[
            {
              head: 'Publisher',
              cell: (c) => (
                <>
                  <strong>{c.publisher}</strong>
                  <div className="muted small">{c.environment}</div>
                  <div className="muted small break">{c.base_url}</div>
                </>
              ),
            },
            {
              head: 'Status',
              cell: (c) => <StatusBadge c={c} />,
              sub: (c) =>
                c.verified_at ? `verified ${new Date(c.verified_at).toLocaleString()}` : 'never verified',
            },
            { head: 'Capabilities', cell: (c) => <Capabilities c={c} /> },
            {
              head: 'Account',
              cell: (c) =>
                c.account_id ? (
                  <>
                    {c.account_name ?? c.account_id}
                    <div className="muted small">
                      {c.timezone} · {c.currency}
                    </div>
                  </>
                ) : (
                  <span className="muted">unknown until /health answers</span>
                ),
            },
            {
              head: 'Last error',
              className: 'small break',
              cell: (c) =>
                c.last_error ? (
                  <span className="error">{c.last_error}</span>
                ) : (
                  <span className="muted">none</span>
                ),
            },
            {
              head: ACTIONS,
              cell: (c) => (
                <div className="stack">
                  <button
                    type="button"
                    onClick={() => reverify(c)}
                    disabled={verifying !== null}
                    aria-label={`Re-verify ${c.publisher} (${c.environment})`}
                  >
                    {verifying === c.id ? 'Verifying…' : 'Re-verify'}
                  </button>
                  <button
                    type="button"
                    aria-pressed={c.id === current?.id}
                    onClick={() => setOpenId(c.id)}
                    aria-label={`Inventory and placements of ${c.publisher} (${c.environment})`}
                  >
                    Inventory
                  </button>
                </div>
              ),
            },
          ]}
        />
      </Status>
      {current && <ConnectionDetail key={current.id} connection={current} onChanged={list.reload} />}
    </section>
  );
}

const CONNECTION_SPECS = [
  { key: 'publisher', id: 'conn-publisher', label: 'Publisher (slug)' },
  { key: 'base_url', id: 'conn-base-url', label: 'Base URL (…/api/v1)' },
  { key: 'api_key', id: 'conn-api-key', label: 'API key', type: 'password' },
] as const;

/** New connection: the key goes to the server once and is never shown again (the field is cleared). */
function AddConnection({ onAdded }: { onAdded: (c: Connection) => void }) {
  const form = useForm({ publisher: '', environment: 'production', base_url: '', api_key: '' });
  const submit = () =>
    form.run(async () => {
      const r = await api<{ data: Connection }>('POST', '/adserver/connections', form.f);
      form.setF({ ...form.f, api_key: '' });
      onAdded(r.data);
      return undefined;
    });
  return (
    <FormCard
      id="add-connection"
      title="Add a connection"
      outcome={form.outcome}
      shown={[...shownOf(CONNECTION_SPECS), 'environment']}
      onSubmit={submit}
      submit="Add connection"
      busy={form.busy}
      busyText="Connecting…"
      footer={
        <p className="muted small">
          The key is stored encrypted and never shown again. Adding runs the verify probe (/health, then
          /inventory).
        </p>
      }
    >
      <Fields specs={CONNECTION_SPECS.slice(0, 1)} {...form} />
      <SelectField
        id="conn-environment"
        label="Environment"
        value={form.f.environment}
        onChange={form.set('environment')}
        options={[
          ['production', 'production'],
          ['sandbox', 'sandbox'],
        ]}
        outcome={form.outcome}
        field="environment"
      />
      <Fields specs={CONNECTION_SPECS.slice(1)} {...form} />
    </FormCard>
  );
}
