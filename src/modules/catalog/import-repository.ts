import { EditorialRepository } from './editorial-repository.ts';

/** SQL of the bulk import: the editorial writes plus lookups by external id and find-or-create of named types. */
export class ImportRepository extends EditorialRepository {
  async findIdByExternalId(
    table: 'owners' | 'list_templates' | 'brands' | 'offers' | 'trackers' | 'toplists',
    externalId: string,
  ): Promise<number | undefined> {
    const row = await this.sql
      // One of these tables, typed as one with the same columns used here (Kysely types one table at a time).
      .selectFrom(table as 'owners')
      .select('id')
      .where('external_id', '=', externalId)
      .executeTakeFirst();
    return row?.id;
  }

  /** Find-or-create by name (imports). */
  async ensureNamedType(
    table: 'product_types' | 'classification_types' | 'offer_types',
    name: string,
  ): Promise<number> {
    const row = await this.sql
      // One of these tables, typed as one with the same columns used here (Kysely types one table at a time).
      .insertInto(table as 'offer_types')
      .values({ name })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ name: eb.ref('excluded.name') })))
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }
}
