import { registerSecret, scrub } from './scrub.ts';

/** Longest error text kept (stored `last_error`, messages shown to operators). */
export const MAX_ERROR_TEXT = 500;

/** The forms a secret can take when a server echoes it back (raw, URL-encoded, JSON-escaped, base64). */
function variants(secret: string): string[] {
  const out = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  out.add(Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, ''));
  return [...out].filter((v) => v.length >= 6);
}

/**
 * Registers an outbound credential with the process-wide scrubber (so every log line loses it)
 * in each form a server might echo it in.
 */
export function protectSecret(secret: string): void {
  for (const v of variants(secret)) registerSecret(v);
}

/** `text` without `secrets` (in any echoed form) or known credential shapes, cut to `max` characters. */
export function redact(text: string, secrets: readonly string[] = [], max = MAX_ERROR_TEXT): string {
  let out = text;
  for (const s of secrets) for (const v of variants(s)) out = out.split(v).join('[redacted]');
  out = scrub(out);
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}
