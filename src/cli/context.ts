import type { Config } from '../config.ts';
import { ChangeBus } from '../db/changes.ts';
import { CatalogService } from '../modules/catalog/service.ts';
import { openConfiguredDb } from '../server.ts';

/**
 * Runs a CLI command against the configured database without an HTTP server. Changes are
 * announced through NOTIFY, so a server running on the same PostgreSQL drops its caches.
 */
export async function withCatalog<T>(
  config: Config,
  fn: (catalog: CatalogService) => Promise<T>,
): Promise<T> {
  const db = await openConfiguredDb(config);
  try {
    const catalog = new CatalogService(db, new ChangeBus(db), config, () => new Date());
    return await fn(catalog);
  } finally {
    await db.close();
  }
}
