import { firstValue, onlyValue } from '../../db/first-value.ts';
import { EditorialRepository } from './editorial-repository.ts';

/** SQL of the bulk import: the editorial writes plus lookups by external id and find-or-create of named types. */
export class ImportRepository extends EditorialRepository {
  async findIdByExternalId(
    table: 'owners' | 'list_templates' | 'brands' | 'offers' | 'trackers' | 'toplists',
    externalId: string,
  ): Promise<number | undefined> {
    return firstValue<number>(this.db, `SELECT id FROM ${table} WHERE external_id = $1`, [externalId]);
  }

  /** Find-or-create by name (imports). */
  async ensureNamedType(
    table: 'product_types' | 'classification_types' | 'offer_types',
    name: string,
  ): Promise<number> {
    return onlyValue<number>(
      this.db,
      `INSERT INTO ${table} (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
      [name],
    );
  }
}
