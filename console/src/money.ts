/** Money and changes as the console shows them. */

/** Exact decimal strings per currency code, as the stats API answers them. */
export type Money = Record<string, string | null>;

/**
 * An amount in its currency's own decimals (two for EUR, none for JPY), in the browser's locale.
 * The API's string is formatted as a decimal, never through a float, so large sums stay exact.
 */
export function formatMoney(amount: string, currency: string, locale?: string): string {
  try {
    const format = new Intl.NumberFormat(locale, { style: 'currency', currency });
    // Intl formats a numeric string exactly (ECMA-402 NumberFormat v3); the cast is its typing.
    return format.format(amount as unknown as number);
  } catch {
    return `${amount} ${currency}`;
  }
}

/** Every currency of `m` formatted, in currency-code order; `—` when there is none. */
export function moneyText(m: Money | undefined, locale?: string): string {
  const parts = Object.entries(m ?? {})
    .filter((e): e is [string, string] => e[1] !== null)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([c, v]) => formatMoney(v, c, locale));
  return parts.length ? parts.join(' · ') : '—';
}

/** The amounts of `m` that exist: an EPC has none for a currency without clicks to divide by. */
export function knownMoney(m: Money): Record<string, string> {
  return Object.fromEntries(Object.entries(m).filter((e): e is [string, string] => e[1] !== null));
}

export interface Change {
  /** `up`, `down`, `same`, or `new` when the previous period had none. */
  dir: 'up' | 'down' | 'same' | 'new';
  text: string;
}

/** The change from `before` to `now` in percent, one decimal below 10 %; null when both are zero. */
export function changeOf(now: number, before: number): Change | null {
  if (now === 0 && before === 0) return null;
  if (before === 0) return { dir: 'new', text: 'new' };
  const pct = ((now - before) / Math.abs(before)) * 100;
  if (Math.abs(pct) < 0.05) return { dir: 'same', text: '±0 %' };
  const abs = Math.abs(pct);
  const shown = abs < 10 ? abs.toFixed(1) : abs.toFixed(0);
  return pct > 0 ? { dir: 'up', text: `▲ ${shown} %` } : { dir: 'down', text: `▼ ${shown} %` };
}
