import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { ChangeBus } from '../../db/changes.ts';
import type { Db } from '../../db/index.ts';
import { conflict, invalidField, notFound } from '../../lib/errors.ts';
import { guard } from './crud.ts';
import { renderEdition } from './edition-render.ts';
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
  ) {
    this.repo = new PublishingRepository(db);
  }

  /** Runs `fn` in a transaction, turning constraint violations into client errors. */
  private tx<T>(fn: (repo: PublishingRepository) => Promise<T>): Promise<T> {
    return guard(this.db.tx((q) => fn(this.repo.with(q))));
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
    const result = await this.tx(async (repo) => {
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
      const document = JSON.stringify(
        renderEdition({ snapshot, version, publishedAt, linkSlugs, publicUrl: this.config.publicUrl }),
      );
      const editionId = await repo.insertEdition({
        toplistId,
        version,
        document,
        publishedAt,
        publishedBy: opts.by ?? null,
      });
      await repo.setLiveEdition(toplistId, editionId, publishedAt);
      return { siteId: t.siteId, version };
    });
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

  /** Takes the live edition down: the toplist disappears from the list and 404s. Idempotent. */
  async unpublish(toplistId: number): Promise<Toplist> {
    const t = await this.getToplist(toplistId);
    await this.repo.setLiveEdition(toplistId, null, null);
    await this.bus.publish({ kind: 'site', siteId: t.siteId });
    return this.getToplist(toplistId);
  }

  async listEditions(toplistId: number): Promise<EditionMeta[]> {
    await this.getToplist(toplistId);
    return this.repo.listEditions(toplistId);
  }

  /** The stored wire document of one edition, parsed. */
  async getEdition(toplistId: number, version: number): Promise<unknown> {
    const doc = await this.repo.getEditionDocument(toplistId, version);
    if (doc === undefined) throw notFound('Edition');
    return JSON.parse(doc);
  }
}
