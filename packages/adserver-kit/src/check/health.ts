import { checkHealthBody } from '../schemas.ts';
import type { HttpResult } from './http.ts';

/** What the marketplace makes of a `/health` answer (spec: "Connection states shown for a failed GET /health"). */
export type HealthState = 'connected' | 'auth_error' | 'forbidden' | 'unreachable' | 'invalid_response';

/** Classifies a `/health` answer (or `null` for no answer) exactly like the marketplace. */
export function classifyHealth(res: HttpResult | null): { state: HealthState; problems: string[] } {
  if (!res) return { state: 'unreachable', problems: ['no answer'] };
  if (res.status === 401) return { state: 'auth_error', problems: ['HTTP 401'] };
  if (res.status === 403) return { state: 'forbidden', problems: ['HTTP 403'] };
  if (res.status !== 200) {
    const hint = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
    return { state: 'unreachable', problems: [`HTTP ${res.status}${hint}`] };
  }
  const problems = res.json === undefined ? ['body is not JSON'] : checkHealthBody(res.json);
  return problems.length ? { state: 'invalid_response', problems } : { state: 'connected', problems: [] };
}
