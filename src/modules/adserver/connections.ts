import { fromDbError } from '../../lib/db-errors.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import { ulid } from '../../lib/ids.ts';
import type { OutboundClient, OutboundRequest, Outcome } from '../../lib/outbound.ts';
import type { ResealReport, Sealer } from '../../lib/seal.ts';
import { classifyHealth, confirmsInventory } from './probe.ts';
import type { AdserverRepository } from './repository.ts';
import type { Connection, Environment, StoredConnection } from './types.ts';

export interface ConnectionInput {
  publisher: string;
  environment?: Environment;
  base_url: string;
  api_key: string;
}

/** A contract call on a connection: everything of an outbound request but where and with which key. */
export type ContractCall = Omit<OutboundRequest, 'baseUrl' | 'apiKey'>;

/** The record without its sealed key: the only shape that leaves the module. */
export function publicConnection(c: StoredConnection): Connection {
  const { apiKeySealed: _sealed, ...rest } = c;
  return rest;
}

/**
 * Connections to publishers' ad servers: create (key sealed with the record id as associated
 * data), verify probe (`/health` then `/inventory?limit=1`, never retried automatically), key
 * changes, re-sealing on key rotation, and every later call (401/403 puts the connection in error).
 */
export class Connections {
  constructor(
    private readonly repo: AdserverRepository,
    private readonly sealer: Sealer,
    private readonly http: OutboundClient,
  ) {}

  /** Stores a connection and runs the verify probe; a failed probe still keeps the record (status error). */
  async create(input: ConnectionInput): Promise<Connection> {
    const baseUrl = this.checkBaseUrl(input.base_url);
    const id = `asc_${ulid()}`;
    const sealed = this.sealer.seal(input.api_key, id);
    try {
      await this.repo.insertConnection({
        id,
        publisher: input.publisher,
        environment: input.environment ?? 'production',
        baseUrl,
        sealed,
      });
    } catch (err) {
      throw fromDbError(err, { adserver_connections_publisher_environment_key: 'environment' }) ?? err;
    }
    return this.verify(id);
  }

  async get(id: string): Promise<StoredConnection> {
    const c = await this.repo.getConnection(id);
    if (!c) throw notFound('Connection');
    return c;
  }

  async list(publisher?: string): Promise<Connection[]> {
    return (await this.repo.listConnections(publisher)).map(publicConnection);
  }

  /** Changes the base URL and/or the key (re-issued keys, moved servers), then re-verifies. */
  async update(id: string, patch: { base_url?: string; api_key?: string }): Promise<Connection> {
    await this.get(id);
    const baseUrl = patch.base_url === undefined ? undefined : this.checkBaseUrl(patch.base_url);
    const sealed = patch.api_key === undefined ? undefined : this.sealer.seal(patch.api_key, id);
    await this.repo.updateEndpoint(id, baseUrl, sealed);
    return this.verify(id);
  }

  /** The verify probe: `GET /health` classified per the contract, then the `GET /inventory?limit=1` probe. */
  async verify(id: string): Promise<Connection> {
    const conn = await this.get(id);
    const health = classifyHealth(await this.send(conn, { method: 'GET', path: '/health' }));
    if (health.state !== 'connected' || !health.account) {
      await this.repo.recordProbe(id, { state: health.state, status: 'error', lastError: health.message });
      return publicConnection(await this.get(id));
    }
    const a = health.account;
    const inventory = await this.send(conn, { method: 'GET', path: '/inventory', query: { limit: '1' } });
    const refused =
      inventory.kind === 'http_status' && (inventory.status === 401 || inventory.status === 403);
    await this.repo.recordProbe(id, {
      state: refused ? (inventory.status === 401 ? 'auth_error' : 'forbidden') : 'connected',
      status: refused ? 'error' : 'connected',
      lastError: refused ? inventory.message : null,
      account: {
        account_id: a.account_id,
        account_name: a.account_name ?? null,
        timezone: a.timezone,
        currency: a.currency,
        forecast: a.capabilities.forecast,
      },
      inventoryRead: confirmsInventory(inventory) ? 'confirmed' : undefined,
    });
    return publicConnection(await this.get(id));
  }

  /**
   * One contract call with the connection's key. A 401 or 403 sets the connection to error
   * (the operator re-verifies once the key is fixed).
   */
  async call(conn: StoredConnection, req: ContractCall): Promise<Outcome> {
    const outcome = await this.send(conn, req);
    if (outcome.kind === 'http_status' && (outcome.status === 401 || outcome.status === 403))
      await this.repo.markError(
        conn.id,
        outcome.status === 401 ? 'auth_error' : 'forbidden',
        outcome.message,
      );
    return outcome;
  }

  /** Re-seals every API key not sealed with the current key version (see `Sealer.reseal`). */
  async rotateKeys(): Promise<ResealReport> {
    return this.sealer.reseal(await this.repo.sealedKeys(), (s, sealed) =>
      this.repo.replaceSealedKey(s.record, s.sealed, sealed),
    );
  }

  private send(conn: StoredConnection, req: ContractCall): Promise<Outcome> {
    const apiKey = this.sealer.open(conn.apiKeySealed, conn.id);
    return this.http.send({ ...req, baseUrl: conn.base_url, apiKey, target: 'adserver' });
  }

  private checkBaseUrl(raw: string): string {
    const checked = this.http.checkBaseUrl(raw);
    if (!checked.ok) throw invalidField('base_url', checked.message);
    return checked.url.toString();
  }
}
