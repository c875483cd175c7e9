import type { Config } from '../config.ts';
import { ChangeBus } from '../db/changes.ts';
import { openConfiguredDb } from '../db/open.ts';
import type { CatalogService } from '../modules/catalog/service.ts';
import type { TrackingService } from '../modules/tracking/service.ts';
import { createServices, type Services } from '../services.ts';

const stderr = (msg: string) => process.stderr.write(`${msg}\n`);

/**
 * Runs a CLI command against the configured database without an HTTP server, with the same
 * service graph (and configured options) the server builds; its scheduler is not started.
 * Changes are announced through NOTIFY, so a server running on the same PostgreSQL drops its
 * caches.
 */
export async function withServices<T>(
  config: Config,
  fn: (services: Services) => Promise<T>,
  warn: (msg: string) => void = stderr,
): Promise<T> {
  const db = await openConfiguredDb(config);
  try {
    const services = await createServices({
      config,
      db,
      bus: new ChangeBus(db),
      log: { warn: (msg) => warn(msg), error: (msg) => warn(msg) },
    });
    try {
      return await fn(services);
    } finally {
      await services.close();
    }
  } finally {
    await db.close();
  }
}

/** Runs a CLI command with the catalog service. */
export function withCatalog<T>(config: Config, fn: (catalog: CatalogService) => Promise<T>): Promise<T> {
  return withServices(config, (s) => fn(s.catalog));
}

/** Runs a CLI command with the tracking service (programmes). */
export function withTracking<T>(config: Config, fn: (tracking: TrackingService) => Promise<T>): Promise<T> {
  return withServices(config, (s) => fn(s.tracking));
}
