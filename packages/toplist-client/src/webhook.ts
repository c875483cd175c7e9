/**
 * Verifying Podium's change webhooks (Standard Webhooks): `webhook-signature` holds one or more
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed with the base64
 * bytes after `whsec_`. Web Crypto only, so it runs in Node 20+, edge runtimes, Deno and Bun.
 */
import { PodiumError } from './errors.ts';

/** The events Podium sends, and the test event of `POST /webhooks/{id}/test`. */
export type WebhookEventType =
  | 'toplist.published'
  | 'toplist.unpublished'
  | 'toplist.window_opened'
  | 'toplist.window_closed'
  | 'webhook.test';

/** A verified webhook body. It names the toplist; re-fetch it (with your ETag) to get its content. */
export interface WebhookEvent {
  type: WebhookEventType;
  /** When the change happened, ISO 8601 with UTC offset. */
  timestamp: string;
  data: {
    toplistId?: number;
    siteId: number | null;
    slug?: string;
    templateId?: number;
    geo?: { geo_type: string; code: string };
    version?: string | null;
    liveFrom?: string | null;
    liveUntil?: string | null;
    /** Only on `webhook.test`. */
    endpointId?: string;
  };
}

export type WebhookErrorCode =
  | 'webhook_headers_missing'
  | 'webhook_timestamp_out_of_range'
  | 'webhook_signature_mismatch'
  | 'webhook_invalid_secret'
  | 'webhook_invalid_body';

/** A webhook that must not be trusted (refuse it with a 400 or 401). */
export class PodiumWebhookError extends PodiumError {
  override name = 'PodiumWebhookError';
}

export interface VerifyOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, in seconds (replay window). Default 300. */
  toleranceSeconds?: number;
  /** The current time in milliseconds (tests). */
  now?: number;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : bag[key];
  return Array.isArray(v) ? v.join(' ') : v;
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const b64 = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  try {
    const raw = atob(b64);
    if (!raw.length) throw new Error('empty');
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  } catch {
    throw new PodiumWebhookError('webhook_invalid_secret', 'the secret is not whsec_ followed by base64');
  }
}

function toBase64(bytes: ArrayBuffer): string {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s);
}

/** Equality whose time does not depend on where the strings differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks a webhook request and returns its parsed body. Pass the raw body exactly as received (not
 * a re-serialised object) and the request headers. `secret` may be a list: during a rotation's
 * grace period Podium signs with both the old and the new secret, so either verifies.
 * Throws `PodiumWebhookError` when a header is missing, the timestamp is outside the tolerance
 * (replays), or no signature matches.
 */
export async function verifyWebhook(
  secret: string | readonly string[],
  headers: HeaderBag,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new PodiumWebhookError(
      'webhook_headers_missing',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (!/^[0-9]{1,12}$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > tolerance)
    throw new PodiumWebhookError(
      'webhook_timestamp_out_of_range',
      `webhook-timestamp is more than ${tolerance} s away from now`,
    );
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  const offered = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const key = await crypto.subtle.importKey(
      'raw',
      secretBytes(s),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const expected = toBase64(await crypto.subtle.sign('HMAC', key, signed));
    if (offered.some((o) => sameText(o, expected))) {
      try {
        return JSON.parse(text) as WebhookEvent;
      } catch {
        throw new PodiumWebhookError('webhook_invalid_body', 'the signed body is not JSON');
      }
    }
  }
  throw new PodiumWebhookError('webhook_signature_mismatch', 'no webhook-signature matches the secret');
}
