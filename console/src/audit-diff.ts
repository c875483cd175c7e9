import { fieldWords } from './readable-error.ts';

/** One field of an audit row's before/after that differs: its label in words and both values. */
export interface FieldChange {
  field: string;
  before: string;
  after: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value as one cell reads it: "—" for nothing, a list joined by commas, nested records as JSON. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined || v === '') return '—';
  if (Array.isArray(v)) {
    if (v.length === 0) return '—';
    return v.every((x) => typeof x !== 'object' || x === null)
      ? v.map(cellText).join(', ')
      : JSON.stringify(v);
  }
  if (isRecord(v)) return Object.keys(v).length ? JSON.stringify(v) : '—';
  return String(v);
}

/** Leaves of a record by dotted path: nested records are walked, anything else is a leaf. */
function leaves(v: unknown, path: string, out: Map<string, unknown>): void {
  if (isRecord(v) && (path === '' || Object.keys(v).length > 0)) {
    for (const [k, child] of Object.entries(v)) leaves(child, path ? `${path}.${k}` : k, out);
  } else if (path !== '') out.set(path, v);
}

/**
 * What changed between an audit row's `before` and `after`, field by field in the order the
 * fields come (before's, then after's new ones); fields equal on both sides are left out. A side
 * that is not a record (null for a creation or deletion) counts as having no fields.
 */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  const b = new Map<string, unknown>();
  const a = new Map<string, unknown>();
  leaves(isRecord(before) ? before : {}, '', b);
  leaves(isRecord(after) ? after : {}, '', a);
  const paths = [...new Set([...b.keys(), ...a.keys()])];
  return paths
    .map((p) => ({ field: label(p), before: cellText(b.get(p)), after: cellText(a.get(p)) }))
    .filter((c) => c.before !== c.after);
}

/** `liveVersion` → "Live version", `after.twoFactor` → "After › two factor". */
function label(path: string): string {
  const words = path.split('.').map(fieldWords).join(' › ');
  return `${words[0]?.toUpperCase() ?? ''}${words.slice(1)}`;
}
