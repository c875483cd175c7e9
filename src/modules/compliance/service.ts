import type { ChangeBus } from '../../db/changes.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { type CsvColumn, toCsv } from '../../lib/csv.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import { countries, countryCodeOf, isCountryCode, MARKET_CODE } from '../../lib/geo.ts';
import { DEFAULT_PER_PAGE, type Page, pageMeta, pageWindow } from '../../lib/paging.ts';
import type { AuditEntry } from '../audit/repository.ts';
import type { ComplianceChange, PublishGuard } from '../catalog/publishing.ts';
import type { EditionSnapshot } from '../catalog/types.ts';
import type { WireToplist } from '../delivery/schemas.ts';
import type { ClickGuard } from '../tracking/service.ts';
import {
  ComplianceRepository,
  type LicenceColumns,
  type ReportEntry,
  type ReportFilter,
  type RuleColumns,
} from './repository.ts';
import {
  type BrandRules,
  type CheckedItem,
  checkBrand,
  coveredBy,
  type Geos,
  type RuleSet,
  type Violation,
  violations,
} from './rules.ts';
import type { LicenceInputT, RuleInputT } from './schemas.ts';
import type { BrandLicence, LicenceRequirement } from './types.ts';

/** Most licences one brand may hold, and licence rules a workspace may hold (each list answers in one page). */
export const MAX_LICENCES_PER_BRAND = 100;
export const MAX_RULES = 500;
/** Brands whose rules the click guard holds in memory (a workspace has hundreds). */
export const MAX_BRANDS_JUDGED = 100_000;

/** Most entries one CSV export of the compliance report holds; a bigger one must be narrowed by a filter. */
export const REPORT_MAX_EXPORT_ROWS = 50_000;

const REPORT_COLUMNS: CsvColumn<ReportEntry>[] = [
  ['status', (r) => r.status],
  ['scope', (r) => r.scope],
  ['site_id', (r) => r.siteId],
  ['site_domain', (r) => r.siteDomain],
  ['toplist_id', (r) => r.toplistId],
  ['toplist_slug', (r) => r.toplistSlug],
  ['geo_type', (r) => r.geo.type],
  ['geo_code', (r) => r.geo.code],
  ['version', (r) => r.version],
  ['item_id', (r) => r.itemId],
  ['position', (r) => r.position],
  ['brand_id', (r) => r.brandId],
  ['brand_name', (r) => r.brandName],
  ['country', (r) => r.country],
  ['rule', (r) => r.rule],
  ['rule_id', (r) => r.ruleId],
  ['reason', (r) => r.reason],
  ['since', (r) => r.since],
];

const FIELD_BY_CONSTRAINT = { licence_rules_code_key: 'geo.code', brand_licences_check: 'validUntil' };

async function guard<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw fromDbError(err, FIELD_BY_CONSTRAINT) ?? err;
  }
}

/** Refuses codes that name no country, naming the index. */
function checkCountries(field: string, codes: readonly string[]): void {
  for (const [i, c] of codes.entries())
    if (!isCountryCode(c))
      throw invalidField(`${field}.${i}`, `${JSON.stringify(c)} is not an ISO 3166-1 alpha-2 country code`);
}

const at = (s: string | null | undefined) => (s === undefined ? undefined : s === null ? null : new Date(s));

function licenceColumns(i: Partial<LicenceInputT>): LicenceColumns {
  if (i.countries) checkCountries('countries', i.countries);
  return {
    authority: i.authority?.trim(),
    countries: i.countries && [...i.countries].sort(),
    validFrom: at(i.validFrom),
    validUntil: at(i.validUntil),
  };
}

function ruleColumns(i: Partial<RuleInputT>): RuleColumns {
  const authority = i.authority === undefined ? undefined : (i.authority?.trim() ?? null);
  if (!i.geo) return { authority };
  const g = i.geo;
  if (g.type === 'country') {
    if (!isCountryCode(g.code))
      throw invalidField('geo.code', `${JSON.stringify(g.code)} is not an ISO 3166-1 alpha-2 country code`);
    if (g.coveredCountries?.length)
      throw invalidField('geo.coveredCountries', 'must be null for a country rule');
    return { geoType: 'country', code: g.code, countries: [g.code], authority };
  }
  if (!MARKET_CODE.test(g.code))
    throw invalidField('geo.code', 'a market code is 2-32 uppercase letters, digits or _ (e.g. NORDICS)');
  if (!g.coveredCountries?.length)
    throw invalidField('geo.coveredCountries', 'a market rule must list the countries it covers');
  checkCountries('geo.coveredCountries', g.coveredCountries);
  return { geoType: 'market', code: g.code, countries: [...g.coveredCountries].sort(), authority };
}

/**
 * Geos as the API stores them (country names, or codes) with the countries as codes; an entry that
 * names no country holds none, so geos of only such entries hold no country at all.
 */
export function geosOf(g: { countries: readonly string[]; markets: readonly string[] }): Geos {
  return {
    countries: g.countries.map((c) => countryCodeOf(c) ?? `?${c}`),
    markets: g.markets,
  };
}

/** The items of an edition snapshot as the checks see them: brand, offer geos, trackers' geos. */
export function checkedItems(s: EditionSnapshot): CheckedItem[] {
  return s.toplist.items.map((i) => {
    const o = s.offers.get(i.offerId);
    return {
      id: i.id,
      position: i.position,
      brandId: i.brandId,
      offer: o && geosOf(o.geos),
      trackers: o?.trackers.map((t) => geosOf(t.geos)),
    };
  });
}

/** How often the job runner re-checks live editions: a licence's validity beginning or ending takes effect within it. */
export const RECHECK_EVERY_MS = 60_000;

/** Entries of each side of a visitor-level change kept in its audit row (an offer for one country is withheld in ~250). */
const AUDITED_VISITOR_ENTRIES = 50;

const entryKey = (v: Violation) => `${v.itemId}:${v.country}:${v.rule}`;

/**
 * The audit row of a live edition whose withheld items changed (written by the system, not a
 * token): `withheld` for the list itself, before and after; for the visitors of other countries a
 * global list reaches, how many entries are withheld before and after and (after) the first
 * entries newly withheld and served again.
 */
export function withholdingAudit(c: ComplianceChange): AuditEntry {
  const minus = (a: readonly Violation[], b: readonly Violation[]) => {
    const keys = new Set(b.map(entryKey));
    return a.filter((v) => !keys.has(entryKey(v))).slice(0, AUDITED_VISITOR_ENTRIES);
  };
  const [before, after] = c.visitors
    ? [
        { version: c.version, visitorWithheldTotal: c.before.length },
        {
          version: c.version,
          visitorWithheldTotal: c.after.length,
          visitorsNewlyWithheld: minus(c.after, c.before),
          visitorsServedAgain: minus(c.before, c.after),
        },
      ]
    : [
        { version: c.version, withheld: c.before },
        { version: c.version, withheld: c.after },
      ];
  return {
    adminTokenId: null,
    actor: 'system:compliance',
    action: 'compliance.withheld_changed',
    targetType: 'toplists',
    targetId: String(c.toplistId),
    status: 200,
    requestId: null,
    fields: [],
    before,
    after,
  };
}

/** The items of a published wire document as the checks see them. */
export function wireItems(d: WireToplist): CheckedItem[] {
  return d.items.map((i) => ({
    id: i.id,
    position: i.position,
    brandId: i.brand.id,
    offer: geosOf(i.offer.geos),
    trackers: i.offer.trackers.map((t) => geosOf(t.geos)),
  }));
}

/**
 * Compliance: brands' licences and the countries' and markets' "licence required" rules (admin
 * CRUD), and the guard publishing asks before a list goes live.
 */
export class ComplianceService implements PublishGuard, ClickGuard {
  private readonly repo: ComplianceRepository;
  private enforce: (() => Promise<unknown>) | undefined;
  /** What `/go` judges clicks by: every brand's rules and the licence rules, read once until a rule changes. */
  private clickRules: Promise<{ brands: Map<number, BrandRules>; set: RuleSet }> | undefined;

  constructor(
    private readonly db: Db,
    private readonly bus?: ChangeBus,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.repo = new ComplianceRepository(db);
    bus?.subscribe((c) => {
      if (c.kind === 'compliance' || c.kind === 'all') this.clickRules = undefined;
    });
  }

  /**
   * Whether a visitor from `country` may be sent to the operator of `brandId` now: the brand is
   * not restricted there and holds a licence in force where a licence rule asks for one. (The
   * link's offer and trackers were judged when its list was published and since.)
   */
  async clickAllowed(brandId: number, country: string): Promise<boolean> {
    if (!isCountryCode(country)) return true;
    this.clickRules ??= this.loadClickRules();
    const loading = this.clickRules;
    const { brands, set } = await loading.catch((err) => {
      if (this.clickRules === loading) this.clickRules = undefined;
      throw err;
    });
    const brand = brands.get(brandId);
    return brand === undefined || checkBrand(brand, country, set, this.now().getTime()).allowed;
  }

  private async loadClickRules() {
    return { brands: await this.repo.allBrandRules(MAX_BRANDS_JUDGED), set: await this.ruleSet() };
  }

  /* Licences of a brand */

  async listLicences(brandId: number): Promise<BrandLicence[]> {
    if (!(await this.repo.brandExists(brandId))) throw notFound('Brand');
    return this.repo.licencesOf(brandId, MAX_LICENCES_PER_BRAND);
  }

  async getLicence(brandId: number, id: number): Promise<BrandLicence> {
    return (await this.repo.getLicence(brandId, id)) ?? Promise.reject(notFound('Licence'));
  }

  async createLicence(brandId: number, input: LicenceInputT): Promise<BrandLicence> {
    const c = licenceColumns(input);
    const id = await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      if (!(await repo.brandExists(brandId))) throw notFound('Brand');
      if ((await repo.licencesOf(brandId, MAX_LICENCES_PER_BRAND)).length >= MAX_LICENCES_PER_BRAND)
        throw new AppError('conflict', `A brand holds at most ${MAX_LICENCES_PER_BRAND} licences`);
      return guard(
        repo.insertLicence(brandId, {
          authority: c.authority!,
          countries: c.countries!,
          validFrom: c.validFrom ?? null,
          validUntil: c.validUntil ?? null,
        }),
      );
    });
    await this.rulesChanged();
    return this.getLicence(brandId, id);
  }

  async updateLicence(brandId: number, id: number, patch: Partial<LicenceInputT>): Promise<BrandLicence> {
    if (!(await guard(this.repo.updateLicence(brandId, id, licenceColumns(patch)))))
      throw notFound('Licence');
    await this.rulesChanged();
    return this.getLicence(brandId, id);
  }

  async deleteLicence(brandId: number, id: number): Promise<BrandLicence> {
    const before = await this.getLicence(brandId, id);
    await this.repo.deleteLicence(brandId, id);
    await this.rulesChanged();
    return before;
  }

  /* Licence rules */

  listRules(): Promise<LicenceRequirement[]> {
    return this.repo.listRules(MAX_RULES);
  }

  async getRule(id: number): Promise<LicenceRequirement> {
    return (await this.repo.getRule(id)) ?? Promise.reject(notFound('Licence rule'));
  }

  async createRule(input: RuleInputT): Promise<LicenceRequirement> {
    const c = ruleColumns(input);
    const id = await this.db.tx(async (q) => {
      const repo = this.repo.with(q);
      if ((await repo.listRules(MAX_RULES)).length >= MAX_RULES)
        throw new AppError('conflict', `At most ${MAX_RULES} licence rules exist at once`);
      return guard(
        repo.insertRule({
          geoType: c.geoType!,
          code: c.code!,
          countries: c.countries!,
          authority: c.authority ?? null,
        }),
      );
    });
    await this.rulesChanged();
    return this.getRule(id);
  }

  async updateRule(id: number, patch: Partial<RuleInputT>): Promise<LicenceRequirement> {
    if (!(await guard(this.repo.updateRule(id, ruleColumns(patch))))) throw notFound('Licence rule');
    await this.rulesChanged();
    return this.getRule(id);
  }

  async deleteRule(id: number): Promise<LicenceRequirement> {
    const before = await this.getRule(id);
    await this.repo.deleteRule(id);
    await this.rulesChanged();
    return before;
  }

  /* The compliance report */

  /** One page of what live lists withhold now (and show by override), newest first. */
  async report(f: ReportFilter, page = 1, perPage = DEFAULT_PER_PAGE): Promise<Page<ReportEntry>> {
    const { limit, offset } = pageWindow(page, perPage);
    const { rows, total } = await this.repo.report(f, limit, offset);
    return { data: rows, meta: pageMeta(total, page, perPage) };
  }

  /** The whole report for `f` as CSV (at most REPORT_MAX_EXPORT_ROWS entries). */
  async reportCsv(f: ReportFilter): Promise<string> {
    const { rows } = await this.repo.report(f, REPORT_MAX_EXPORT_ROWS + 1, 0);
    if (rows.length > REPORT_MAX_EXPORT_ROWS)
      throw invalidField(
        'site_id',
        `more than ${REPORT_MAX_EXPORT_ROWS} entries: narrow the export by site, brand or country`,
      );
    return toCsv(
      REPORT_COLUMNS.map(([name]) => name),
      rows.map((r) => REPORT_COLUMNS.map(([, cell]) => cell(r))),
    );
  }

  /* Checks and enforcement */

  /** Sets what re-checks the live editions when a rule changes (built after the catalog, which asks this guard). */
  enforceWith(enforce: () => Promise<unknown>): void {
    this.enforce = enforce;
  }

  /** Re-checks the live editions now (a rule changed, or a licence's validity began or ended), and tells every process's click guard. */
  async rulesChanged(): Promise<unknown> {
    const changes = await this.enforce?.();
    this.clickRules = undefined;
    await this.bus?.publish({ kind: 'compliance' });
    return changes;
  }

  /** The violations of each published document (by key) for the countries its geo covers at `when`. */
  liveViolations(
    q: Queryable,
    docs: ReadonlyMap<number, WireToplist>,
    when: Date,
  ): Promise<Map<number, Violation[]>> {
    return this.judge(q, docs, when, (d) =>
      coveredBy({ type: d.geo.geo_type, code: d.geo.code, coveredCountries: d.geo.coveredCountries }),
    );
  }

  /**
   * The violations of each published document (by key) for a visitor of every country at `when`:
   * what a global list reached through the geo cascade must not show that visitor.
   */
  visitorViolations(
    q: Queryable,
    docs: ReadonlyMap<number, WireToplist>,
    when: Date,
  ): Promise<Map<number, Violation[]>> {
    const every = [...countries().keys()];
    return this.judge(q, docs, when, () => every);
  }

  private async judge(
    q: Queryable,
    docs: ReadonlyMap<number, WireToplist>,
    when: Date,
    countriesOf: (d: WireToplist) => readonly string[],
  ): Promise<Map<number, Violation[]>> {
    const out = new Map<number, Violation[]>();
    if (!docs.size) return out;
    const brandIds = new Set<number>();
    for (const d of docs.values()) for (const i of d.items) brandIds.add(i.brand.id);
    const brands = await this.repo.with(q).brandRules([...brandIds]);
    const set = await this.ruleSet(q);
    for (const [key, d] of docs) {
      const found = violations(wireItems(d), countriesOf(d), brands, set, when.getTime());
      if (found.length) out.set(key, found);
    }
    return out;
  }

  /** The rules in force, read on `q` (a publish reads them in its own transaction). */
  async ruleSet(q: Queryable = this.db): Promise<RuleSet> {
    const repo = this.repo.with(q);
    return { rules: await repo.ruleSet(), markets: await repo.markets() };
  }

  /**
   * Every item of the snapshot's toplist that may not be advertised in a country its geo covers
   * (a country list: its country; a market: each covered country; a global list: none, the
   * visitor-level checks judge it), at `when`.
   */
  async violations(q: Queryable, snapshot: EditionSnapshot, when: Date): Promise<Violation[]> {
    const items = checkedItems(snapshot);
    const brands = await this.repo.with(q).brandRules([...new Set(items.map((i) => i.brandId))]);
    return violations(items, coveredBy(snapshot.toplist.geo), brands, await this.ruleSet(q), when.getTime());
  }
}
