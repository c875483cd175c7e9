import type { Config } from '../config.ts';
import { type Db, openDb } from './index.ts';
import { migrate } from './migrate.ts';

/** Opens (and migrates) the configured database: PGlite in `dataDir`, or the server at `databaseUrl`. */
export async function openConfiguredDb(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  log: (msg: string) => void = () => {},
): Promise<Db> {
  const db = await openDb({ url: config.databaseUrl, dataDir: config.dataDir });
  await migrate(db, log);
  return db;
}
