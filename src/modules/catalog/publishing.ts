import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { ChangeBus } from '../../db/changes.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, conflict, invalidField, notFound } from '../../lib/errors.ts';
import { DEFAULT_PER_PAGE, type Page, pageMeta, pageWindow } from '../../lib/paging.ts';
import { wireTimestamp } from '../../lib/time.ts';
import type { Violation } from '../compliance/rules.ts';
import type { WireToplist } from '../delivery/schemas.ts';
import type { ChangeEvents } from '../webhooks/service.ts';
import type { ToplistChange } from '../webhooks/types.ts';
import { guard } from './crud.ts';
import { renderEdition, retargetLinks } from './edition-render.ts';
import { checkWindow } from './input.ts';
import { PublishingRepository, type Withheld } from './publishing-repository.ts';
import type { ItemInputT } from './schemas.ts';
import type { EditionMeta, EditionSnapshot, ResolvedTrackingLink, Toplist } from './types.ts';

/** What publishing asks before a draft goes live, and of live editions when the rules change. */
export interface PublishGuard {
  /** The draft's violations for the countries its geo covers at `when`, read on `q` (the publish transaction). */
  violations(q: Queryable, snapshot: EditionSnapshot, when: Date): Promise<Violation[]>;
  /** The violations of each published document (by key) for the countries its geo covers at `when`. */
  liveViolations(
    q: Queryable,
    docs: ReadonlyMap<number, WireToplist>,
    when: Date,
  ): Promise<Map<number, Violation[]>>;
  /** The violations of each published document (by key) for a visitor of every country at `when`. */
  visitorViolations(
    q: Queryable,
    docs: ReadonlyMap<number, WireToplist>,
    when: Date,
  ): Promise<Map<number, Violation[]>>;
  /** Told when a brand's restrictions changed: re-checks the live editions. */
  rulesChanged(): Promise<unknown>;
}

/**
 * A live edition whose served items changed because the rules did: what it withholds before and
 * after, from the list itself or (`visitors`) from the visitors of the countries its variants are for.
 */
export interface ComplianceChange {
  toplistId: number;
  siteId: number;
  version: string;
  visitors: boolean;
  before: Withheld[];
  after: Withheld[];
}

/** Live editions re-checked per transaction: each batch locks its editions only while it runs. */
const RECHECK_BATCH = 200;

const violationKey = (v: Pick<Violation, 'itemId' | 'country' | 'rule'>) =>
  `${v.itemId}:${v.country}:${v.rule}`;

const sameViolations = (a: readonly Violation[], b: readonly Violation[]) =>
  JSON.stringify(a.map(violationKey)) === JSON.stringify(b.map(violationKey));

/** `found` with each entry's `since` kept from `before` when it was withheld already, else `when`. */
function withSince(found: readonly Violation[], before: readonly Withheld[], when: Date): Withheld[] {
  const since = new Map(before.map((v) => [violationKey(v), v.since]));
  return found.map((v) => ({ ...v, since: since.get(violationKey(v)) ?? when.toISOString() }));
}

/**
 * The visitor variants a global document needs, by the set of items they withhold (sorted ids,
 * comma-separated): the countries whose visitors get each one and the violations behind it.
 */
function variantGroups(found: readonly Violation[]) {
  const byCountry = new Map<string, Violation[]>();
  for (const v of found) {
    const list = byCountry.get(v.country);
    if (list) list.push(v);
    else byCountry.set(v.country, [v]);
  }
  const groups = new Map<string, { itemIds: Set<number>; countries: string[]; found: Violation[] }>();
  for (const [country, vs] of [...byCountry].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const ids = [...new Set(vs.map((v) => v.itemId))].sort((a, b) => a - b);
    const key = ids.join(',');
    const g = groups.get(key) ?? { itemIds: new Set(ids), countries: [], found: [] };
    g.countries.push(country);
    g.found.push(...vs);
    groups.set(key, g);
  }
  return groups;
}

/** The published document without the withheld items, the others moved up (positions 1..n). */
function withholding(doc: WireToplist, itemIds: ReadonlySet<number>, at: Date): string {
  const items = doc.items.filter((i) => !itemIds.has(i.id)).map((i, k) => ({ ...i, position: k + 1 }));
  return JSON.stringify({ ...doc, updatedAt: wireTimestamp(at), items });
}

/** An audited exception to the compliance guard: who published over which violations, and why. */
export interface ComplianceOverride {
  reason: string;
}

/** Violations named in one refusal (the rest are counted): a list has at most a few hundred item × country pairs. */
const VIOLATIONS_SHOWN = 50;

/** The 422 of a publish refused by the compliance guard, naming the first violation and listing the others. */
export function complianceRefusal(found: readonly Violation[]): AppError {
  const v = found[0]!;
  const more = found.length > 1 ? ` (and ${found.length - 1} more)` : '';
  return new AppError(
    'compliance_violation',
    `item ${v.itemId} at position ${v.position} (brand ${v.brandId} "${v.brandName}") may not be advertised in ${v.country}: ${v.reason} [${v.rule}]${more}`,
    { violations: found.slice(0, VIOLATIONS_SHOWN), total: found.length },
  );
}

/** A new public tracking-link slug: 12 URL-safe characters (72 random bits). */
const newLinkSlug = () => randomBytes(9).toString('base64url');

/**
 * Refuses draft items a save would refuse (422 naming the item's field): a position used twice, an
 * id of another toplist's item, an offer that does not exist or belongs to another brand.
 */
async function checkItems(repo: PublishingRepository, toplistId: number, items: readonly ItemInputT[]) {
  const seen = new Set<number>();
  for (const [i, it] of items.entries()) {
    if (seen.has(it.position))
      throw invalidField(`items.${i}.position`, `position ${it.position} is used twice`);
    seen.add(it.position);
  }
  const ownIds = await repo.itemIdsOf(toplistId);
  for (const [i, it] of items.entries()) {
    if (it.id !== undefined && !ownIds.has(it.id))
      throw invalidField(`items.${i}.id`, `item ${it.id} does not belong to this toplist`);
    const brandOfOffer = await repo.offerBrand(it.offerId);
    if (brandOfOffer === undefined)
      throw invalidField(`items.${i}.offerId`, `offer ${it.offerId} does not exist`);
    if (brandOfOffer !== it.brandId)
      throw invalidField(
        `items.${i}.offerId`,
        `offer ${it.offerId} belongs to brand ${brandOfOffer}, not ${it.brandId}`,
      );
  }
}

/**
 * Publishing: a toplist's draft items, freezing the draft into immutable editions, the live
 * edition, and the tracking links the editions point at.
 */
export class PublishingService {
  private readonly repo: PublishingRepository;

  constructor(
    private readonly db: Db,
    private readonly bus: ChangeBus,
    private readonly config: Pick<Config, 'publicUrl'>,
    private readonly now: () => Date,
    /** Told of publishes and unpublishes inside their transaction (the webhooks outbox). */
    private readonly events?: ChangeEvents,
    /** Asked before each publish (the compliance guard); none: every draft may go live. */
    private readonly guard?: PublishGuard,
  ) {
    this.repo = new PublishingRepository(db);
  }

  /** Where the draft's brands may not be advertised if it were published now (the draft editor's warnings). */
  async draftViolations(toplistId: number): Promise<Violation[]> {
    const snapshot = await this.repo.editionSnapshot(toplistId);
    if (!snapshot) throw notFound('Toplist');
    return this.guard ? this.guard.violations(this.db, snapshot, this.now()) : [];
  }

  /**
   * Where `items` (the editor's unsaved draft) would meet the guard if they were saved and the list
   * published now: checked like a save, judged like a publish, nothing written. Items not saved yet
   * carry no id: their violations name them by position, with `itemId` null.
   */
  async proposedViolations(
    toplistId: number,
    items: ItemInputT[],
  ): Promise<(Omit<Violation, 'itemId'> & { itemId: number | null })[]> {
    await this.getToplist(toplistId);
    await checkItems(this.repo, toplistId, items);
    const draft = items.map((it) => ({
      ...it,
      id: it.id ?? 0,
      dealId: it.dealId ?? 0,
      isLocked: it.isLocked ?? false,
    }));
    const snapshot = await this.repo.editionSnapshot(toplistId, draft);
    if (!snapshot) throw notFound('Toplist');
    if (!this.guard) return [];
    const found = await this.guard.violations(this.db, snapshot, this.now());
    return found.map((v) => ({ ...v, itemId: v.itemId === 0 ? null : v.itemId }));
  }

  /** Runs `fn` in a transaction, turning constraint violations into client errors. */
  private tx<T>(fn: (repo: PublishingRepository, q: Queryable) => Promise<T>): Promise<T> {
    return guard(this.db.tx((q) => fn(this.repo.with(q), q)));
  }

  private async getToplist(id: number): Promise<Toplist> {
    return (await this.repo.getToplist(id)) ?? Promise.reject(notFound('Toplist'));
  }

  /**
   * Replaces a toplist's draft items. Items carrying an `id` keep it (so the wire item id is
   * stable across editions); the others are new. A locked toplist refuses edits.
   */
  async replaceItems(toplistId: number, items: ItemInputT[]): Promise<Toplist> {
    await this.tx(async (repo) => {
      if (!(await repo.lockToplist(toplistId))) throw notFound('Toplist');
      const t = await repo.getToplist(toplistId);
      if (t!.locked)
        throw conflict('Toplist is locked: unlock it (PATCH locked=false) before editing its items');
      await checkItems(repo, toplistId, items);
      await repo.replaceItems(
        toplistId,
        items.map((it) => ({ ...it, dealId: it.dealId ?? 0, isLocked: it.isLocked ?? false })),
      );
    });
    return this.getToplist(toplistId);
  }

  /**
   * Freezes the draft into a new immutable edition (version = previous + 1), renders its wire
   * document once, and makes it the live edition. Caches everywhere drop the site's entry
   * after the commit. A draft the compliance guard finds violations in is refused (422) unless
   * `override` gives the reason; the edition then keeps the reason and what it overrode.
   */
  async publish(
    toplistId: number,
    opts: {
      by?: number | null;
      liveFrom?: string | null;
      liveUntil?: string | null;
      override?: ComplianceOverride;
    } = {},
  ): Promise<{ toplist: Toplist; version: string; publishedAt: string; overridden: Violation[] }> {
    const publishedAt = this.now();
    const result = await this.tx(async (repo, q) => {
      if (!(await repo.lockToplist(toplistId))) throw notFound('Toplist');
      if (opts.liveFrom !== undefined || opts.liveUntil !== undefined) {
        const current = (await repo.getToplist(toplistId))!;
        const liveFrom = opts.liveFrom === undefined ? current.liveFrom : opts.liveFrom;
        const liveUntil = opts.liveUntil === undefined ? current.liveUntil : opts.liveUntil;
        checkWindow(liveFrom, liveUntil);
        await repo.update('toplists', toplistId, { liveFrom, liveUntil });
      }
      const snapshot = (await repo.editionSnapshot(toplistId))!;
      const t = snapshot.toplist;
      const found = this.guard ? await this.guard.violations(q, snapshot, publishedAt) : [];
      if (found.length && !opts.override) throw complianceRefusal(found);
      const wanted = t.items.flatMap((i) =>
        (snapshot.offers.get(i.offerId)?.trackers ?? []).map((tr) => ({
          trackerId: tr.id,
          position: i.position,
          slug: newLinkSlug(),
        })),
      );
      const linkSlugs = await repo.ensureTrackingLinks(t.siteId, t.id, wanted);
      const version = await repo.nextVersion(toplistId);
      const trackingBase = snapshot.siteTrackingBase ?? this.config.publicUrl;
      const document = JSON.stringify(
        renderEdition({ snapshot, version, publishedAt, linkSlugs, publicUrl: trackingBase }),
      );
      const editionId = await repo.insertEdition({
        toplistId,
        version,
        document,
        publishedAt,
        publishedBy: opts.by ?? null,
        trackingBase,
        complianceOverride:
          found.length && opts.override
            ? {
                reason: opts.override.reason,
                by: opts.by ?? null,
                violations: found.slice(0, VIOLATIONS_SHOWN),
              }
            : null,
      });
      if (t.geo.type === 'global' && this.guard) {
        const doc = JSON.parse(document) as WireToplist;
        const found = await this.guard.visitorViolations(q, new Map([[editionId, doc]]), publishedAt);
        await this.syncVariants(repo, editionId, doc, found.get(editionId) ?? [], publishedAt);
      }
      await repo.setLiveEdition(toplistId, editionId, publishedAt);
      await repo.dropVariants(toplistId, editionId);
      await this.events?.record(q, toplistChange('toplist.published', t, String(version), publishedAt));
      return { siteId: t.siteId, version, overridden: found };
    });
    this.events?.committed();
    await this.bus.publish({ kind: 'site', siteId: result.siteId });
    return {
      toplist: await this.getToplist(toplistId),
      version: String(result.version),
      publishedAt: publishedAt.toISOString(),
      overridden: result.overridden,
    };
  }

  /**
   * Re-checks every live edition against the rules in force now and withholds the items they
   * forbid in a country the list covers (or serves again those they no longer forbid): the
   * stored document is re-rendered without them, positions close up, the ETag and `updatedAt`
   * change, the site gets `toplist.compliance_changed`, and every process drops its cache of the
   * sites touched. Violations an edition was published over (an override) stay served.
   */
  async enforceCompliance(): Promise<ComplianceChange[]> {
    const guard = this.guard;
    if (!guard) return [];
    const when = this.now();
    const changes: ComplianceChange[] = [];
    let afterId = 0;
    for (;;) {
      const batch = await this.tx(async (repo, q) => {
        const rows = await repo.liveForCompliance(afterId, RECHECK_BATCH);
        const docs = new Map(rows.map((r) => [r.editionId, JSON.parse(r.published) as WireToplist]));
        const found = await guard.liveViolations(q, docs, when);
        const globals = new Map([...docs].filter(([, d]) => d.geo.geo_type === 'global'));
        const forVisitors = await guard.visitorViolations(q, globals, when);
        const out: ComplianceChange[] = [];
        for (const r of rows) {
          const doc = docs.get(r.editionId)!;
          const change = { toplistId: r.toplistId, siteId: r.siteId, version: String(r.version) };
          if (globals.has(r.editionId)) {
            const variants = await repo.variantsOf(r.editionId);
            const before = variants.flatMap((v) => v.withheld);
            if (await this.syncVariants(repo, r.editionId, doc, forVisitors.get(r.editionId) ?? [], when)) {
              const after = (await repo.variantsOf(r.editionId)).flatMap((v) => v.withheld);
              out.push({ ...change, visitors: true, before, after });
            }
          }
          const overridden = new Set(
            ((r.override as { violations?: Violation[] } | null)?.violations ?? []).map(violationKey),
          );
          const before = r.withheld as unknown as Withheld[];
          const after = withSince(
            (found.get(r.editionId) ?? []).filter((v) => !overridden.has(violationKey(v))),
            before,
            when,
          );
          if (sameViolations(before, after)) continue;
          const ids = new Set(after.map((v) => v.itemId));
          await repo.setServed(r.editionId, r.toplistId, {
            document: ids.size
              ? withholding(doc, ids, when)
              : JSON.stringify({ ...doc, updatedAt: wireTimestamp(when) }),
            publishedDocument: ids.size ? r.published : null,
            withheld: after,
            at: when,
          });
          out.push({ ...change, visitors: false, before, after });
        }
        for (const r of rows.filter((r) => out.some((c) => c.toplistId === r.toplistId)))
          await this.events?.record(q, {
            type: 'toplist.compliance_changed',
            toplistId: r.toplistId,
            siteId: r.siteId,
            slug: r.slug,
            templateId: r.templateId,
            geo: { geo_type: r.geoType, code: r.geoCode },
            version: String(r.version),
            liveFrom: r.liveFrom,
            liveUntil: r.liveUntil,
            occurredAt: when,
          });
        return { out, last: rows.at(-1)?.editionId, full: rows.length === RECHECK_BATCH };
      });
      changes.push(...batch.out);
      if (!batch.full || batch.last === undefined) break;
      afterId = batch.last;
    }
    if (changes.length) this.events?.committed();
    for (const siteId of new Set(changes.map((c) => c.siteId)))
      await this.bus.publish({ kind: 'site', siteId });
    return changes;
  }

  /**
   * Stores the visitor variants a global edition needs for `found` (its violations over every
   * visitor country): one per set of withheld items, with the countries that get it. A variant
   * whose items stay withheld keeps its document and ETag. Returns whether anything changed.
   */
  private async syncVariants(
    repo: PublishingRepository,
    editionId: number,
    doc: WireToplist,
    found: readonly Violation[],
    when: Date,
  ): Promise<boolean> {
    const existing = await repo.variantsOf(editionId);
    const groups = variantGroups(found);
    let changed = false;
    for (const row of existing)
      if (!groups.has(row.itemKey)) {
        await repo.deleteVariant(row.id);
        changed = true;
      }
    for (const [itemKey, g] of groups) {
      const row = existing.find((v) => v.itemKey === itemKey);
      const withheld = withSince(g.found, row?.withheld ?? [], when);
      if (!row)
        await repo.insertVariant({
          editionId,
          itemKey,
          countries: g.countries,
          withheld,
          document: withholding(doc, g.itemIds, when),
        });
      else if (!sameViolations(row.withheld, withheld))
        await repo.updateVariant(row.id, g.countries, withheld);
      else continue;
      changed = true;
    }
    return changed;
  }

  /** The tracking link behind a `/go/{slug}`; undefined when no such link is registered. */
  resolveTrackingLink(slug: string): Promise<ResolvedTrackingLink | undefined> {
    return this.repo.resolveTrackingLink(slug);
  }

  /**
   * Re-renders the tracker links of live editions whose stored document was rendered with another
   * base than their site's tracking base (the site setting, else this server's public URL): the
   * stored bytes change, reads keep serving stored bytes, and every process drops its cache of
   * the sites touched. Runs on a site's setting change and at every start (a server moved to
   * another host or port). Returns the number of sites touched.
   */
  async retargetTrackingLinks(siteId?: number): Promise<number> {
    const touched = await this.tx(async (repo) => {
      const sites = new Set<number>();
      for (const e of await repo.staleLiveEditions(siteId, this.config.publicUrl)) {
        const published = e.publishedDocument && retargetLinks(e.publishedDocument, e.base);
        await repo.rerenderEdition(e.editionId, retargetLinks(e.document, e.base), published, e.base);
        for (const v of await repo.variantDocuments(e.editionId))
          await repo.rerenderVariant(v.id, retargetLinks(v.document, e.base));
        sites.add(e.siteId);
      }
      return sites;
    });
    for (const s of touched) await this.bus.publish({ kind: 'site', siteId: s });
    return touched.size;
  }

  /** Takes the live edition down: the toplist disappears from the list and 404s. Idempotent. */
  async unpublish(toplistId: number): Promise<Toplist> {
    const t = await this.tx(async (repo, q) => {
      if (!(await repo.lockToplist(toplistId))) throw notFound('Toplist');
      const current = (await repo.getToplist(toplistId))!;
      if (current.liveVersion === null) return current;
      await repo.setLiveEdition(toplistId, null, null);
      await repo.dropVariants(toplistId, null);
      await this.events?.record(
        q,
        toplistChange('toplist.unpublished', current, current.liveVersion, this.now()),
      );
      return current;
    });
    this.events?.committed();
    await this.bus.publish({ kind: 'site', siteId: t.siteId });
    return this.getToplist(toplistId);
  }

  /** Publish windows of live editions that opened or closed in (since, until], as change events. */
  async windowChanges(since: Date, until: Date): Promise<ToplistChange[]> {
    const out: ToplistChange[] = [];
    for (const t of await this.repo.windowBoundaries(since, until, 1000)) {
      for (const [type, at] of [
        ['toplist.window_opened', t.liveFrom],
        ['toplist.window_closed', t.liveUntil],
      ] as const) {
        const ms = at ? Date.parse(at) : Number.NaN;
        if (ms > since.getTime() && ms <= until.getTime())
          out.push(toplistChange(type, t, t.liveVersion!, new Date(ms)));
      }
    }
    return out;
  }

  /** A page of the toplist's editions, newest first. */
  async listEditions(toplistId: number, page = 1, perPage = DEFAULT_PER_PAGE): Promise<Page<EditionMeta>> {
    await this.getToplist(toplistId);
    const { rows, total } = await this.repo.listEditions(toplistId, pageWindow(page, perPage));
    return { data: rows, meta: pageMeta(total, page, perPage) };
  }

  /** The stored wire document of one edition, parsed. */
  async getEdition(toplistId: number, version: number): Promise<unknown> {
    const doc = await this.repo.getEditionDocument(toplistId, version);
    if (doc === undefined) throw notFound('Edition');
    return JSON.parse(doc);
  }
}

/** A toplist change as the webhooks outbox records it (names the toplist, never its content). */
function toplistChange(type: ToplistChange['type'], t: Toplist, version: string, at: Date): ToplistChange {
  return {
    type,
    toplistId: t.id,
    siteId: t.siteId,
    slug: t.slug,
    templateId: t.templateId,
    geo: { geo_type: t.geo.type, code: t.geo.code },
    version,
    liveFrom: t.liveFrom ? new Date(t.liveFrom) : null,
    liveUntil: t.liveUntil ? new Date(t.liveUntil) : null,
    occurredAt: at,
  };
}
