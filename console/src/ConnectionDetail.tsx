import { type FormEvent, useState } from 'react';
import { api, type Connection, type Slot, type SyncSummary } from './api.ts';
import { Placements } from './Placements.tsx';
import { Field, failure, type Outcome, OutcomeLine, Status, useLoad } from './ui.tsx';

/** One connection: change its endpoint or key, its synced inventory, and the publisher's placements mapped onto it. */
export function ConnectionDetail({
  connection: c,
  onChanged,
}: {
  connection: Connection;
  onChanged: () => void;
}) {
  const [syncs, setSyncs] = useState(0);
  const slots = useLoad(
    () => api<{ data: Slot[] }>('GET', `/adserver/connections/${c.id}/inventory`),
    `${c.id}:${syncs}`,
  );
  const [outcome, setOutcome] = useState<Outcome>({});
  const [syncing, setSyncing] = useState(false);

  const sync = async () => {
    setSyncing(true);
    setOutcome({});
    try {
      const r = await api<{ data: SyncSummary }>('POST', `/adserver/connections/${c.id}/inventory/sync`);
      const s = r.data;
      setOutcome(
        s.ok
          ? { ok: `Synced ${s.slots} slots (${s.added} new) in ${s.pages} page${s.pages === 1 ? '' : 's'}.` }
          : { error: `Sync incomplete: ${s.problems[0] ?? 'the ad server did not answer'}` },
      );
      setSyncs((n) => n + 1);
      onChanged();
    } catch (err) {
      setOutcome(failure(err));
    } finally {
      setSyncing(false);
    }
  };

  const list = slots.data?.data ?? [];
  return (
    <section aria-labelledby="conn-detail" className="detail">
      <h2 id="conn-detail">
        {c.publisher} <span className="muted">({c.environment})</span>
      </h2>
      <EndpointForm connection={c} onSaved={onChanged} />
      <div className="split wide-right">
        <div>
          <div className="row spread">
            <h3>Inventory</h3>
            <button type="button" onClick={sync} disabled={syncing}>
              {syncing ? 'Syncing…' : 'Sync inventory'}
            </button>
          </div>
          <OutcomeLine outcome={outcome} />
          <Status
            loading={slots.loading && !slots.data}
            error={slots.error}
            empty={list.length === 0 && 'No inventory synced yet: press Sync inventory.'}
          >
            <div className="table-wrap">
              <table data-testid="inventory">
                <thead>
                  <tr>
                    <th scope="col">Slot</th>
                    <th scope="col">inventory_id</th>
                    <th scope="col">Sizes</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((s) => (
                    <tr key={s.inventory_id}>
                      <td>
                        {s.name}
                        {s.format && <div className="muted small">{s.format}</div>}
                      </td>
                      <td>
                        <code>{s.inventory_id}</code>
                      </td>
                      <td>{s.sizes.join(', ')}</td>
                      <td>
                        <span className={`badge ${s.status === 'active' ? '' : 'off'}`}>{s.status}</span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Status>
        </div>
        <Placements connection={c} slots={list} />
      </div>
    </section>
  );
}

/** Changes the base URL and/or the API key (re-issued keys, moved servers); the server re-verifies. */
function EndpointForm({ connection: c, onSaved }: { connection: Connection; onSaved: () => void }) {
  const [baseUrl, setBaseUrl] = useState(c.base_url);
  const [apiKey, setApiKey] = useState('');
  const [outcome, setOutcome] = useState<Outcome>({});
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const patch: Record<string, string> = {};
    if (baseUrl !== c.base_url) patch.base_url = baseUrl;
    if (apiKey) patch.api_key = apiKey;
    if (!Object.keys(patch).length) return setOutcome({ error: 'Change the base URL or enter a new key.' });
    try {
      const r = await api<{ data: Connection }>('PATCH', `/adserver/connections/${c.id}`, patch);
      setApiKey('');
      setOutcome({ ok: `Saved and re-verified: ${r.data.status}.` });
      onSaved();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  return (
    <details className="card">
      <summary>Change base URL or API key</summary>
      <form onSubmit={submit} noValidate>
        <div className="grid">
          <Field
            id="edit-base-url"
            label="Base URL"
            value={baseUrl}
            onChange={setBaseUrl}
            outcome={outcome}
            field="base_url"
          />
          <Field
            id="edit-api-key"
            label="New API key (leave empty to keep)"
            type="password"
            value={apiKey}
            onChange={setApiKey}
            outcome={outcome}
            field="api_key"
          />
        </div>
        <OutcomeLine outcome={outcome} shown={['base_url', 'api_key']} />
        <button type="submit">Save and re-verify</button>
      </form>
    </details>
  );
}
