/**
 * Text PostgreSQL cannot store. `text` and `jsonb` refuse U+0000, and `jsonb` refuses an
 * unpaired UTF-16 surrogate (`"\ud800"`), which the driver would otherwise turn into U+FFFD in
 * `text` columns silently. Every value bound to a statement is checked here (src/db), and
 * request input is checked while it is validated, so the client hears which field it was.
 */

const NUL = '\u0000';

/** Whether one string can be stored as it is. */
export function isStorableText(s: string): boolean {
  return !s.includes(NUL) && s.isWellFormed();
}

/** The same text with NUL and unpaired surrogates replaced by U+FFFD (for logs of raw input). */
export function storableText(s: string): string {
  return s.replaceAll(NUL, '\uFFFD').toWellFormed();
}

/** Deepest nesting checked; anything deeper is refused rather than walked (no stack exhaustion). */
export const MAX_DEPTH = 64;

export interface Unstorable {
  /** Where it is: `['items', '2', 'name']`. */
  path: string[];
  /** What is wrong, for a message such as `items.2.name <problem>`. */
  problem: string;
}

/** What a refused text field is told. */
export const UNSTORABLE_TEXT = 'must not contain NUL characters (U+0000) or unpaired UTF-16 surrogates';

/**
 * The first string or object key in `value` that cannot be stored, or undefined when all can.
 * Buffers and dates are not text.
 */
export function findUnstorable(value: unknown, path: string[] = []): Unstorable | undefined {
  // Nearly every value is fine: check that without building paths, walk again only to name the culprit.
  if (path.length === 0 && allStorable(value, 0)) return undefined;
  if (typeof value === 'string')
    return isStorableText(value) ? undefined : { path, problem: UNSTORABLE_TEXT };
  if (value === null || typeof value !== 'object' || value instanceof Date || Buffer.isBuffer(value))
    return undefined;
  if (path.length >= MAX_DEPTH) return { path, problem: `is nested more than ${MAX_DEPTH} levels deep` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorable(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    if (!isStorableText(k)) return { path: [...path, storableText(k)], problem: UNSTORABLE_TEXT };
    const found = findUnstorable(v, [...path, k]);
    if (found) return found;
  }
  return undefined;
}

/** Whether every string and key in `value` can be stored, within MAX_DEPTH; allocates nothing. */
function allStorable(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (value === null || typeof value !== 'object' || value instanceof Date || Buffer.isBuffer(value))
    return true;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const v of value) if (!allStorable(v, depth + 1)) return false;
    return true;
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (!isStorableText(k) || !allStorable((value as Record<string, unknown>)[k], depth + 1)) return false;
  }
  return true;
}

/** Printable text: no control or format characters, no unpaired surrogates (any script is fine). */
export const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Cs}]+$/u;

/** The longest player id a postback may carry. */
export const MAX_PLAYER_ID = 128;

/** Whether a (trimmed) player id is one a postback may carry: 1 to 128 printable characters. */
export function isPlayerId(v: string): boolean {
  return v.length > 0 && v.length <= MAX_PLAYER_ID && PRINTABLE.test(v);
}
