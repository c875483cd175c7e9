/**
 * Exact arithmetic for the API's decimal strings (`"200.00"`, `"1.85"`). Values become BigInt
 * hundredths and back through string handling only: no `parseFloat`, no `Number`, so
 * `"0.10" + "0.20"` is exactly `"0.30"` and amounts beyond 2^53 stay exact.
 */
import type { Offer } from './types.ts';

const DECIMAL = /^(-?)([0-9]+)(?:\.([0-9]{1,2}))?$/;
const MAX_DIGITS = 40;

/** The offer fields that carry a decimal string or null. */
export const DECIMAL_FIELDS = [
  'max_bonus_amount',
  'max_payout',
  'minimum_odds',
  'free_bet_value',
  'tournament_ticket_value',
  'rakeback_percentage',
] as const satisfies readonly (keyof Offer)[];

export type DecimalField = (typeof DECIMAL_FIELDS)[number];

/**
 * A decimal string as BigInt hundredths: `"12.50"` → `1250n`, `"1.85"` → `185n`, `"7"` → `700n`.
 * Accepts up to two decimals and an optional minus sign; throws a `RangeError` on anything else.
 */
export function toHundredths(value: string): bigint {
  const m = typeof value === 'string' && value.length <= MAX_DIGITS ? DECIMAL.exec(value) : null;
  if (!m) throw new RangeError(`not a decimal with at most two decimals: ${JSON.stringify(value)}`);
  const hundredths = BigInt(m[2]!) * 100n + BigInt((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -hundredths : hundredths;
}

/** `toHundredths` that passes null through, for the nullable offer fields. */
export function toHundredthsOrNull(value: string | null): bigint | null {
  return value === null ? null : toHundredths(value);
}

/** BigInt hundredths back to the wire form with two decimals: `1250n` → `"12.50"`. */
export function formatHundredths(hundredths: bigint): string {
  const negative = hundredths < 0n;
  const abs = negative ? -hundredths : hundredths;
  const units = abs / 100n;
  const rest = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}${units}.${rest}`;
}

/** Orders two decimal strings exactly: -1, 0 or 1 (usable as a sort comparator). */
export function compareDecimals(a: string, b: string): -1 | 0 | 1 {
  const x = toHundredths(a);
  const y = toHundredths(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Exact sum of decimal strings, in the wire form: `sumDecimals(["0.10", "0.20"])` → `"0.30"`. */
export function sumDecimals(values: readonly string[]): string {
  return formatHundredths(values.reduce((acc, v) => acc + toHundredths(v), 0n));
}

/** Every decimal field of an offer as BigInt hundredths (null stays null). */
export function offerDecimals(offer: Pick<Offer, DecimalField>): Record<DecimalField, bigint | null> {
  const out = {} as Record<DecimalField, bigint | null>;
  for (const field of DECIMAL_FIELDS) out[field] = toHundredthsOrNull(offer[field]);
  return out;
}
