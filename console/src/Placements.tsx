import { useState } from 'react';
import { api, type Connection, type Placement, type Slot } from './api.ts';
import { FormCard, useAction, useForm } from './form.tsx';
import { LoadedTable } from './table.tsx';
import { OutcomeLine, useLoad } from './ui.tsx';

/** Active slots that accept every size of the placement: the only ones the API lets it map to. */
const fits = (p: Placement, s: Slot) => s.status === 'active' && p.sizes.every((z) => s.sizes.includes(z));

/** The publisher's placements and their `inventory_id` on this connection; create a placement. */
export function Placements({ connection: c, slots }: { connection: Connection; slots: Slot[] }) {
  const placements = useLoad(
    () =>
      api<{ data: Placement[] }>('GET', `/adserver/placements?publisher=${encodeURIComponent(c.publisher)}`),
    c.publisher,
  );
  return (
    <div>
      <h3>Placements of {c.publisher}</h3>
      <LoadedTable
        load={placements}
        empty="No placements yet."
        testId="placements"
        columns={[
          {
            head: 'Placement',
            cell: (p) => p.name,
            sub: (p) => p.sizes.join(', '),
          },
          {
            head: 'Slot on this connection',
            cell: (p) => (
              <MappingCell placement={p} connection={c} slots={slots} onChanged={placements.reload} />
            ),
          },
        ]}
      />
      <NewPlacement publisher={c.publisher} onCreated={placements.reload} />
    </div>
  );
}

function MappingCell({
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
  const action = useAction();
  const options = slots.filter((s) => fits(p, s) || s.inventory_id === mapped);
  const id = `map-${p.id}`;

  const map = () =>
    action.run(async () => {
      await api('PUT', `/adserver/placements/${p.id}/slots`, { connection_id: c.id, inventory_id: choice });
      onChanged();
      return `Mapped to ${choice}.`;
    });
  const unmap = () =>
    action.run(async () => {
      await api('DELETE', `/adserver/placements/${p.id}/slots/${c.id}`);
      setChoice('');
      onChanged();
      return 'Unmapped.';
    });
  return (
    <>
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
      <OutcomeLine outcome={action.outcome} />
    </>
  );
}

const PLACEMENT_SPECS = [
  { key: 'name', id: 'placement-name', label: 'Name' },
  { key: 'sizes', id: 'placement-sizes', label: 'Sizes (e.g. 300x250, 300x600)' },
] as const;

function NewPlacement({ publisher, onCreated }: { publisher: string; onCreated: () => void }) {
  // `sizes.1` and the like belong to the one sizes field.
  const form = useForm({ name: '', sizes: '' }, (o) =>
    o.field?.startsWith('sizes') ? { ...o, field: 'sizes' } : o,
  );
  const submit = () =>
    form.run(async () => {
      const { name, sizes } = form.f;
      const list = sizes
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean);
      await api('POST', '/adserver/placements', { publisher, name, sizes: list });
      form.setF({ name: '', sizes: '' });
      onCreated();
      return `Placement ${name} created.`;
    });
  return (
    <FormCard
      record={{ unit: 'placement' }}
      heading="h4"
      form={form}
      specs={PLACEMENT_SPECS}
      onSubmit={submit}
    />
  );
}
