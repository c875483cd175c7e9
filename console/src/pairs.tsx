import { InputField } from './ui.tsx';

// The two inputs of a row, key then value: the id letter of each and the longest text it takes.
const PARTS = [
  { tag: 'k', maxLength: 32 },
  { tag: 'v', maxLength: 300 },
] as const;

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
  const set = (i: number, at: number, v: string) =>
    onChange(pairs.map((p, j) => (j === i ? (at === 0 ? [v, p[1]] : [p[0], v]) : p)));
  return (
    <fieldset>
      <legend>{legend}</legend>
      {pairs.map((pair, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place; the key text changes as it is typed.
        <div className="row" key={i}>
          {PARTS.map(({ tag, maxLength }, at) => (
            <InputField
              key={tag}
              id={`${id}-${tag}${i}`}
              label={`${at === 0 ? keyLabel : valueLabel} ${i + 1}`}
              value={pair[at]}
              maxLength={maxLength}
              onChange={(text) => set(i, at, text)}
            />
          ))}
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
