import type { Db, Queryable } from '../../db/index.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { conflict, invalidField, notFound } from '../../lib/errors.ts';
import { ulid } from '../../lib/ids.ts';
import type { OutboundClient } from '../../lib/outbound.ts';
import { type Page, pageMeta, pageWindow } from '../../lib/paging.ts';
import type { ResealReport, Sealer } from '../../lib/seal.ts';
import { wireTimestamp } from '../../lib/time.ts';
import { WebhookRepository } from './repository.ts';
import { MAX_ATTEMPTS } from './schedule.ts';
import { mintSecret, secretHint } from './signing.ts';
import {
  type Delivery,
  type SiteEvent,
  type StoredEndpoint,
  TEST_EVENT,
  type ToplistChange,
  type WebhookEndpoint,
  type WebhookEventType,
} from './types.ts';
import { DeliveryWorker } from './worker.ts';

/** Endpoints a workspace may register (a bound on every fan-out). */
export const MAX_ENDPOINTS = 100;
/** Longest grace period of a rotated secret. */
export const MAX_GRACE_SECONDS = 7 * 86_400;
export const DEFAULT_GRACE_SECONDS = 86_400;
/** Events (with their deliveries and logs) are kept this long once no delivery is pending. */
const RETENTION_MS = 30 * 86_400_000;

export interface EndpointInput {
  url: string;
  events: WebhookEventType[];
  siteId?: number | null;
  description?: string;
}

export interface EndpointPatch extends Partial<EndpointInput> {
  enabled?: boolean;
}

/** What the catalog calls when a toplist changes: inside its transaction, then after the commit. */
export interface ChangeEvents {
  /** Records the event in the outbox within the caller's transaction (nothing is sent yet). */
  record(q: Queryable, change: ToplistChange): Promise<void>;
  /** Called after the commit: starts sending at once in this process. */
  committed(): void;
}

/** What the marketplace calls for its events: inside its transaction, then after the commit. */
export interface SiteEvents {
  /** Records the event in the outbox within the caller's transaction (nothing is sent yet). */
  recordEvent(q: Queryable, event: SiteEvent): Promise<void>;
  /** Called after the commit: starts sending at once in this process. */
  committed(): void;
}

/** The endpoint without its sealed secrets: the only shape that leaves the module. */
export function publicEndpoint(e: StoredEndpoint): WebhookEndpoint {
  const { secretSealed: _s, previousSecretSealed: _p, ...rest } = e;
  return rest;
}

/** The JSON body of an event (Standard Webhooks shape: type, timestamp, data). */
export function eventPayload(e: Pick<SiteEvent, 'type' | 'occurredAt' | 'data'>): string {
  return JSON.stringify({ type: e.type, timestamp: wireTimestamp(e.occurredAt), data: e.data });
}

/** A toplist change as the event its site's endpoints receive. */
export function toplistEvent(c: ToplistChange): SiteEvent {
  return {
    type: c.type,
    siteId: c.siteId,
    key: eventKey(c),
    occurredAt: c.occurredAt,
    data: {
      toplistId: c.toplistId,
      siteId: c.siteId,
      slug: c.slug,
      templateId: c.templateId,
      geo: { geo_type: c.geo.geo_type, code: c.geo.code },
      version: c.version,
      liveFrom: c.liveFrom ? wireTimestamp(c.liveFrom) : null,
      liveUntil: c.liveUntil ? wireTimestamp(c.liveUntil) : null,
    },
  };
}

/** The key that makes one change one event, however many times it is recorded. */
function eventKey(c: ToplistChange): string {
  const at =
    c.type === 'toplist.window_opened'
      ? c.liveFrom?.getTime()
      : c.type === 'toplist.window_closed'
        ? c.liveUntil?.getTime()
        : c.type === 'toplist.unpublished' || c.type === 'toplist.compliance_changed'
          ? c.occurredAt.getTime()
          : '';
  return `${c.type}:${c.toplistId}:${c.version ?? 'none'}:${at}`;
}

/**
 * The event outbox: records a change, with one delivery per subscribed endpoint, inside the
 * caller's transaction. Processes that only record (the CLI) leave the sending to the servers'
 * delivery workers; a server kicks its own worker after the commit.
 */
export class EventOutbox implements ChangeEvents, SiteEvents {
  constructor(
    private readonly now: () => Date,
    private readonly onCommitted: () => void = () => {},
  ) {}

  record(q: Queryable, change: ToplistChange): Promise<void> {
    return this.recordEvent(q, toplistEvent(change));
  }

  async recordEvent(q: Queryable, event: SiteEvent): Promise<void> {
    const repo = new WebhookRepository(q);
    const eventId = `evt_${ulid()}`;
    const now = this.now();
    const inserted = await repo.insertEvent({
      id: eventId,
      key: event.key,
      type: event.type,
      siteId: event.siteId,
      payload: eventPayload(event),
      now,
    });
    if (!inserted) return;
    for (const endpointId of await repo.subscribers(event.type, event.siteId)) {
      await repo.insertDelivery({
        id: `msg_${ulid()}`,
        eventId,
        endpointId,
        maxAttempts: MAX_ATTEMPTS,
        dueAt: now,
        now,
      });
    }
  }

  committed(): void {
    this.onCommitted();
  }
}

/**
 * Change webhooks: endpoints with sealed signing secrets (rotation with a grace period), the
 * event outbox filled inside the catalog's transactions, and the delivery worker.
 */
export class WebhookService implements ChangeEvents, SiteEvents {
  readonly repo: WebhookRepository;
  readonly worker: DeliveryWorker;
  private readonly outbox: EventOutbox;

  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
    private readonly http: OutboundClient,
    private readonly now: () => Date,
    options: { pollMs: number; sendTimeoutMs: number; log: (msg: string, err?: unknown) => void },
  ) {
    this.repo = new WebhookRepository(db);
    this.worker = new DeliveryWorker(this.repo, sealer, http, now, options);
    this.outbox = new EventOutbox(now, () => void this.worker.kick());
  }

  /* Endpoints */

  /** Registers an endpoint; the signing secret is returned once and stored sealed. */
  async create(input: EndpointInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const url = this.checkUrl(input.url);
    if ((await this.repo.countEndpoints()) >= MAX_ENDPOINTS)
      throw conflict(`At most ${MAX_ENDPOINTS} webhook endpoints: delete one first`);
    const id = `whk_${ulid()}`;
    const secret = mintSecret();
    await this.guard(
      this.repo.insertEndpoint({
        id,
        siteId: input.siteId ?? null,
        url,
        events: input.events,
        description: input.description ?? '',
        secretSealed: this.sealer.seal(secret, id),
        secretHint: secretHint(secret),
        now: this.now(),
      }),
    );
    return { endpoint: publicEndpoint((await this.repo.getEndpoint(id))!), secret };
  }

  async get(id: string): Promise<WebhookEndpoint> {
    return publicEndpoint(await this.stored(id));
  }

  async list(
    siteId: number | undefined,
    page = 1,
    perPage = 15,
    siteIds?: readonly number[],
  ): Promise<Page<WebhookEndpoint>> {
    const { rows, total } = await this.repo.listEndpoints(siteId, pageWindow(page, perPage), siteIds);
    return { data: rows.map(publicEndpoint), meta: pageMeta(total, page, perPage) };
  }

  /** Changes the URL, events, site or description; `enabled: true` re-enables a disabled endpoint. */
  async update(id: string, patch: EndpointPatch): Promise<WebhookEndpoint> {
    const url = patch.url === undefined ? undefined : this.checkUrl(patch.url);
    const ok = await this.guard(
      this.repo.updateEndpoint(
        id,
        {
          url,
          events: patch.events,
          siteId: patch.siteId,
          description: patch.description,
          enabled: patch.enabled,
        },
        this.now(),
      ),
    );
    if (!ok) throw notFound('Webhook endpoint');
    return this.get(id);
  }

  /** Deletes an endpoint with its pending deliveries and log. */
  async remove(id: string): Promise<void> {
    if (!(await this.repo.deleteEndpoint(id))) throw notFound('Webhook endpoint');
  }

  /**
   * Replaces the signing secret (returned once). For `graceSeconds` the old secret keeps signing
   * too (two signatures per message), so receivers can switch without losing a delivery.
   */
  async rotate(
    id: string,
    graceSeconds = DEFAULT_GRACE_SECONDS,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.stored(id);
    const secret = mintSecret();
    const now = this.now();
    await this.repo.rotateSecret(id, {
      sealed: this.sealer.seal(secret, id),
      hint: secretHint(secret),
      graceUntil: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null,
      now,
    });
    return { endpoint: await this.get(id), secret };
  }

  /** Re-seals every signing secret not sealed with the current key version (see `Sealer.reseal`). */
  async rotateKeys(): Promise<ResealReport> {
    return this.sealer.reseal(await this.repo.sealedSecrets(), (s, sealed) =>
      this.repo.replaceSealedSecret(s.aad, s.previous, s.sealed, sealed),
    );
  }

  /** Sends a `webhook.test` event to this endpoint now (one try, logged) and returns the delivery. */
  async test(id: string): Promise<Delivery> {
    const endpoint = await this.stored(id);
    const now = this.now();
    const eventId = `evt_${ulid()}`;
    const deliveryId = `msg_${ulid()}`;
    const payload = JSON.stringify({
      type: TEST_EVENT,
      timestamp: wireTimestamp(now),
      data: { endpointId: id, siteId: endpoint.siteId },
    });
    await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      await repo.insertEvent({
        id: eventId,
        key: `${TEST_EVENT}:${eventId}`,
        type: TEST_EVENT,
        siteId: endpoint.siteId,
        payload,
        now,
      });
      await repo.insertDelivery({
        id: deliveryId,
        eventId,
        endpointId: id,
        maxAttempts: 1,
        dueAt: null,
        now,
      });
    });
    await this.worker.sendNow(deliveryId);
    return (await this.repo.getDelivery(deliveryId))!;
  }

  /** An endpoint's deliveries, newest first, each with every attempt. */
  async deliveries(id: string, page = 1, perPage = 15): Promise<Page<Delivery>> {
    await this.stored(id);
    const { rows, total } = await this.repo.listDeliveries(id, pageWindow(page, perPage));
    return { data: rows, meta: pageMeta(total, page, perPage) };
  }

  /* Events */

  record(q: Queryable, change: ToplistChange): Promise<void> {
    return this.outbox.record(q, change);
  }

  recordEvent(q: Queryable, event: SiteEvent): Promise<void> {
    return this.outbox.recordEvent(q, event);
  }

  committed(): void {
    this.outbox.committed();
  }

  /** Records changes that happened outside a request (publish windows passing), each in its own transaction. */
  async recordAll(changes: readonly ToplistChange[]): Promise<void> {
    for (const c of changes) await this.db.tx((q) => this.record(q, c));
    if (changes.length) this.committed();
  }

  /** Drops events older than the retention period whose deliveries are all finished. */
  prune(): Promise<number> {
    return this.repo.pruneEvents(new Date(this.now().getTime() - RETENTION_MS));
  }

  private async stored(id: string): Promise<StoredEndpoint> {
    return (await this.repo.getEndpoint(id)) ?? Promise.reject(notFound('Webhook endpoint'));
  }

  /** An https URL whose host is not a private or loopback literal (the outbound client checks resolved addresses at send time). */
  private checkUrl(raw: string): string {
    const checked = this.http.checkBaseUrl(raw);
    if (!checked.ok) throw invalidField('url', checked.message.replace(/^base_url/, 'the URL'));
    return checked.url.toString();
  }

  private async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      throw fromDbError(err, { webhook_endpoints_site_id_fkey: 'siteId' }) ?? err;
    }
  }
}
