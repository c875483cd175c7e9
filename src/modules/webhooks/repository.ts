import { type Selectable, sql, type Updateable } from 'kysely';
import type { Queryable } from '../../db/index.ts';
import { kysely, type Sql } from '../../db/kysely.ts';
import { type Paged, type PageWindow, pagedRows } from '../../db/paged.ts';
import type { WebhookEndpoints } from '../../db/schema.ts';
import type { StoredSecret } from '../../lib/seal.ts';
import type { Delivery, DeliveryAttempt, DeliveryStatus, StoredEndpoint, WebhookEventType } from './types.ts';

const iso = (d: unknown): string | null => (d ? (d as Date).toISOString() : null);

function endpointOf(r: Selectable<WebhookEndpoints>): StoredEndpoint {
  return {
    id: r.id,
    siteId: r.site_id ?? null,
    url: r.url,
    // Written only from the event types the API accepts (schemas.ts).
    events: r.events as WebhookEventType[],
    description: r.description,
    secretHint: r.secret_hint,
    previousSecretExpiresAt: iso(r.previous_secret_expires_at),
    enabled: r.enabled,
    disabledAt: iso(r.disabled_at),
    disabledReason: r.disabled_reason ?? null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    secretSealed: r.secret_sealed,
    previousSecretSealed: r.previous_secret_sealed ?? null,
  };
}

/** A delivery as its query answers it: API field names, times still dates. */
type DeliveryRow = Omit<Delivery, 'nextAttemptAt' | 'createdAt' | 'completedAt' | 'log'> & {
  nextAttemptAt: Date | null;
  createdAt: Date;
  completedAt: Date | null;
};

/** The columns of a delivery (`d`) and its event (`ev`) under the API's field names. */
const DELIVERY_COLUMNS = `d.id, d.event_id AS "eventId", ev.type AS "eventType", d.status, d.attempts,
  d.max_attempts AS "maxAttempts", d.next_attempt_at AS "nextAttemptAt", d.last_error AS "lastError",
  d.created_at AS "createdAt", d.completed_at AS "completedAt"`;

/** A delivery claimed for sending, with what the sender needs. */
export interface ClaimedDelivery {
  id: string;
  eventType: string;
  payload: string;
  attempt: number;
  maxAttempts: number;
  endpoint: StoredEndpoint;
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  succeeded: boolean;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  /** Set when another try follows; null with `succeeded` false means the delivery gave up. */
  nextAttemptAt: Date | null;
}

/** What creating an endpoint stores: the fields the service set, and when. */
type NewEndpoint = Pick<
  StoredEndpoint,
  'id' | 'siteId' | 'url' | 'events' | 'description' | 'secretSealed' | 'secretHint'
> & { now: Date };

export interface EndpointColumns {
  siteId?: number | null;
  url?: string;
  events?: readonly string[];
  description?: string;
  enabled?: boolean;
}

/** Webhooks SQL: endpoints, the event outbox, deliveries and their attempt log. */
export class WebhookRepository {
  private readonly sql: Sql;

  constructor(private readonly db: Queryable) {
    this.sql = kysely(db);
  }

  /** The same repository inside a transaction. */
  with(q: Queryable): WebhookRepository {
    return new WebhookRepository(q);
  }

  /* Endpoints */

  async countEndpoints(): Promise<number> {
    const row = await this.sql
      .selectFrom('webhook_endpoints')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    return row.n;
  }

  async insertEndpoint(e: NewEndpoint): Promise<void> {
    await this.sql
      .insertInto('webhook_endpoints')
      .values({
        id: e.id,
        site_id: e.siteId,
        url: e.url,
        events: e.events,
        description: e.description,
        secret_sealed: e.secretSealed,
        secret_hint: e.secretHint,
        created_at: e.now,
        updated_at: e.now,
      })
      .execute();
  }

  async getEndpoint(id: string): Promise<StoredEndpoint | undefined> {
    const r = await this.sql
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return r && endpointOf(r);
  }

  /** A page of endpoints, of one site, or only of `siteIds` when given (endpoints of every site excluded). */
  async listEndpoints(
    siteId: number | undefined,
    window: PageWindow,
    siteIds?: readonly number[],
  ): Promise<Paged<StoredEndpoint>> {
    const page = await pagedRows(window, (w) =>
      this.sql
        .selectFrom('webhook_endpoints')
        .selectAll()
        .select(sql<number>`count(*) OVER ()::int`.as('total'))
        .$if(siteId !== undefined, (q) => q.where('site_id', '=', siteId!))
        .$if(siteIds !== undefined, (q) => q.where('site_id', '=', sql<number>`ANY(${siteIds}::int[])`))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(w.limit)
        .offset(w.offset)
        .execute(),
    );
    return { ...page, rows: page.rows.map(endpointOf) };
  }

  /** Applies a patch; re-enabling clears the disabled marks. False when no such endpoint. */
  async updateEndpoint(id: string, c: EndpointColumns, now: Date): Promise<boolean> {
    const marks =
      c.enabled === undefined
        ? {}
        : c.enabled
          ? { disabled_at: null, disabled_reason: null }
          : { disabled_at: now, disabled_reason: 'disabled by an admin' };
    // A field left undefined stays out of the SET list.
    const set: Updateable<WebhookEndpoints> = {
      site_id: c.siteId,
      url: c.url,
      events: c.events && [...c.events],
      description: c.description,
      enabled: c.enabled,
      ...marks,
      updated_at: now,
    };
    const row = await this.sql
      .updateTable('webhook_endpoints')
      .set(set)
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    const row = await this.sql
      .deleteFrom('webhook_endpoints')
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Installs a new secret; the current one becomes the previous one until `graceUntil`. */
  async rotateSecret(
    id: string,
    s: { sealed: string; hint: string; graceUntil: Date | null; now: Date },
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE webhook_endpoints
       SET previous_secret_sealed = CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE secret_sealed END,
           previous_secret_expires_at = $4, secret_sealed = $2, secret_hint = $3, updated_at = $5
       WHERE id = $1 RETURNING id`,
      [id, s.sealed, s.hint, s.graceUntil, s.now],
    );
    return rows.length > 0;
  }

  /** Every endpoint's sealed signing secrets, the current one and the one still in its grace period (the endpoint id is their associated data). */
  async sealedSecrets(): Promise<(StoredSecret & { previous: boolean })[]> {
    return this.db.query(
      `SELECT id AS record, id AS aad, secret_sealed AS sealed, false AS previous FROM webhook_endpoints
       UNION ALL
       SELECT id || ' (previous secret)', id, previous_secret_sealed, true FROM webhook_endpoints
       WHERE previous_secret_sealed IS NOT NULL
       ORDER BY record`,
    );
  }

  /** Replaces one sealed secret only if it is still `old`; false when it changed meanwhile (a rotation). */
  async replaceSealedSecret(id: string, previous: boolean, old: string, sealed: string): Promise<boolean> {
    const column = previous ? 'previous_secret_sealed' : 'secret_sealed';
    const rows = await this.db.query(
      `UPDATE webhook_endpoints SET ${column} = $3 WHERE id = $1 AND ${column} = $2 RETURNING id`,
      [id, old, sealed],
    );
    return rows.length === 1;
  }

  /** Disables an endpoint that keeps failing and gives up its other pending deliveries. */
  async disableEndpoint(id: string, reason: string, now: Date): Promise<void> {
    await this.db.query(
      `UPDATE webhook_endpoints SET enabled = false, disabled_at = $2, disabled_reason = $3, updated_at = $2
       WHERE id = $1 AND enabled`,
      [id, now, reason],
    );
    await this.db.query(
      `UPDATE webhook_deliveries SET status = 'failed', completed_at = $2, next_attempt_at = NULL,
              last_error = 'endpoint disabled'
       WHERE endpoint_id = $1 AND status = 'pending' AND (locked_until IS NULL OR locked_until <= $2)`,
      [id, now],
    );
  }

  /** Whether any attempt to this endpoint succeeded at or after `since`. */
  async succeededSince(endpointId: string, since: Date): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
       WHERE d.endpoint_id = $1 AND a.succeeded AND a.started_at >= $2 LIMIT 1`,
      [endpointId, since],
    );
    return rows.length > 0;
  }

  /* Events and deliveries */

  /** Records an event once per key; false when an event with this key exists already. */
  async insertEvent(e: {
    id: string;
    key: string;
    type: string;
    siteId: number | null;
    payload: string;
    now: Date;
  }): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO webhook_events (id, event_key, type, site_id, payload, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_key) DO NOTHING RETURNING id`,
      [e.id, e.key, e.type, e.siteId, e.payload, e.now],
    );
    return rows.length > 0;
  }

  /** Enabled endpoints subscribed to `type` that see `siteId` (their own site, or workspace-wide). */
  async subscribers(type: string, siteId: number | null): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM webhook_endpoints
       WHERE enabled AND $1 = ANY(events) AND (site_id IS NULL OR site_id = $2) ORDER BY id`,
      [type, siteId],
    );
    return rows.map((r) => r.id);
  }

  async insertDelivery(d: {
    id: string;
    eventId: string;
    endpointId: string;
    maxAttempts: number;
    /** Null: not picked up by the poller (a test delivery sent by its request). */
    dueAt: Date | null;
    now: Date;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, max_attempts, next_attempt_at, created_at)
       VALUES ($1, $2, $3, 'pending', $4, $5, $6)`,
      [d.id, d.eventId, d.endpointId, d.maxAttempts, d.dueAt, d.now],
    );
  }

  /**
   * Claims up to `limit` due deliveries of enabled endpoints (or the one named by `onlyId`),
   * counting the attempt and leasing them until `leaseUntil`. SKIP LOCKED and the lease make
   * the claim exclusive across processes: a delivery is sent by one process at a time.
   */
  async claim(now: Date, leaseUntil: Date, limit: number, onlyId?: string): Promise<ClaimedDelivery[]> {
    const pick =
      onlyId === undefined
        ? `d2.next_attempt_at <= $1 AND e.enabled ORDER BY d2.next_attempt_at, d2.id LIMIT $3`
        : `d2.id = $3`;
    const params: unknown[] = [now, leaseUntil, onlyId ?? limit];
    const rows = await this.db.query<
      Omit<ClaimedDelivery, 'id' | 'endpoint'> & { deliveryId: string } & Selectable<WebhookEndpoints>
    >(
      `WITH claimed AS (
         UPDATE webhook_deliveries d SET attempts = d.attempts + 1, locked_until = $2
         WHERE d.id IN (
           SELECT d2.id FROM webhook_deliveries d2 JOIN webhook_endpoints e ON e.id = d2.endpoint_id
           WHERE d2.status = 'pending' AND (d2.locked_until IS NULL OR d2.locked_until <= $1) AND ${pick}
           FOR UPDATE OF d2 SKIP LOCKED)
         RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, d.max_attempts)
       SELECT c.id AS "deliveryId", ev.type AS "eventType", ev.payload, c.attempts AS attempt,
              c.max_attempts AS "maxAttempts", e.*
       FROM claimed c JOIN webhook_events ev ON ev.id = c.event_id JOIN webhook_endpoints e ON e.id = c.endpoint_id`,
      params,
      // The worker's poll (every 1–15 s, mostly finding nothing) is planned once; on PGlite
      // planning it was 2–9 ms a poll, most of an idle server's CPU.
      onlyId === undefined ? 'claim_due_webhooks' : undefined,
    );
    return rows.map(({ deliveryId, eventType, payload, attempt, maxAttempts, ...endpoint }) => ({
      id: deliveryId,
      eventType,
      payload,
      attempt,
      maxAttempts,
      endpoint: endpointOf(endpoint),
    }));
  }

  /** Logs an attempt and moves its delivery on: done, due again later, or given up. */
  async recordAttempt(a: AttemptRecord, now: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, succeeded, http_status, latency_ms, error, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        a.deliveryId,
        a.attempt,
        a.startedAt,
        a.succeeded,
        a.httpStatus,
        a.latencyMs,
        a.error,
        a.nextAttemptAt,
      ],
    );
    const status: DeliveryStatus = a.succeeded ? 'succeeded' : a.nextAttemptAt ? 'pending' : 'failed';
    await this.db.query(
      `UPDATE webhook_deliveries SET status = $2, next_attempt_at = $3, locked_until = NULL, last_error = $4,
              completed_at = CASE WHEN $2 = 'pending' THEN NULL ELSE $5::timestamptz END
       WHERE id = $1`,
      [a.deliveryId, status, a.nextAttemptAt, a.succeeded ? null : a.error, now],
    );
  }

  /** First attempt time of a delivery (the start of a failing streak). */
  async firstAttemptAt(deliveryId: string): Promise<Date | undefined> {
    const [r] = await this.db.query<{ at: Date | null }>(
      'SELECT min(started_at) AS at FROM webhook_attempts WHERE delivery_id = $1',
      [deliveryId],
    );
    return r?.at ?? undefined;
  }

  /** An endpoint's deliveries, newest first, each with its attempt log. */
  async listDeliveries(endpointId: string, window: PageWindow): Promise<Paged<Delivery>> {
    const page = await pagedRows<DeliveryRow>(window, (w) =>
      this.db.query<DeliveryRow & { total: number }>(
        `SELECT ${DELIVERY_COLUMNS}, count(*) OVER ()::int AS total
         FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
         WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.id DESC LIMIT $2 OFFSET $3`,
        [endpointId, w.limit, w.offset],
      ),
    );
    return { ...page, rows: await this.withLogs(page.rows) };
  }

  /** One delivery with its attempt log. */
  async getDelivery(id: string): Promise<Delivery | undefined> {
    const rows = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
       WHERE d.id = $1`,
      [id],
    );
    return (await this.withLogs(rows))[0];
  }

  private async withLogs(rows: DeliveryRow[]): Promise<Delivery[]> {
    const ids = rows.map((r) => r.id);
    const attempts = ids.length
      ? await this.db.query(
          'SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, attempt',
          [ids],
        )
      : [];
    const logs = new Map<string, DeliveryAttempt[]>();
    for (const a of attempts) {
      const list = logs.get(a.delivery_id as string) ?? [];
      list.push({
        attempt: a.attempt as number,
        startedAt: iso(a.started_at)!,
        succeeded: a.succeeded as boolean,
        httpStatus: (a.http_status as number | null) ?? null,
        latencyMs: a.latency_ms as number,
        error: (a.error as string | null) ?? null,
        nextAttemptAt: iso(a.next_attempt_at),
      });
      logs.set(a.delivery_id as string, list);
    }
    return rows.map((r) => ({
      ...r,
      nextAttemptAt: r.status === 'pending' ? iso(r.nextAttemptAt) : null,
      createdAt: iso(r.createdAt)!,
      completedAt: iso(r.completedAt),
      log: logs.get(r.id) ?? [],
    }));
  }

  /** Forgets events (and their deliveries and attempts) created before `before`. */
  async pruneEvents(before: Date): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM webhook_events WHERE id IN (
         SELECT ev.id FROM webhook_events ev WHERE ev.created_at < $1
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.status = 'pending')
         LIMIT 10000)
       RETURNING id`,
      [before],
    );
    return rows.length;
  }
}
