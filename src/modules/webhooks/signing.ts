import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Prefix of a webhook signing secret (Standard Webhooks): `whsec_` + base64 of 32 random bytes. */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret, shown once to the admin and stored only sealed. */
export function mintSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The displayable head of a secret (`whsec_AbCd…`). */
export function secretHint(secret: string): string {
  return `${secret.slice(0, SECRET_PREFIX.length + 4)}…`;
}

/**
 * The Standard Webhooks headers of one message: `webhook-id`, `webhook-timestamp` (Unix seconds)
 * and `webhook-signature`, one `v1,<base64 HMAC-SHA256>` per secret, space-separated, so a
 * receiver holding either the new or the previous secret verifies during a rotation's grace period.
 */
export function signatureHeaders(
  msgId: string,
  at: Date,
  payload: string,
  secrets: readonly string[],
): Record<string, string> {
  // The spec signs whole seconds; the library would sign the milliseconds it is given.
  const seconds = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(seconds.getTime() / 1000),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(msgId, seconds, payload)).join(' '),
  };
}
