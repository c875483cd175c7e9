import type { Config } from '../config.ts';
import { ChangeBus } from '../db/changes.ts';
import type { Db } from '../db/index.ts';
import { OutboundClient, outboundOptionsFrom } from '../lib/outbound.ts';
import { sealerFromConfig } from '../lib/seal.ts';
import { AdserverService } from '../modules/adserver/service.ts';
import { CatalogService } from '../modules/catalog/service.ts';
import { TrackingService } from '../modules/tracking/service.ts';
import { openConfiguredDb } from '../server.ts';

async function withServices<T>(
  config: Config,
  fn: (db: Db, catalog: CatalogService) => Promise<T>,
): Promise<T> {
  const db = await openConfiguredDb(config);
  try {
    return await fn(db, new CatalogService(db, new ChangeBus(db), config, () => new Date()));
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

/** Runs a CLI command with the tracking service (programmes) against the configured database. */
export function withTracking<T>(config: Config, fn: (tracking: TrackingService) => Promise<T>): Promise<T> {
  return withServices(config, (db, catalog) =>
    fn(new TrackingService(db, catalog, config, () => new Date())),
  );
}

/** Runs a CLI command with the ad-server service (connections, keys) against the configured database. */
export function withAdserver<T>(
  config: Config,
  warn: (msg: string) => void,
  fn: (adserver: AdserverService) => Promise<T>,
): Promise<T> {
  return withServices(config, async (db) => {
    const http = new OutboundClient(outboundOptionsFrom(config));
    try {
      return await fn(new AdserverService(db, sealerFromConfig(config, warn), http));
    } finally {
      await http.close();
    }
  });
}
