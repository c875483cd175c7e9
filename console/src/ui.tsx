import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { ApiError } from './api.ts';

/** Loads data for a screen, tracking loading and error, with a reload; loads again when `key` changes. */
export function useLoad<T>(load: () => Promise<T>, key: string) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  // biome-ignore lint/correctness/useExhaustiveDependencies: `load` is a fresh closure each render; `key` names its inputs.
  const run = useCallback(() => {
    setState((s) => ({ data: s.data, loading: true }));
    load().then(
      (data) => setState({ data, loading: false }),
      (err: Error) => setState({ error: err.message, loading: false }),
    );
  }, [key]);
  useEffect(run, [run]);
  return { ...state, reload: run };
}

/** The loading / error / empty states every list shows before its content. */
export function Status({
  loading,
  error,
  empty,
  children,
}: {
  loading: boolean;
  error?: string;
  empty?: string | false;
  children: ReactNode;
}) {
  if (error)
    return (
      <p className="error" role="alert">
        Could not load: {error}
      </p>
    );
  if (loading)
    return (
      <p className="muted" aria-busy="true">
        Loading…
      </p>
    );
  if (empty) return <p className="muted">{empty}</p>;
  return <>{children}</>;
}

/** A message from an action: an API error (with its field) or a success note. */
export interface Outcome {
  ok?: string;
  error?: string;
  field?: string;
}

/** Turns a thrown error into an outcome to show. */
export function failure(err: unknown): Outcome {
  if (err instanceof ApiError) return { error: err.message, field: err.field };
  return { error: err instanceof Error ? err.message : String(err) };
}

/** A labelled input whose 422 message (matched on `details.field`) appears right below it. */
export function Field({
  id,
  label,
  value,
  onChange,
  outcome,
  field,
  type = 'text',
  autoComplete,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  outcome: Outcome;
  field: string;
  type?: string;
  autoComplete?: string;
}) {
  const invalid = outcome.field === field;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={type}
        autoComplete={autoComplete ?? (type === 'password' ? 'off' : undefined)}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={invalid}
        aria-describedby={invalid ? `${id}-error` : undefined}
      />
      {invalid && (
        <span id={`${id}-error`} className="error" role="alert">
          {outcome.error}
        </span>
      )}
    </div>
  );
}

/** The result line of an action, unless a field already shows the error. */
export function OutcomeLine({ outcome, shown = [] }: { outcome: Outcome; shown?: string[] }) {
  if (outcome.ok)
    return (
      <p className="ok" role="status">
        {outcome.ok}
      </p>
    );
  if (outcome.error && !(outcome.field && shown.includes(outcome.field)))
    return (
      <p className="error" role="alert">
        {outcome.error}
      </p>
    );
  return null;
}

/** A labelled select; `options` are [value, text] pairs, an `all` text adds a first empty choice. */
export function SelectField({
  id,
  label,
  value,
  onChange,
  options,
  all,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  options: [string | number, string][];
  all?: string;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {all !== undefined && <option value="">{all}</option>}
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}
