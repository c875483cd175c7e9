import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_FILE, schemaTypes } from '../scripts/db-types.ts';
import { JsonParam } from '../src/db/index.ts';
import { kysely, runNamed } from '../src/db/kysely.ts';
import { DB_KIND, type TestDb, testDb } from './helpers.ts';

describe(`typed query layer (${DB_KIND})`, () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await testDb();
  });
  afterAll(() => t.close());

  it('src/db/schema.ts holds the tables the migrations leave (else: npm run db:types)', async () => {
    expect(await schemaTypes(t.db)).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
  });

  it('tells a renamed or added column from the types on file', async () => {
    const other = await testDb();
    try {
      await other.db.exec(
        'ALTER TABLE owners RENAME COLUMN name TO title; ALTER TABLE sites ADD COLUMN x int',
      );
      const types = await schemaTypes(other.db);
      expect(types).not.toBe(readFileSync(SCHEMA_FILE, 'utf8'));
      const owners = types.slice(types.indexOf('export interface Owners'));
      expect(owners.slice(0, owners.indexOf('}'))).toContain('  title: string;');
      const sites = types.slice(types.indexOf('export interface Sites'));
      expect(sites.slice(0, sites.indexOf('}'))).toContain('  x: number | null;');
    } finally {
      await other.close();
    }
  });

  it.skipIf(DB_KIND !== 'postgres')(
    'reads the types while other schemas of the database are created and dropped',
    async () => {
      // Other test files drop their throwaway schemas at any moment; the catalog read spans them.
      let churning = true;
      const churn = (async () => {
        for (let i = 0; churning && i < 200; i++) {
          const name = `churn_${process.pid}_${i}`;
          await t.db.exec(`CREATE SCHEMA "${name}"; CREATE TABLE "${name}".x (id int)`);
          await t.db.exec(`DROP SCHEMA "${name}" CASCADE`);
        }
      })();
      try {
        const expected = readFileSync(SCHEMA_FILE, 'utf8');
        for (let i = 0; i < 3; i++) expect(await schemaTypes(t.db)).toBe(expected);
      } finally {
        churning = false;
        await churn;
      }
    },
  );

  it("runs inside Podium's transactions: a throw rolls its statements back", async () => {
    await expect(
      t.db.tx(async (q) => {
        await kysely(q).insertInto('owners').values({ name: 'rolled back' }).execute();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const id = await t.db.tx(async (q) => {
      const row = await kysely(q)
        .insertInto('owners')
        .values({ name: 'kept' })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
    const names = await kysely(t.db).selectFrom('owners').select(['id', 'name']).orderBy('id').execute();
    expect(names).toEqual([{ id, name: 'kept' }]);
  });

  it('refuses Kysely transactions, which would bypass Db.tx', async () => {
    await expect(
      kysely(t.db)
        .transaction()
        .execute(async () => 1),
    ).rejects.toThrow(/db\.tx/);
  });

  it('sends a JsonParam as one jsonb parameter', async () => {
    const rows = await sql<{ a: number; b: string }>`
      SELECT * FROM jsonb_to_recordset(${new JsonParam([
        { a: 1, b: 'x' },
        { a: 2, b: 'y' },
      ])}::jsonb) AS r(a int, b text) ORDER BY a`.execute(kysely(t.db));
    expect(rows.rows).toEqual([
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
    ]);
  });

  it('refuses text the database cannot store as a 422, as for any statement', async () => {
    await expect(
      kysely(t.db).insertInto('owners').values({ name: 'a\u0000b' }).execute(),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('runs a built query as a named statement, again and again', async () => {
    const q = kysely(t.db).selectFrom('owners').select('name').where('name', '=', 'kept');
    for (let i = 0; i < 3; i++)
      expect(await runNamed(t.db, q, 'kysely_test_owner')).toEqual([{ name: 'kept' }]);
  });
});
