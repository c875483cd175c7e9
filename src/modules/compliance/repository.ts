import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Queryable } from '../../db/index.ts';
import { kysely, type Sql } from '../../db/kysely.ts';
import type { BrandLicences, LicenceRules } from '../../db/schema.ts';
import type { BrandRules, Licence, LicenceRule } from './rules.ts';
import type { BrandLicence, LicenceRequirement } from './types.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const licence = (r: Selectable<BrandLicences>): BrandLicence => ({
  id: r.id,
  brandId: r.brand_id,
  authority: r.authority,
  countries: r.countries,
  validFrom: iso(r.valid_from),
  validUntil: iso(r.valid_until),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

const requirement = (r: Selectable<LicenceRules>): LicenceRequirement => ({
  id: r.id,
  geoType: r.geo_type as LicenceRequirement['geoType'],
  code: r.code,
  countries: r.countries,
  authority: r.authority,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** The columns a licence write sets. */
export interface LicenceColumns {
  authority?: string;
  countries?: string[];
  validFrom?: Date | null;
  validUntil?: Date | null;
}

/** The columns a licence-rule write sets. */
export interface RuleColumns {
  geoType?: 'country' | 'market';
  code?: string;
  countries?: string[];
  authority?: string | null;
}

/**
 * SQL of compliance: brands' licences and the licence rules (its own tables), and what it reads of
 * the catalog's to judge a brand: `brands.restricted_countries` and the market toplists' covered
 * countries (what a market code of an offer's or tracker's geos means).
 */
export class ComplianceRepository {
  private readonly sql: Sql;

  constructor(db: Queryable) {
    this.sql = kysely(db);
  }

  /** The same repository bound to a transaction. */
  with(q: Queryable): ComplianceRepository {
    return new ComplianceRepository(q);
  }

  async brandExists(id: number): Promise<boolean> {
    const row = await this.sql.selectFrom('brands').select('id').where('id', '=', id).executeTakeFirst();
    return row !== undefined;
  }

  /** A brand's licences, oldest first (a brand holds a handful; capped all the same). */
  async licencesOf(brandId: number, limit: number): Promise<BrandLicence[]> {
    const rows = await this.sql
      .selectFrom('brand_licences')
      .selectAll()
      .where('brand_id', '=', brandId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(licence);
  }

  async getLicence(brandId: number, id: number): Promise<BrandLicence | undefined> {
    const r = await this.sql
      .selectFrom('brand_licences')
      .selectAll()
      .where('id', '=', id)
      .where('brand_id', '=', brandId)
      .executeTakeFirst();
    return r && licence(r);
  }

  async insertLicence(brandId: number, c: Required<LicenceColumns>): Promise<number> {
    const row = await this.sql
      .insertInto('brand_licences')
      .values({
        brand_id: brandId,
        authority: c.authority,
        countries: c.countries,
        valid_from: c.validFrom,
        valid_until: c.validUntil,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async updateLicence(brandId: number, id: number, c: LicenceColumns): Promise<boolean> {
    const row = await this.sql
      .updateTable('brand_licences')
      .set({
        authority: c.authority,
        countries: c.countries,
        valid_from: c.validFrom,
        valid_until: c.validUntil,
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('brand_id', '=', brandId)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async deleteLicence(brandId: number, id: number): Promise<boolean> {
    const row = await this.sql
      .deleteFrom('brand_licences')
      .where('id', '=', id)
      .where('brand_id', '=', brandId)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Every licence rule, by code (a workspace holds tens, capped by the caller's limit). */
  async listRules(limit: number): Promise<LicenceRequirement[]> {
    const rows = await this.sql
      .selectFrom('licence_rules')
      .selectAll()
      .orderBy('code')
      .limit(limit)
      .execute();
    return rows.map(requirement);
  }

  async getRule(id: number): Promise<LicenceRequirement | undefined> {
    const r = await this.sql.selectFrom('licence_rules').selectAll().where('id', '=', id).executeTakeFirst();
    return r && requirement(r);
  }

  async insertRule(c: Required<RuleColumns>): Promise<number> {
    const row = await this.sql
      .insertInto('licence_rules')
      .values({ geo_type: c.geoType, code: c.code, countries: c.countries, authority: c.authority })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async updateRule(id: number, c: RuleColumns): Promise<boolean> {
    const row = await this.sql
      .updateTable('licence_rules')
      .set({
        geo_type: c.geoType,
        code: c.code,
        countries: c.countries,
        authority: c.authority,
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async deleteRule(id: number): Promise<boolean> {
    const row = await this.sql
      .deleteFrom('licence_rules')
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The licence rules as the checks take them. */
  async ruleSet(): Promise<LicenceRule[]> {
    const rows = await this.sql
      .selectFrom('licence_rules')
      .select(['id', 'code', 'countries', 'authority'])
      .orderBy('code')
      .execute();
    return rows;
  }

  /**
   * Market → the countries the market toplists of that market cover (all sites together), keyed by
   * code (`NORDICS`) and by name (`Nordics`): offers' and trackers' geos name markets either way.
   */
  async markets(): Promise<Map<string, Set<string>>> {
    const rows = await this.sql
      .selectFrom('toplists')
      .select(['geo_code', 'geo_name', 'covered_countries'])
      .where('geo_type', '=', 'market')
      .execute();
    const out = new Map<string, Set<string>>();
    for (const r of rows)
      for (const key of new Set([r.geo_code, r.geo_name])) {
        const set = out.get(key) ?? new Set<string>();
        for (const c of r.covered_countries ?? []) set.add(c);
        out.set(key, set);
      }
    return out;
  }

  /** The restricted countries (codes) and licences of these brands. */
  async brandRules(ids: readonly number[]): Promise<Map<number, BrandRules>> {
    if (!ids.length) return new Map();
    const only = sql<number>`ANY(${[...ids]}::int[])`;
    return this.rulesOf(
      await this.sql
        .selectFrom('brands')
        .select(['id', 'name', 'restricted_countries'])
        .where('id', '=', only)
        .execute(),
      await this.licenceRows().where('brand_id', '=', only).execute(),
    );
  }

  /** The rules of every brand (at most the first `limit` by id). */
  async allBrandRules(limit: number): Promise<Map<number, BrandRules>> {
    const brands = await this.sql
      .selectFrom('brands')
      .select(['id', 'name', 'restricted_countries'])
      .orderBy('id')
      .limit(limit)
      .execute();
    return this.rulesOf(brands, await this.licenceRows().execute());
  }

  private licenceRows() {
    return this.sql
      .selectFrom('brand_licences')
      .select(['id', 'brand_id', 'authority', 'countries', 'valid_from', 'valid_until'])
      .orderBy('id');
  }

  private rulesOf(
    brands: { id: number; name: string; restricted_countries: string[] }[],
    licences: {
      id: number;
      brand_id: number;
      authority: string;
      countries: string[];
      valid_from: Date | null;
      valid_until: Date | null;
    }[],
  ): Map<number, BrandRules> {
    const out = new Map<number, BrandRules>();
    const held = new Map<number, Licence[]>();
    for (const l of licences) {
      const list = held.get(l.brand_id) ?? [];
      list.push({
        id: l.id,
        authority: l.authority,
        countries: l.countries,
        validFrom: l.valid_from ? l.valid_from.getTime() : null,
        validUntil: l.valid_until ? l.valid_until.getTime() : null,
      });
      held.set(l.brand_id, list);
    }
    for (const b of brands)
      out.set(b.id, {
        id: b.id,
        name: b.name,
        restrictedCountries: b.restricted_countries,
        licences: held.get(b.id) ?? [],
      });
    return out;
  }

  /**
   * A window of the compliance report: every entry withheld now from a live edition (from the list
   * itself, or from the visitors a global list's variants are for) and every violation a live
   * edition was published over with an override, newest first, with how many match.
   */
  async report(
    f: ReportFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: ReportEntry[]; total: number }> {
    const siteIds = f.siteIds ? [...f.siteIds] : null;
    const rows = await sql<Record<string, unknown>>`
      WITH live AS (
        SELECT t.id AS toplist_id, t.site_id, s.domain, t.slug, t.geo_type, t.geo_code, e.id AS edition_id,
               e.version, e.published_at, e.withheld, e.compliance_override
        FROM toplists t
        JOIN editions e ON e.id = t.live_edition_id
        JOIN sites s ON s.id = t.site_id
        WHERE (${f.siteId ?? null}::int IS NULL OR t.site_id = ${f.siteId ?? null}::int)
          AND (${siteIds}::int[] IS NULL OR t.site_id = ANY(${siteIds}::int[]))
      ), entries AS (
        SELECT l.*, 'withheld' AS status, 'list' AS scope, w.value AS v, w.value->>'since' AS since
        FROM live l, jsonb_array_elements(l.withheld) w
        UNION ALL
        SELECT l.*, 'withheld', 'visitors', w.value, w.value->>'since'
        FROM live l JOIN edition_variants ev ON ev.edition_id = l.edition_id, jsonb_array_elements(ev.withheld) w
        UNION ALL
        SELECT l.*, 'overridden', 'list', w.value, to_char(l.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        FROM live l, jsonb_array_elements(COALESCE(l.compliance_override->'violations', '[]'::jsonb)) w
      )
      SELECT toplist_id, site_id, domain, slug, geo_type, geo_code, version, status, scope, v, since,
             count(*) OVER () AS total
      FROM entries
      WHERE (${f.brandId ?? null}::int IS NULL OR (v->>'brandId')::int = ${f.brandId ?? null}::int)
        AND (${f.country ?? null}::text IS NULL OR v->>'country' = ${f.country ?? null}::text)
        AND (${f.status ?? null}::text IS NULL OR status = ${f.status ?? null}::text)
      ORDER BY since DESC NULLS LAST, toplist_id, (v->>'itemId')::int, v->>'country', status, scope
      LIMIT ${limit} OFFSET ${offset}
    `.execute(this.sql);
    return {
      total: Number(rows.rows[0]?.total ?? 0),
      rows: rows.rows.map((r) => {
        const v = r.v as Record<string, unknown>;
        return {
          status: r.status as ReportEntry['status'],
          scope: r.scope as ReportEntry['scope'],
          siteId: r.site_id as number,
          siteDomain: r.domain as string,
          toplistId: r.toplist_id as number,
          toplistSlug: r.slug as string,
          geo: { type: r.geo_type as string, code: r.geo_code as string },
          version: String(r.version),
          itemId: v.itemId as number,
          position: v.position as number,
          brandId: v.brandId as number,
          brandName: v.brandName as string,
          country: v.country as string,
          rule: v.rule as string,
          ruleId: (v.ruleId as number | null) ?? null,
          reason: v.reason as string,
          since: (r.since as string | null) ?? null,
        };
      }),
    };
  }
}

/** What the compliance report is narrowed to. */
export interface ReportFilter {
  siteId?: number | undefined;
  /** Only these sites' entries (a person limited to some sites); undefined: every site. */
  siteIds?: readonly number[] | undefined;
  brandId?: number | undefined;
  country?: string | undefined;
  status?: 'withheld' | 'overridden' | undefined;
}

/** One entry of the compliance report: an item of a live list not shown (or shown by override) in a country, and why. */
export interface ReportEntry {
  status: 'withheld' | 'overridden';
  /** `list`: the list itself (a country it covers); `visitors`: a global list's visitors of that country. */
  scope: 'list' | 'visitors';
  siteId: number;
  siteDomain: string;
  toplistId: number;
  toplistSlug: string;
  geo: { type: string; code: string };
  version: string;
  itemId: number;
  /** The item's position in the list as published. */
  position: number;
  brandId: number;
  brandName: string;
  country: string;
  rule: string;
  ruleId: number | null;
  reason: string;
  /** When it began to be withheld (for an override: the publish); null for entries older than this report. */
  since: string | null;
}
