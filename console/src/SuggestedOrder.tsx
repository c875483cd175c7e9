import { useState } from 'react';
import type { SuggestedOrder as Suggestion } from '../../src/modules/reporting/suggested-order.ts';
import type { ToplistItem } from './api.ts';
import { api } from './api.ts';
import { useAction } from './form.tsx';
import { formatMoney } from './money.ts';
import { Table } from './table.tsx';
import { InputField, OutcomeLine } from './ui.tsx';

/** The draft's items in the suggested order of their brands; items the suggestion does not name keep their place after them. */
export function applyOrder(items: ToplistItem[], brandOrder: number[]): ToplistItem[] {
  const rank = new Map(brandOrder.map((b, i) => [b, i]));
  return [...items].sort(
    (a, b) => (rank.get(a.brandId) ?? brandOrder.length) - (rank.get(b.brandId) ?? brandOrder.length),
  );
}

/** Asks for the suggested order over the last days and shows it beside the draft, with "Apply to draft". */
export function SuggestedOrder({
  toplistId,
  onApply,
}: {
  toplistId: number;
  onApply: (brandOrder: number[]) => Promise<void>;
}) {
  const [days, setDays] = useState('30');
  const [s, setS] = useState<Suggestion | null>(null);
  const action = useAction();
  const ask = () =>
    action.run(async () => {
      const r = await api<{ data: Suggestion }>(
        'GET',
        `/toplists/${toplistId}/suggested-order?days=${encodeURIComponent(days)}`,
      );
      setS(r.data);
      return undefined;
    });
  const order = s ? [...s.items].sort((a, b) => a.suggestedPosition - b.suggestedPosition) : [];
  /** An amount of the suggestion's currency, in that currency's decimals. */
  const money = (amount: string) => (s ? formatMoney(amount, s.currency) : amount);
  return (
    <section className="card" aria-labelledby="suggest-heading">
      <h2 id="suggest-heading">Suggested order</h2>
      <div className="row">
        <InputField
          id="suggest-days"
          label="Days of history"
          type="number"
          min={1}
          max={90}
          value={days}
          onChange={setDays}
        />
        <button type="button" onClick={ask}>
          Suggest
        </button>
      </div>
      <OutcomeLine outcome={action.outcome} />
      {s && (
        <>
          <p className="muted small" data-testid="suggest-summary">
            {s.from} – {s.to}, {s.currency}: EPC {money(s.expected.currentEpc)} now,{' '}
            {money(s.expected.suggestedEpc)} in this order ({money(s.expected.change)}).
          </p>
          <Table
            testId="suggested-order"
            rows={order}
            rowKey={(i) => i.brandId}
            columns={[
              { head: 'Suggested', num: true, cell: (i) => i.suggestedPosition },
              { head: 'Now', num: true, cell: (i) => i.currentPosition },
              { head: 'Brand', cell: (i) => i.brandName },
              { head: 'Clicks', num: true, cell: (i) => i.clicks },
              { head: 'Commission', num: true, cell: (i) => money(i.commission) },
              {
                // The interval goes under the EPC: as a column of its own it was cut off beside the draft.
                head: 'EPC (shrunk)',
                num: true,
                cell: (i) => `${i.epc === null ? '—' : money(i.epc)} (${money(i.shrunkEpc)})`,
                sub: (i) => `${money(i.interval.low)} – ${money(i.interval.high)}`,
              },
            ]}
          />
          <button type="button" onClick={() => onApply(order.map((i) => i.brandId))}>
            Apply to draft
          </button>
        </>
      )}
    </section>
  );
}
