import { useState } from 'react';
import { api, type Connection, type Slot, type SyncSummary } from './api.ts';
import { FormCard, useAction, useForm } from './form.tsx';
import { Placements } from './Placements.tsx';
import { LoadedTable } from './table.tsx';
import { OutcomeLine, useLoad } from './ui.tsx';

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
  const syncer = useAction();
  const sync = () =>
    syncer.run(async () => {
      const s = (await api<{ data: SyncSummary }>('POST', `/adserver/connections/${c.id}/inventory/sync`))
        .data;
      setSyncs((n) => n + 1);
      onChanged();
      if (!s.ok) throw new Error(`Sync incomplete: ${s.problems[0] ?? 'the ad server did not answer'}`);
      return `Synced ${s.slots} slots (${s.added} new) in ${s.pages} page${s.pages === 1 ? '' : 's'}.`;
    });

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
            <button type="button" onClick={sync} disabled={syncer.busy}>
              {syncer.busy ? 'Syncing…' : 'Sync inventory'}
            </button>
          </div>
          <OutcomeLine outcome={syncer.outcome} />
          <LoadedTable
            load={slots}
            empty="No inventory synced yet: press Sync inventory."
            testId="inventory"
            rowKey={(s) => s.inventory_id}
            columns={[
              {
                head: 'Slot',
                cell: (s) => s.name,
                sub: (s) => s.format,
              },
              { head: 'inventory_id', cell: (s) => <code>{s.inventory_id}</code> },
              { head: 'Sizes', cell: (s) => s.sizes.join(', ') },
              {
                head: 'Status',
                cell: (s) => (
                  <span className={`badge ${s.status === 'active' ? '' : 'off'}`}>{s.status}</span>
                ),
              },
            ]}
          />
        </div>
        <Placements connection={c} slots={list} />
      </div>
    </section>
  );
}

const ENDPOINT_SPECS = [
  { key: 'base_url', id: 'edit-base-url', label: 'Base URL' },
  { key: 'api_key', id: 'edit-api-key', label: 'New API key (leave empty to keep)', type: 'password' },
] as const;

/** Changes the base URL and/or the API key (re-issued keys, moved servers); the server re-verifies. */
function EndpointForm({ connection: c, onSaved }: { connection: Connection; onSaved: () => void }) {
  const form = useForm({ base_url: c.base_url, api_key: '' });
  const submit = () =>
    form.run(async () => {
      const patch: Record<string, string> = {};
      if (form.f.base_url !== c.base_url) patch.base_url = form.f.base_url;
      if (form.f.api_key) patch.api_key = form.f.api_key;
      if (!Object.keys(patch).length) throw new Error('Change the base URL or enter a new key.');
      const r = await api<{ data: Connection }>('PATCH', `/adserver/connections/${c.id}`, patch);
      form.setF({ ...form.f, api_key: '' });
      onSaved();
      return `Saved and re-verified: ${r.data.status}.`;
    });
  return (
    <details className="card">
      <summary>Change base URL or API key</summary>
      <FormCard
        className=""
        form={form}
        specs={ENDPOINT_SPECS}
        onSubmit={submit}
        submit="Save and re-verify"
      />
    </details>
  );
}
