import { checkHealthBody, type HealthResponse } from '../../../packages/adserver-kit/src/schemas.ts';
import type { Outcome } from '../../lib/outbound.ts';
import type { ProbeState } from './types.ts';

export interface HealthVerdict {
  state: Exclude<ProbeState, 'unverified'>;
  /** Operator-facing reason (already redacted by the outbound client); null when connected. */
  message: string | null;
  account?: HealthResponse;
}

/**
 * Classifies a `GET /health` outcome exactly as the contract's table: 401 → auth_error,
 * 403 → forbidden, any other non-200 or no answer at all → unreachable, a 200 breaking the
 * field rules → invalid_response.
 */
export function classifyHealth(o: Outcome): HealthVerdict {
  switch (o.kind) {
    case 'http_status':
      if (o.status === 401) return { state: 'auth_error', message: o.message };
      if (o.status === 403) return { state: 'forbidden', message: o.message };
      return { state: 'unreachable', message: o.message };
    case 'invalid_json':
      return { state: o.status === 200 ? 'invalid_response' : 'unreachable', message: o.message };
    case 'ok': {
      if (o.status !== 200)
        return { state: 'unreachable', message: `GET /health: HTTP ${o.status}, expected 200` };
      const problems = checkHealthBody(o.json);
      if (problems.length)
        return { state: 'invalid_response', message: `GET /health: ${problems.join('; ')}` };
      return { state: 'connected', message: null, account: o.json as HealthResponse };
    }
    default:
      return { state: 'unreachable', message: o.message };
  }
}

/** True when the `GET /inventory?limit=1` probe confirms `inventory_read` (a 200 with a `data` array). */
export function confirmsInventory(o: Outcome): boolean {
  return o.kind === 'ok' && o.status === 200 && Array.isArray((o.json as { data?: unknown } | null)?.data);
}
