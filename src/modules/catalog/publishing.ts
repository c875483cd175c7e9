import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { ChangeBus } from '../../db/changes.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { conflict, invalidField, notFound } from '../../lib/errors.ts';
import { DEFAULT_PER_PAGE, type Page, pageMeta, pageWindow } from '../../lib/paging.ts';
import type { ChangeEvents } from '../webhooks/service.ts';
import type { ToplistChange } from '../webhooks/types.ts';
import { guard } from './crud.ts';
import { renderEdition, retargetLinks } from './edition-render.ts';
import { checkWindow } from './input.ts';
import { PublishingRepository } from './publishing-repository.ts';
import type { ItemInputT } from './schemas.ts';
import type { EditionMeta, ResolvedTrackingLink, Toplist } from './types.ts';

/** A new public tracking-link slug: 12 URL-safe characters (72 random bits). */
const newLinkSlug = () => randomBytes(9).toString('base64url');

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
  ) {
    this.repo = new PublishingRepository(db);
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
    const seen = new Set<number>();
    for (const [i, it] of items.entries()) {
      if (seen.has(it.position))
        throw invalidField(`items.${i}.position`, `position ${it.position} is used twice`);
      seen.add(it.position);
    }
    await this.tx(async (repo) => {
      if (!(await repo.lockToplist(toplistId))) throw notFound('Toplist');
      const t = await repo.getToplist(toplistId);
      if (t!.locked)
        throw conflict('Toplist is locked: unlock it (PATCH locked=false) before editing its items');
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
   * after the commit.
   */
  async publish(
    toplistId: number,
    opts: { by?: number | null; liveFrom?: string | null; liveUntil?: string | null } = {},
  ): Promise<{ toplist: Toplist; version: string; publishedAt: string }> {
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
      });
      await repo.setLiveEdition(toplistId, editionId, publishedAt);
      await this.events?.record(q, toplistChange('toplist.published', t, String(version), publishedAt));
      return { siteId: t.siteId, version };
    });
    this.events?.committed();
    await this.bus.publish({ kind: 'site', siteId: result.siteId });
    return {
      toplist: await this.getToplist(toplistId),
      version: String(result.version),
      publishedAt: publishedAt.toISOString(),
    };
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
        await repo.rerenderEdition(e.editionId, retargetLinks(e.document, e.base), e.base);
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
