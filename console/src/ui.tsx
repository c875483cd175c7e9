import { keepPreviousData, QueryClient, useQuery } from '@tanstack/react-query';
import { type InputHTMLAttributes, type ReactNode, useCallback, useId, useState } from 'react';
import { ApiError } from './api.ts';
import { readableError } from './readable-error.ts';

/** A word with its first letter upper-case ("site" → "Site"), for a unit that starts a heading. */
export const capitalized = (word: string) => `${word[0]?.toUpperCase() ?? ''}${word.slice(1)}`;

/**
 * The console's data cache (TanStack Query). Each {@link useLoad} has a query of its own, kept
 * only while mounted (`gcTime` 0: a screen opened again loads afresh), never retried (an error
 * shows at once) and not refetched on focus: a screen loads when it opens, when its key changes
 * and on `reload`.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { gcTime: 0, retry: false, refetchOnWindowFocus: false, refetchOnReconnect: false },
  },
});

/**
 * Loads data for a screen, tracking loading and error, with a reload; loads again when `key`
 * changes, showing the previous data meanwhile. Only the answer for the current key and the
 * latest reload is shown: a slower earlier request never overwrites a later one's result.
 */
export function useLoad<T>(load: () => Promise<T>, key: string) {
  // The query belongs to this hook: two screens (or two loads of one) with equal keys never share.
  const id = useId();
  const q = useQuery({ queryKey: [id, key], queryFn: () => load(), placeholderData: keepPreviousData });
  const { refetch } = q;
  const reload = useCallback(() => void refetch(), [refetch]);
  return {
    data: q.isError ? undefined : q.data,
    error: q.error?.message,
    loading: q.isFetching,
    reload,
  };
}

/** The loading / error / empty states every list shows before its content; `load` is a {@link useLoad} result. */
export function Status({
  load,
  loading = load ? load.loading && load.data === undefined : false,
  error = load?.error,
  empty,
  children,
}: {
  load?: { loading: boolean; error?: string; data?: unknown };
  loading?: boolean;
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
  /** The error as shown beside its field, whose label already names it. */
  fieldError?: string;
}

/** Turns a thrown error into an outcome to show. */
export function failure(err: unknown): Outcome {
  if (err instanceof ApiError) {
    const { line, beside } = readableError(err.message, err.field);
    return { error: line, field: err.field, fieldError: beside };
  }
  return { error: err instanceof Error ? err.message : String(err) };
}

/** The console's field layout: a label above its control (`children`, the one whose id is `id`). */
export function FieldRow({ id, label, children }: { id: string; label: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
    </div>
  );
}

/** A labelled input that hands on its text; `children` follow the input (its error, a datalist). */
export function InputField({
  id,
  label,
  onChange,
  children,
  ...input
}: Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'onChange' | 'children'> & {
  id: string;
  label: ReactNode;
  onChange: (value: string) => void;
  children?: ReactNode;
}) {
  return (
    <FieldRow id={id} label={label}>
      <input id={id} {...input} onChange={(e) => onChange(e.target.value)} />
      {children}
    </FieldRow>
  );
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
  required = false,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  outcome: Outcome;
  field: string;
  type?: string;
  autoComplete?: string;
  /** Marked in the label and for assistive technology; the API's 422 still decides. */
  required?: boolean | undefined;
}) {
  const invalid = outcome.field === field;
  return (
    <InputField
      id={id}
      label={required ? `${label} (required)` : label}
      aria-required={required || undefined}
      type={type}
      autoComplete={autoComplete ?? (type === 'password' ? 'off' : undefined)}
      value={value}
      onChange={onChange}
      aria-invalid={invalid}
      aria-describedby={invalid ? `${id}-error` : undefined}
    >
      {invalid && (
        <span id={`${id}-error`} className="error" role="alert">
          {outcome.fieldError ?? outcome.error}
        </span>
      )}
    </InputField>
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

/** The [id, text] options of a {@link SelectField} over a loaded list of records (none until it loads). */
export const choicesOf = <T extends { id: number }>(
  load: { data?: { data: readonly T[] } },
  text: (record: T) => string,
): [number, string][] => (load.data?.data ?? []).map((r) => [r.id, text(r)]);

/** A labelled select; `options` are [value, text] pairs, an `all` text adds a first empty choice. */
export function SelectField({
  id,
  label,
  value,
  onChange,
  options,
  all,
  outcome,
  field,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  options: [string | number, string][];
  all?: string;
  outcome?: Outcome;
  field?: string;
}) {
  return (
    <FieldRow id={id} label={label}>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {all !== undefined && <option value="">{all}</option>}
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
      {field && outcome?.field === field && (
        <span id={`${id}-error`} className="error" role="alert">
          {outcome.fieldError ?? outcome.error}
        </span>
      )}
    </FieldRow>
  );
}

/** A secret the server shows once (token, signing secret): copy it now, then Done hides it for good. */
export function SecretOnce({
  secret,
  testId,
  copyLabel = 'Copy',
  onDone,
  children,
}: {
  secret: string;
  testId: string;
  copyLabel?: string;
  onDone: () => void;
  children: ReactNode;
}) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(secret);
    setCopied(true);
  };
  return (
    <div className="notice" role="status">
      <p>{children}</p>
      <code className="secret" data-testid={testId}>
        {secret}
      </code>
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : copyLabel}
      </button>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

/** A secret just issued and why ("created", "rotated"), held until its {@link IssuedSecret} notice is done. */
export function useIssued() {
  const [issued, setIssued] = useState<{ secret: string; why: string } | null>(null);
  return {
    issued,
    issue: (secret: string, why: string) => setIssued({ secret, why }),
    done: () => setIssued(null),
  };
}

/** The {@link SecretOnce} notice of a {@link useIssued} secret while there is one; `text` says what it is. */
export function IssuedSecret({
  state,
  testId,
  copyLabel,
  text,
}: {
  state: ReturnType<typeof useIssued>;
  testId: string;
  copyLabel: string;
  text: (why: string) => ReactNode;
}) {
  const { issued, done } = state;
  if (!issued) return null;
  return (
    <SecretOnce secret={issued.secret} testId={testId} copyLabel={copyLabel} onDone={done}>
      {text(issued.why)}
    </SecretOnce>
  );
}

/** A list of buttons, one per item, the current one pressed (the left column of a master–detail screen). */
export function PickList<T>({
  items,
  itemKey,
  current,
  onPick,
  children,
  label,
  className = 'picklist',
}: {
  items: readonly T[] | undefined;
  itemKey: (item: T) => string | number;
  current: string | number | null | undefined;
  onPick: (item: T) => void;
  children: (item: T) => ReactNode;
  label?: string;
  className?: string;
}) {
  return (
    <ul className={className} aria-label={label}>
      {items?.map((item) => (
        <li key={itemKey(item)}>
          <button type="button" aria-pressed={itemKey(item) === current} onClick={() => onPick(item)}>
            {children(item)}
          </button>
        </li>
      ))}
    </ul>
  );
}
