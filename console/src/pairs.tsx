import { InputField } from './ui.tsx';

/** Key/value rows of a mapping (a programme's postback parameters, a report's columns), edited in place. */
export function PairsEditor({
  id,
  legend,
  keyLabel,
  valueLabel,
  pairs,
  onChange,
  max,
}: {
  id: string;
  legend: string;
  keyLabel: string;
  valueLabel: string;
  pairs: [string, string][];
  onChange: (pairs: [string, string][]) => void;
  max: number;
}) {
  const set = (i: number, at: 0 | 1, v: string) =>
    onChange(pairs.map((p, j) => (j === i ? (at === 0 ? [v, p[1]] : [p[0], v]) : p)));
  return (
    <fieldset>
      <legend>{legend}</legend>
      {pairs.map(([k, v], i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place; the key text changes as it is typed.
        <div className="row" key={i}>
          <InputField
            id={`${id}-k${i}`}
            label={`${keyLabel} ${i + 1}`}
            value={k}
            maxLength={32}
            onChange={(text) => set(i, 0, text)}
          />
          <InputField
            id={`${id}-v${i}`}
            label={`${valueLabel} ${i + 1}`}
            value={v}
            maxLength={300}
            onChange={(text) => set(i, 1, text)}
          />
          <button
            type="button"
            aria-label={`Remove ${keyLabel.toLowerCase()} ${i + 1}`}
            onClick={() => onChange(pairs.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" disabled={pairs.length >= max} onClick={() => onChange([...pairs, ['', '']])}>
        Add {keyLabel.toLowerCase()}
      </button>
    </fieldset>
  );
}

/** Rows as the API's object (empty keys dropped). */
export const pairsToObject = (pairs: [string, string][]) =>
  Object.fromEntries(pairs.filter(([k]) => k.trim() !== '').map(([k, v]) => [k.trim(), v.trim()]));
