import type { OutboundClient } from '../../lib/outbound.ts';
import type { Sealer } from '../../lib/seal.ts';
import type { ClaimedDelivery } from './repository.ts';
import { signatureHeaders } from './signing.ts';

export interface SendResult {
  succeeded: boolean;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}

const USER_AGENT = 'Podium-Webhooks/1';
/** Longest receiver error kept in the log. */
const MAX_ERROR = 500;

/**
 * Sends one delivery: the stored payload bytes, signed with the endpoint's secret (and the
 * previous one while its grace period runs), through the SSRF-guarded outbound client. Any 2xx
 * is a success whatever the body; a redirect, another status or no answer is a failure.
 */
export async function sendDelivery(
  http: OutboundClient,
  sealer: Sealer,
  d: ClaimedDelivery,
  now: Date,
  signal?: AbortSignal,
): Promise<SendResult> {
  const e = d.endpoint;
  const secrets = [sealer.open(e.secretSealed, e.id)];
  if (
    e.previousSecretSealed &&
    e.previousSecretExpiresAt &&
    Date.parse(e.previousSecretExpiresAt) > now.getTime()
  )
    secrets.push(sealer.open(e.previousSecretSealed, e.id));
  const started = performance.now();
  const outcome = await http.send({
    method: 'POST',
    baseUrl: e.url,
    path: '',
    body: d.payload,
    headers: { ...signatureHeaders(d.id, now, d.payload, secrets), 'user-agent': USER_AGENT },
    target: 'webhook',
    signal,
  });
  const latencyMs = Math.round(performance.now() - started);
  const status = 'status' in outcome ? outcome.status : null;
  // Receivers owe us no JSON: a 2xx with any body (or none) is accepted.
  if (outcome.kind === 'ok' || (outcome.kind === 'invalid_json' && status !== null && status < 300))
    return { succeeded: true, httpStatus: status, latencyMs, error: null };
  // The client prefixes "METHOD path:"; a webhook has no path of its own, so the prefix says nothing.
  const error = outcome.message.replace(/^POST\s*:\s*/, '').slice(0, MAX_ERROR);
  return { succeeded: false, httpStatus: status, latencyMs, error };
}
