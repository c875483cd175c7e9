/**
 * Podium toplist API client: typed toplists, whole-family fetch, the visitor geo cascade and exact
 * decimals. No runtime dependencies; needs only a global `fetch`.
 *
 * @example
 * const podium = createClient({ baseUrl: 'https://podium.example', token: process.env.PODIUM_TOKEN! });
 * const family = await podium.family(42);
 * const pick = pickForVisitor(family, request.headers.get('cf-ipcountry'));
 * // or one request per page view, picked by the server:
 * const toplist = await podium.resolve(42, request.headers.get('cf-ipcountry'));
 */
export { type CachedResponse, memoryCache, type ResponseCache } from './cache.ts';
export {
  type CallOptions,
  type ClientOptions,
  createClient,
  type ListParams,
  type ToplistClient,
  type WalkOptions,
} from './client.ts';
export {
  compareDecimals,
  DECIMAL_FIELDS,
  type DecimalField,
  formatHundredths,
  offerDecimals,
  sumDecimals,
  toHundredths,
  toHundredthsOrNull,
} from './decimal.ts';
export {
  type ClientErrorCode,
  PodiumApiError,
  PodiumError,
  PodiumTransportError,
  PodiumWalkError,
} from './errors.ts';
export { COUNTRY_CODES, normalizeCountry, pickForVisitor, type VisitorPick } from './geo.ts';
export { parseRetryAfter, type RetryInfo } from './transport.ts';
export type * from './types.ts';
export {
  PodiumWebhookError,
  type VerifyOptions,
  verifyWebhook,
  type WebhookErrorCode,
  type WebhookEvent,
  type WebhookEventType,
} from './webhook.ts';
