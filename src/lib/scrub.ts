/**
 * Value-based secret scrubbing for log lines, error messages and stored error text. Patterns
 * catch Podium's own token formats, bearer credentials and passwords in URLs; `registerSecret`
 * adds exact values (API keys, configured passwords) that have no recognisable shape.
 */
const PATTERNS: [RegExp, string][] = [
  [/\b(pd[sap])_[A-Za-z0-9_-]{16,}/g, '$1_[redacted]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [redacted]'],
  [/(\/\/[^/\s:@]+:)[^@\s/]+@/g, '$1[redacted]@'],
];

/** Every pattern above needs one of these; text without any (most log values) skips the replacing. */
const MAY_HOLD_SECRET = /pd[sap]_|bearer|basic|@/i;

const secrets = new Set<string>();

/** Registers an exact secret value to scrub wherever it appears (values under 6 characters are ignored). */
export function registerSecret(value: string | undefined | null): void {
  if (value && value.length >= 6) secrets.add(value);
}

/** Forgets registered values (tests). */
export function clearSecrets(): void {
  secrets.clear();
}

/** Returns `text` with every known secret replaced by `[redacted]`. */
export function scrub(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
  if (!MAY_HOLD_SECRET.test(out)) return out;
  for (const [re, by] of PATTERNS) out = out.replace(re, by);
  return out;
}

/** Deep copy of a log object with every string scrubbed (bounded depth; cycles cut). */
export function scrubValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1, seen));
  if (value instanceof Error) {
    return { type: value.name, message: scrub(value.message), stack: value.stack && scrub(value.stack) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v, depth + 1, seen);
  return out;
}
