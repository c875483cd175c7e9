import { type FormEvent, type ReactNode, useState } from 'react';
import { api } from './api.ts';
import { capitalized, Field, failure, InputField, type Outcome, OutcomeLine, SelectField } from './ui.tsx';

/** The state of a screen's actions (save, revoke, replay…): the last outcome and a busy flag. */
export function useAction(
  /** Reshapes an error before it shows (e.g. `sizes.1` belongs to the one sizes field). */
  reshape: (o: Outcome) => Outcome = (o) => o,
) {
  const [outcome, setOutcome] = useState<Outcome>({});
  const [busy, setBusy] = useState(false);
  /**
   * Runs an action: its error shows (beside its field when named), the text it returns is the
   * success line. Resolves to whether it succeeded, for what must follow only a success.
   */
  const run = async (action: () => Promise<string | undefined>) => {
    setBusy(true);
    try {
      const ok = await action();
      setOutcome(ok ? { ok } : {});
      return true;
    } catch (err) {
      setOutcome(reshape(failure(err)));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { outcome, setOutcome, busy, run };
}

/** Form state every screen shares: the values, a setter per key, and the {@link useAction} state. */
export function useForm<T extends Record<string, string>>(
  initial: T | (() => T),
  reshape?: (o: Outcome) => Outcome,
) {
  const [f, setF] = useState<T>(initial);
  const set = (k: keyof T) => (v: string) => setF((prev) => ({ ...prev, [k]: v }));
  return { f, setF, set, ...useAction(reshape) };
}

/**
 * One field of a {@link FormCard} or a filter row: the value key, its label, and the API field
 * its 422 names; a text input, or a select when it has `options`.
 */
export interface FieldSpec<K extends string> {
  key: K;
  id: string;
  label: string;
  /** The API's `details.field`; the key when absent. */
  field?: string;
  type?: string;
  /** The choices of a select, as [value, text] pairs. */
  options?: [string | number, string][];
  /** A select's first, empty choice ("All sites"). */
  all?: string;
  /** The API refuses the record without it: the label says so before a save is tried. */
  required?: boolean;
}

/** The API fields a list of specs shows errors for. */
export const shownOf = (specs: readonly FieldSpec<string>[]) => specs.map((s) => s.field ?? s.key);

/** The labelled inputs and selects over one record of values, each with its 422 message below it. */
export function Fields<T extends Record<string, string>>({
  specs,
  f,
  set,
  outcome = {},
}: {
  specs: readonly FieldSpec<Extract<keyof T, string>>[];
  f: T;
  set: (k: keyof T) => (v: string) => void;
  outcome?: Outcome;
}) {
  return (
    <>
      {specs.map((s) => {
        const common = {
          id: s.id,
          label: s.label,
          value: f[s.key] ?? '',
          onChange: set(s.key),
          outcome,
          field: s.field ?? s.key,
        };
        return s.options ? (
          <SelectField key={s.id} {...common} options={s.options} all={s.all} />
        ) : (
          <Field key={s.id} {...common} type={s.type} required={s.required} />
        );
      })}
    </>
  );
}

/** The record a {@link FormCard} creates or edits: `unit` names it ("site"), `name` is the edited one's (none when new). */
export interface FormRecord {
  unit: string;
  name?: string;
}

/** A record form's heading id, title and button: "New site", "Create site"; or "Site: x", "Save site". */
const namesOf = ({ unit, name }: FormRecord) =>
  name === undefined
    ? { id: `new-${unit.replaceAll(' ', '-')}`, title: `New ${unit}`, submit: `Create ${unit}` }
    : { title: `${capitalized(unit)}: ${name}`, submit: `Save ${unit}` };

/** Where a record form saves: the records' `path`, the one it edits (none when new), who takes the saved one. */
export interface RecordTarget<T> {
  unit: string;
  path: string;
  record: T | undefined;
  onSaved: (saved: T) => void;
}

/**
 * Saves a record form: PATCH `path/<id>` with `body` when it edits a record, else POST `path` with
 * `body` and `created` (what only a new record takes). Resolves to the line that says which it did.
 */
export async function saveRecord<T extends { id: number; name: string }>(
  { unit, path, record, onSaved }: RecordTarget<T>,
  body: object,
  created: object,
) {
  const r = record
    ? await api<{ data: T }>('PATCH', `${path}/${record.id}`, body)
    : await api<{ data: T }>('POST', path, { ...created, ...body });
  onSaved(r.data);
  return record ? `${capitalized(unit)} saved.` : `${capitalized(unit)} ${r.data.name} created.`;
}

/** The console's one form: heading, fields (in a grid), the outcome line unless a field shows it, and submit. */
export function FormCard<T extends Record<string, string>>({
  record,
  form,
  specs = [],
  id,
  title,
  heading = 'h2',
  outcome = form?.outcome ?? {},
  shown = [],
  onSubmit,
  submit,
  busy = form?.busy,
  busyText,
  children,
  footer,
  label,
  grid = true,
  className = 'card',
  primary = false,
  disabled = false,
  actions,
}: {
  /** What the form creates or edits, which names its heading, heading id and button unless they are given. */
  record?: FormRecord;
  /** The heading's id, which labels the form. */
  id?: string;
  title?: ReactNode;
  heading?: 'h2' | 'h3' | 'h4';
  /** The {@link useForm} state: its outcome and busy flag, and the values of `specs`. */
  form?: ReturnType<typeof useForm<T>>;
  /** Text inputs shown first (then `children`); their fields show their own errors. */
  specs?: readonly FieldSpec<Extract<keyof T, string>>[];
  outcome?: Outcome;
  /** Fields that show their own error (so the line below does not repeat it). */
  shown?: readonly string[];
  onSubmit: () => unknown;
  submit?: ReactNode;
  busy?: boolean;
  busyText?: string;
  children?: ReactNode;
  /** Content between the fields and the outcome line (notes, extra buttons). */
  footer?: ReactNode;
  label?: string;
  grid?: boolean;
  className?: string;
  primary?: boolean;
  disabled?: boolean;
  /** More buttons beside submit. */
  actions?: ReactNode;
}) {
  const H = heading;
  const named = record && namesOf(record);
  const headingId = id ?? named?.id;
  const headingText = title ?? named?.title;
  const go = (e: FormEvent) => {
    e.preventDefault();
    void onSubmit();
  };
  return (
    <form
      onSubmit={go}
      className={className || undefined}
      aria-labelledby={headingText ? headingId : undefined}
      aria-label={headingText ? undefined : label}
      noValidate
    >
      {headingText && <H id={headingId}>{headingText}</H>}
      {grid ? (
        <div className="grid">
          {form && <Fields specs={specs} {...form} />}
          {children}
        </div>
      ) : (
        <>
          {form && <Fields specs={specs} {...form} />}
          {children}
        </>
      )}
      {footer}
      <OutcomeLine outcome={outcome} shown={[...shownOf(specs), ...shown]} />
      <div className="row">
        <button type="submit" className={primary ? 'primary' : undefined} disabled={busy || disabled}>
          {busy && busyText ? busyText : (submit ?? named?.submit)}
        </button>
        {actions}
      </div>
    </form>
  );
}

/** A from–to pair of day inputs (each bounds the other), as the range filters of lists and reports use. */
export function DateRange({
  id,
  from,
  to,
  onChange,
}: {
  id: string;
  from: string;
  to: string;
  onChange: (range: { from: string; to: string }) => void;
}) {
  const ends = [
    { end: 'from', label: 'From', bound: { max: to } },
    { end: 'to', label: 'To', bound: { min: from } },
  ] as const;
  return (
    <>
      {ends.map(({ end, label, bound }) => (
        <InputField
          key={end}
          id={`${id}-${end}`}
          label={label}
          type="date"
          value={end === 'from' ? from : to}
          {...bound}
          onChange={(v) => onChange({ from, to, [end]: v })}
        />
      ))}
    </>
  );
}
