import type { Outcome } from '../../lib/outbound.ts';

export interface ForecastResult {
  inventory_id: string;
  /** The ad server's figures; null when there is no forecast for this slot (booking still proceeds). */
  forecast: { available_impressions: number; forecasted_impressions: number } | null;
  /** Why there is no forecast: disabled by /health, unsupported for the slot, or a failed call. */
  reason:
    | null
    | 'forecast_disabled'
    | 'forecast_unsupported'
    | 'invalid_response'
    | 'not_found'
    | 'unavailable';
  message: string | null;
}

const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Reads a `POST /forecast` outcome: 501 forecast_unsupported → no forecast; figures must keep the invariants. */
export function readForecast(o: Outcome, inventoryId: string): ForecastResult {
  const none = (reason: ForecastResult['reason'], message: string): ForecastResult => ({
    inventory_id: inventoryId,
    forecast: null,
    reason,
    message,
  });
  if (o.kind === 'http_status') {
    const code = (o.json as { code?: unknown } | undefined)?.code;
    if (o.status === 501 && code === 'forecast_unsupported')
      return none('forecast_unsupported', 'No forecast for this slot');
    if (o.status === 404) return none('not_found', o.message);
    return none('unavailable', o.message);
  }
  if (o.kind !== 'ok') return none(o.kind === 'invalid_json' ? 'invalid_response' : 'unavailable', o.message);
  const b = o.json as Record<string, unknown> | null;
  const problems: string[] = [];
  if (!b || typeof b !== 'object') problems.push('body is not an object');
  else {
    if (b.inventory_id !== inventoryId) problems.push('inventory_id is not the one asked for');
    if (!count(b.available_impressions)) problems.push('available_impressions is not a non-negative integer');
    if (!count(b.forecasted_impressions))
      problems.push('forecasted_impressions is not a non-negative integer');
    if (
      count(b.available_impressions) &&
      count(b.forecasted_impressions) &&
      b.available_impressions > b.forecasted_impressions
    )
      problems.push('available_impressions exceeds forecasted_impressions');
    if (b.unit_type !== undefined && b.unit_type !== 'IMPRESSIONS')
      problems.push(`unit_type ${JSON.stringify(b.unit_type)} is not IMPRESSIONS`);
  }
  if (problems.length) return none('invalid_response', `POST /forecast: ${problems.join('; ')}`);
  return {
    inventory_id: inventoryId,
    forecast: {
      available_impressions: b!.available_impressions as number,
      forecasted_impressions: b!.forecasted_impressions as number,
    },
    reason: null,
    message: null,
  };
}
