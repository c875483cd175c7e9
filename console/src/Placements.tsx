import { type FormEvent, useState } from 'react';
import { api, type Connection, type Placement, type Slot } from './api.ts';
import { Field, failure, type Outcome, OutcomeLine, Status, useLoad } from './ui.tsx';

/** Active slots that accept every size of the placement: the only ones the API lets it map to. */
const fits = (p: Placement, s: Slot) => s.status === 'active' && p.sizes.every((z) => s.sizes.includes(z));

/** The publisher's placements and their `inventory_id` on this connection; create a placement. */
export function Placements({ connection: c, slots }: { connection: Connection; slots: Slot[] }) {
  const placements = useLoad(
    () =>
      api<{ data: Placement[] }>('GET', `/adserver/placements?publisher=${encodeURIComponent(c.publisher)}`),
    c.publisher,
  );
  const list = placements.data?.data ?? [];
  return (
    <div>
      <h3>Placements of {c.publisher}</h3>
      <Status
        loading={placements.loading && !placements.data}
        error={placements.error}
        empty={list.length === 0 && 'No placements yet.'}
      >
        <div className="table-wrap">
          <table data-testid="placements">
            <thead>
              <tr>
                <th scope="col">Placement</th>
                <th scope="col">Slot on this connection</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <MappingRow
                  key={p.id}
                  placement={p}
                  connection={c}
                  slots={slots}
                  onChanged={placements.reload}
                />
              ))}
            </tbody>
          </table>
        </div>
      </Status>
      <NewPlacement publisher={c.publisher} onCreated={placements.reload} />
    </div>
  );
}

function MappingRow({
  placement: p,
  connection: c,
  slots,
  onChanged,
}: {
  placement: Placement;
  connection: Connection;
  slots: Slot[];
  onChanged: () => void;
}) {
  const mapped = p.slots[c.id] ?? '';
  const [choice, setChoice] = useState(mapped);
  const [outcome, setOutcome] = useState<Outcome>({});
  const options = slots.filter((s) => fits(p, s) || s.inventory_id === mapped);
  const id = `map-${p.id}`;

  const map = async () => {
    try {
      await api('PUT', `/adserver/placements/${p.id}/slots`, { connection_id: c.id, inventory_id: choice });
      setOutcome({ ok: `Mapped to ${choice}.` });
      onChanged();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const unmap = async () => {
    try {
      await api('DELETE', `/adserver/placements/${p.id}/slots/${c.id}`);
      setChoice('');
      setOutcome({ ok: 'Unmapped.' });
      onChanged();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  return (
    <tr>
      <td>
        {p.name}
        <div className="muted small">{p.sizes.join(', ')}</div>
      </td>
      <td>
        <div className="row">
          <label className="sr-only" htmlFor={id}>
            Slot for {p.name}
          </label>
          <select id={id} value={choice} onChange={(e) => setChoice(e.target.value)}>
            <option value="">— not mapped —</option>
            {options.map((s) => (
              <option key={s.inventory_id} value={s.inventory_id}>
                {s.name} ({s.inventory_id})
              </option>
            ))}
          </select>
          <button
            type="button"
            onClick={map}
            disabled={!choice || choice === mapped}
            aria-label={`Map ${p.name}`}
          >
            Map
          </button>
          <button type="button" onClick={unmap} disabled={!mapped} aria-label={`Unmap ${p.name}`}>
            Unmap
          </button>
        </div>
        {slots.length > 0 && options.length === 0 && (
          <p className="muted small">No active synced slot accepts {p.sizes.join(' and ')}.</p>
        )}
        {mapped && (
          <p className="small" data-testid={`mapped-${p.id}`}>
            inventory_id <code>{mapped}</code>
          </p>
        )}
        <OutcomeLine outcome={outcome} />
      </td>
    </tr>
  );
}

function NewPlacement({ publisher, onCreated }: { publisher: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [sizes, setSizes] = useState('');
  const [outcome, setOutcome] = useState<Outcome>({});
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const list = sizes
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean);
      await api('POST', '/adserver/placements', { publisher, name, sizes: list });
      setName('');
      setSizes('');
      setOutcome({ ok: `Placement ${name} created.` });
      onCreated();
    } catch (err) {
      // `sizes.1` and the like belong to the one sizes field.
      const f = failure(err);
      setOutcome(f.field?.startsWith('sizes') ? { ...f, field: 'sizes' } : f);
    }
  };
  return (
    <form onSubmit={submit} className="card" aria-labelledby="new-placement" noValidate>
      <h4 id="new-placement">New placement</h4>
      <div className="grid">
        <Field
          id="placement-name"
          label="Name"
          value={name}
          onChange={setName}
          outcome={outcome}
          field="name"
        />
        <Field
          id="placement-sizes"
          label="Sizes (e.g. 300x250, 300x600)"
          value={sizes}
          onChange={setSizes}
          outcome={outcome}
          field="sizes"
        />
      </div>
      <OutcomeLine outcome={outcome} shown={['name', 'sizes']} />
      <button type="submit">Create placement</button>
    </form>
  );
}
