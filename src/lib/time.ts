/** ISO 8601 in UTC with an explicit `+00:00` offset and second precision: `2026-11-23T06:55:01+00:00`. */
export function wireTimestamp(d: Date | string): string {
  const date = typeof d === 'string' ? new Date(d) : d;
  return `${date.toISOString().slice(0, 19)}+00:00`;
}
