import type { Config } from '../config.ts';
import { ChangeBus } from '../db/changes.ts';
import type { Db } from '../db/index.ts';
import { OutboundClient, outboundOptionsFrom } from '../lib/outbound.ts';
import { type Sealer, sealerFromConfig } from '../lib/seal.ts';
import { AccessService } from '../modules/access/service.ts';
import { AdserverService } from '../modules/adserver/service.ts';
import { CatalogService } from '../modules/catalog/service.ts';
import { AggregateRepository } from '../modules/tracking/aggregate-repository.ts';
import { OperatorAggregates } from '../modules/tracking/aggregates.ts';
import { TrackingService } from '../modules/tracking/service.ts';
import { EventOutbox } from '../modules/webhooks/service.ts';
import { openConfiguredDb } from '../server.ts';

async function withServices<T>(
  config: Config,
  fn: (db: Db, catalog: CatalogService, access: AccessService) => Promise<T>,
): Promise<T> {
  const db = await openConfiguredDb(config);
  try {
    const bus = new ChangeBus(db);
    const catalog = new CatalogService(db, bus, config, () => new Date(), new EventOutbox(() => new Date()));
    return await fn(db, catalog, new AccessService(db, bus, catalog, () => new Date()));
  } finally {
    await db.close();
  }
}

/**
 * Runs a CLI command against the configured database without an HTTP server. Changes are
 * announced through NOTIFY, so a server running on the same PostgreSQL drops its caches.
 */
export function withCatalog<T>(config: Config, fn: (catalog: CatalogService) => Promise<T>): Promise<T> {
  return withServices(config, (_db, catalog) => fn(catalog));
}

/** Runs a CLI command with the catalog and access services (demo data and its tokens). */
export function withCatalogAndAccess<T>(
  config: Config,
  fn: (services: { catalog: CatalogService; access: AccessService }) => Promise<T>,
): Promise<T> {
  return withServices(config, (_db, catalog, access) => fn({ catalog, access }));
}

/** Runs a CLI command with the tracking service (programmes) against the configured database. */
export function withTracking<T>(config: Config, fn: (tracking: TrackingService) => Promise<T>): Promise<T> {
  return withServices(config, (db, catalog) =>
    fn(new TrackingService(db, catalog, config, () => new Date())),
  );
}

/** Runs `fn` with the database, the secrets sealer and a guarded outbound client (closed afterwards). */
function withOutbound<T>(
  config: Config,
  warn: (msg: string) => void,
  fn: (db: Db, sealer: Sealer, http: OutboundClient) => Promise<T>,
): Promise<T> {
  return withServices(config, async (db) => {
    const http = new OutboundClient(outboundOptionsFrom(config));
    try {
      return await fn(db, sealerFromConfig(config, warn), http);
    } finally {
      await http.close();
    }
  });
}

/** Runs a CLI command with the ad-server service (connections, keys) against the configured database. */
export function withAdserver<T>(
  config: Config,
  warn: (msg: string) => void,
  fn: (adserver: AdserverService) => Promise<T>,
): Promise<T> {
  return withOutbound(config, warn, (db, sealer, http) => fn(new AdserverService(db, sealer, http)));
}

/** Runs a CLI command with operator aggregate pulls (sealed report keys, guarded outbound client). */
export function withAggregates<T>(
  config: Config,
  warn: (msg: string) => void,
  fn: (aggregates: OperatorAggregates) => Promise<T>,
): Promise<T> {
  return withOutbound(config, warn, (db, sealer, http) =>
    fn(new OperatorAggregates(new AggregateRepository(db), sealer, http, config, () => new Date())),
  );
}
