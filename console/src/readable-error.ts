/** API error messages as a person reads them in the console. */

/** `liveUntil` → `live until`, `base_url` → `base url`, `items.2.brandId` → `items 2 brand id`. */
export const fieldWords = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[._]/g, ' ')
    .toLowerCase();

/**
 * The API's `field: message` in words a person reads (the API names fields as its wire does):
 * the field's name in words before the message, and without it beside the field itself; other
 * camelCase field names in the message turned into words too.
 */
export function readableError(message: string, field?: string): { line: string; beside: string } {
  // The API's own checks say `field: message`, its schema validation `field message`.
  const sep = field && [': ', ' '].find((s) => message.startsWith(`${field}${s}`));
  const prefix = sep ? field : undefined;
  const rest = (prefix && sep ? message.slice(prefix.length + sep.length) : message)
    .replace(/\b[a-z]+(?:[A-Z][a-z0-9]*)+\b/g, fieldWords)
    .replace(/^must match format "date"$/, 'must be a date (YYYY-MM-DD)')
    .replace(/^must match format "date-time"$/, 'must be a date and time')
    .replace(/^must match format "uri"$/, 'must be a full URL (https://…)')
    .replace(/^must match pattern ".*"$/, 'is not in the expected form');
  if (!prefix) return { line: rest, beside: rest };
  const words = fieldWords(prefix);
  return { line: `${words[0]!.toUpperCase()}${words.slice(1)}: ${rest}`, beside: rest };
}
