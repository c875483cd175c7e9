import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './index.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Arbitrary constant: serialises concurrent migrators (several processes starting at once).
const MIGRATION_LOCK = 7_301_977;

export interface Migration {
  version: string;
  sql: string;
}

/** The forward-only migrations shipped with this build, in order. */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(path.join(dir, f), 'utf8') }));
}

/** Applies every pending migration, each in its own transaction; returns the versions applied. */
export async function migrate(db: Db, log: (msg: string) => void = () => {}): Promise<string[]> {
  const applied: string[] = [];
  await db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await q.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
  });
  for (const m of listMigrations()) {
    const done = await db.tx(async (q) => {
      await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const rows = await q.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (rows.length) return false;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      return true;
    });
    if (done) {
      applied.push(m.version);
      log(`applied migration ${m.version}`);
    }
  }
  return applied;
}

/** Versions shipped but not yet applied (readiness checks). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const rows = await db.query<{ version: string }>('SELECT version FROM schema_migrations').catch(() => []);
  const have = new Set(rows.map((r) => r.version));
  return listMigrations()
    .map((m) => m.version)
    .filter((v) => !have.has(v));
}
