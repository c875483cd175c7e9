import type { Queryable } from '../../db/index.ts';

export interface LiveEditionRow {
  toplistId: number;
  slug: string;
  templateId: number;
  geoType: string;
  geoCode: string;
  coveredCountries: string[] | null;
  updatedAt: Date;
  liveFrom: Date | null;
  liveUntil: Date | null;
  editionId: number;
  /** Grows each time the edition's links are re-rendered (a new tracking domain). */
  renderRev: number;
  document: string;
}

/** A stored visitor variant of a live edition and the visitor countries it is served to. */
export interface VariantRow {
  id: number;
  editionId: number;
  countries: string[];
  rev: number;
  document: string;
}

/** Read-path SQL: the live editions of one site, with the stored wire documents. */
export class DeliveryRepository {
  constructor(private readonly db: Queryable) {}

  async liveEditions(siteId: number): Promise<LiveEditionRow[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `SELECT t.id, t.slug, t.template_id, t.geo_type, t.geo_code, t.covered_countries, t.updated_at, t.live_from, t.live_until,
              e.id AS edition_id, e.render_rev, e.document
       FROM toplists t JOIN editions e ON e.id = t.live_edition_id
       WHERE t.site_id = $1`,
      [siteId],
    );
    return rows.map((r) => ({
      toplistId: r.id as number,
      slug: r.slug as string,
      templateId: r.template_id as number,
      geoType: r.geo_type as string,
      geoCode: r.geo_code as string,
      coveredCountries: (r.covered_countries as string[] | null) ?? null,
      updatedAt: r.updated_at as Date,
      liveFrom: r.live_from as Date | null,
      liveUntil: r.live_until as Date | null,
      editionId: r.edition_id as number,
      renderRev: r.render_rev as number,
      document: r.document as string,
    }));
  }

  /** The visitor variants of the site's live editions (global lists withholding items per visitor country). */
  async liveVariants(siteId: number): Promise<VariantRow[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `SELECT v.id, v.edition_id, v.countries, v.rev, v.document
       FROM edition_variants v JOIN toplists t ON t.live_edition_id = v.edition_id
       WHERE t.site_id = $1`,
      [siteId],
    );
    return rows.map((r) => ({
      id: r.id as number,
      editionId: r.edition_id as number,
      countries: r.countries as string[],
      rev: r.rev as number,
      document: r.document as string,
    }));
  }
}
