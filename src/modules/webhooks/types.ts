/** Changes of a toplist, told to its site's endpoints. */
export const TOPLIST_EVENTS = [
  'toplist.published',
  'toplist.unpublished',
  'toplist.window_opened',
  'toplist.window_closed',
  'toplist.compliance_changed',
] as const;

/** What became of a marketplace reservation, told to the endpoints of the sites it books. */
export const RESERVATION_EVENTS = [
  'reservation.booked',
  'reservation.rejected',
  'reservation.expired',
] as const;

/** Change events a webhook endpoint can subscribe to. */
export const WEBHOOK_EVENTS = [...TOPLIST_EVENTS, ...RESERVATION_EVENTS] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];
export type ToplistEventType = (typeof TOPLIST_EVENTS)[number];
export type ReservationEventType = (typeof RESERVATION_EVENTS)[number];

/** One event for the endpoints of one site (null: only the endpoints of every site), recorded once per `key`. */
export interface SiteEvent {
  type: WebhookEventType;
  siteId: number | null;
  key: string;
  occurredAt: Date;
  data: Record<string, unknown>;
}

/** The event `POST /webhooks/{id}/test` sends; never subscribed to, always delivered to the tested endpoint only. */
export const TEST_EVENT = 'webhook.test';

/**
 * A toplist change as the catalog reports it. The payload names the toplist; it never carries
 * the toplist itself: receivers re-fetch it (with their ETag) from the toplist API.
 */
export interface ToplistChange {
  type: ToplistEventType;
  toplistId: number;
  siteId: number;
  slug: string;
  templateId: number;
  geo: { geo_type: string; code: string };
  /** Version of the edition concerned (the new one, the one taken down, the one whose window moved). */
  version: string | null;
  liveFrom: Date | null;
  liveUntil: Date | null;
  /** When it happened: the publish time, or the window boundary that passed. */
  occurredAt: Date;
}

/** An endpoint as the admin API shows it: never the secret itself. */
export interface WebhookEndpoint {
  id: string;
  siteId: number | null;
  url: string;
  events: WebhookEventType[];
  description: string;
  /** Leading characters of the current secret, to tell secrets apart. */
  secretHint: string;
  /** Until when the secret replaced by the last rotation still signs deliveries (null: none). */
  previousSecretExpiresAt: string | null;
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The stored endpoint, with the sealed secrets (never leaves the module). */
export interface StoredEndpoint extends WebhookEndpoint {
  secretSealed: string;
  previousSecretSealed: string | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One try at sending a delivery, as logged. */
export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  succeeded: boolean;
  /** HTTP status the receiver answered, null when no answer came (refused, timeout, blocked). */
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  /** When the next try is due after this one failed; null after a success or the last try. */
  nextAttemptAt: string | null;
}

/** One event sent to one endpoint (the Standard Webhooks message; `id` is the `webhook-id`). */
export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  maxAttempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  completedAt: string | null;
  log: DeliveryAttempt[];
}
