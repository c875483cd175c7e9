/** The database and app a benchmark child works on: PGlite in BENCH_DATA_DIR, or a schema on DATABASE_URL. */
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ChangeBus } from '../src/db/changes.ts';
import { openDb } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';

/**
 * Opens the benchmark database (`schema` on PostgreSQL) and builds a silent app on it; `migrated`
 * first when asked (the app's services read their tables as they start).
 */
export async function openBench(schema: string, migrated = false) {
  const url = process.env.DATABASE_URL;
  const dataDir = process.env.BENCH_DATA_DIR;
  const db = await openDb({ url, schema: url ? schema : undefined, dataDir: url ? undefined : dataDir });
  if (migrated) await migrate(db);
  const bus = new ChangeBus(db);
  await bus.start();
  const config = loadConfig({}, { publicUrl: 'http://127.0.0.1', logLevel: 'silent' });
  const app = await buildApp({ config, db, bus, logger: false });
  return { db, bus, app };
}

/** A freshly migrated benchmark database: the old schema is dropped first on PostgreSQL. */
export async function freshBench(schema: string) {
  if (process.env.DATABASE_URL) {
    const { db } = await openBench(schema);
    await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.close();
  }
  return openBench(schema, true);
}

/** Closes what `openBench` opened, dropping the schema on PostgreSQL when asked. */
export async function closeBench(
  opened: Awaited<ReturnType<typeof openBench>>,
  schema: string,
  drop: boolean,
): Promise<void> {
  await opened.app.close();
  await opened.bus.stop();
  if (drop && process.env.DATABASE_URL) await opened.db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await opened.db.close();
}
