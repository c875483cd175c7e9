import { randomBytes } from 'node:crypto';
import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { databaseTimezones } from '../../db/timezones.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import { ulid } from '../../lib/ids.ts';
import { DEFAULT_PER_PAGE, type Page, pageMeta, pageWindow } from '../../lib/paging.ts';
import { isTimezone } from '../../lib/time.ts';
import { newToken } from '../../lib/tokens.ts';
import type { CatalogService } from '../catalog/service.ts';
import type { ResolvedTrackingLink } from '../catalog/types.ts';
import type { TrackingMetrics } from '../ops/metrics.ts';
import { type BannerLink, type BannerLinkInput, BannerRepository } from './banner-repository.ts';
import { GroupCommit } from './group-commit.ts';
import { HistoryWriter } from './history-writer.ts';
import { LandingTemplate, MACROS, unknownMacros } from './landing.ts';
import { TrackingPartitions } from './partitions.ts';
import { POSTBACK_FIELDS } from './postback.ts';
import {
  type LoggedPostback,
  PostbackIntake,
  type PostbackResult,
  type RawPostback,
  type ReplayOutcome,
} from './postback-intake.ts';
import { type ProgramFields, type StoredProgram, TrackingRepository } from './repository.ts';
import type { ClickRow, HitFlag, Program } from './types.ts';

/**
 * A resolved link is reused for about this long (±20 %, so links cached together are not read
 * again together): a change made in another process, or to a tracker, reaches a link clicked
 * steadily this late, and one clicked rarely at most LINK_STALE_MS later (one click).
 */
const LINK_TTL_MS = 5_000;
/**
 * How long past its time an entry still answers while one read refreshes it. A popular link's
 * clicks then never wait for the database, and it is read once per refresh rather than once per
 * click that arrives during the read.
 */
const LINK_STALE_MS = 5_000;
/** A read in flight this long is no longer waited for by new clicks: they start their own. */
const LINK_READ_SHARED_MS = 3_000;
const LINK_CACHE_MAX = 10_000;
const BOT_CACHE_MAX = 5_000;

const FIELD_BY_CONSTRAINT = { affiliate_programs_slug_key: 'slug' };

/** What a visitor's request says about itself, as the click routes read it. */
export interface HitContext {
  method: string;
  userAgent: string | undefined;
  referrer: string | undefined;
  country: string | undefined;
  prefetch: boolean;
  subId: string | undefined;
}

export type ProgramInput = {
  slug: string;
  name: string;
  affiliateId?: string;
  landingParams?: string;
  paramMap?: Record<string, string>;
  timezone?: string;
  currency?: string;
  trackerIds?: number[];
};

/** Whether a visitor from a country may be sent to a brand's operator (the compliance click guard). */
export interface ClickGuard {
  clickAllowed(brandId: number, country: string): Promise<boolean>;
}

/** Where a click goes: the operator's landing page, or (blocked) the site's compliant fallback page, if it has one. */
export type ClickAnswer = { blocked: false; location: string } | { blocked: true; location: string | null };

/** What a hit is recorded against: a toplist tracking link, or a banner link (no tracker, offer or brand). */
type HitLink = Omit<ResolvedTrackingLink, 'trackerId' | 'offerId' | 'brandId'> & {
  trackerId: number | null;
  offerId: number | null;
  brandId: number | null;
};

interface CachedLink {
  link: HitLink;
  program: StoredProgram | undefined;
  /** The link's landing URL with its programme's parameters, prepared for its clicks. */
  landing: LandingTemplate;
}

/** A banner link as a hit target: its site, its landing page, nothing of a toplist. */
function bannerTarget(b: BannerLink | undefined): HitLink | undefined {
  return (
    b && {
      linkId: b.id,
      trackerId: null,
      offerId: null,
      brandId: null,
      siteId: b.siteId,
      toplistId: null,
      position: null,
      landingUrl: b.landingUrl,
    }
  );
}

/**
 * What a read of a slug naming no link leaves in the link cache: lru-cache keeps the stale entry
 * when a read gives undefined, and a link that is gone must stop answering.
 */
const GONE = Symbol('gone');

const trunc = (v: string | undefined, n: number) => (v ? v.slice(0, n) : null);

/**
 * Affiliate tracking: programmes, durable click and impression recording (group commit),
 * postbacks with an append-only log and per-programme dedupe, and stats.
 */
export class TrackingService {
  private readonly repo: TrackingRepository;
  private readonly banners: BannerRepository;
  /** Report queries: on the read replica when there is one. */
  private readonly reports: TrackingRepository;
  private readonly hits: GroupCommit<ClickRow>;
  /**
   * Links by slug, read through `readLink`: one read per slug in flight, shared by the clicks that
   * wait for it. Dropping an entry (a change, or a read that hangs) aborts its read, which still
   * answers its own clicks (`ignoreFetchAbort`) but is not kept. A failed refresh keeps the stale
   * entry (`noDeleteOnFetchRejection`); ages are on the service's clock.
   */
  private readonly links = new LRUCache<string, CachedLink | typeof GONE>({
    max: LINK_CACHE_MAX,
    ttl: LINK_TTL_MS,
    ttlResolution: 0,
    perf: { now: () => this.now().getTime() },
    fetchMethod: (slug, _stale, { options }) => {
      // ±20 %, so links cached together are not read again together.
      options.ttl = LINK_TTL_MS * (0.8 + 0.4 * Math.random());
      return this.readLink(slug).then((entry) => entry ?? GONE);
    },
    ignoreFetchAbort: true,
    noDeleteOnFetchRejection: true,
  });
  /** When each slug's read in flight started (see resolve). */
  private readonly readStarted = new Map<string, number>();
  private readonly botAnswers = new LRUCache<string, boolean>({ max: BOT_CACHE_MAX });
  private readonly intake: PostbackIntake;
  /** Bulk writes of a past history (the demo dataset). */
  readonly history: HistoryWriter;
  /** Monthly partitions of the raw tables: created ahead, retained, exported. */
  readonly partitions: TrackingPartitions;

  constructor(
    private readonly db: Db,
    private readonly catalog: CatalogService,
    private readonly config: Config,
    private readonly now: () => Date,
    private readonly metrics?: TrackingMetrics,
    reads: Queryable = db,
    /** Told after each committed click batch how many rollup deltas it appended (reporting moves them). */
    clicksWritten: (deltas: number) => void = () => {},
    /** Asked for each click whose visitor country is known (the compliance click guard). */
    private readonly clickGuard?: ClickGuard,
  ) {
    this.repo = new TrackingRepository(db);
    this.banners = new BannerRepository(db);
    this.reports = new TrackingRepository(reads);
    this.partitions = new TrackingPartitions(db, config, now);
    this.history = new HistoryWriter(db, this.partitions);
    this.intake = new PostbackIntake(
      this.repo,
      config,
      now,
      metrics,
      db.kind === 'pglite' ? 1 : 4,
      this.partitions,
    );
    this.hits = new GroupCommit(
      async (rows, lane) =>
        clicksWritten(
          await this.partitions.writing(
            () => rows.map((r) => r.at),
            () => this.repo.insertClicks(rows, lane),
          ),
        ),
      {
        // The longest a row waits for answered callers to come back (GroupCommit). PostgreSQL: a
        // batch's commit, not CPU, bounds /go, so at most 1 ms. PGlite: every statement has a
        // fixed CPU cost on the serving thread, so larger batches are worth a longer wait.
        maxWaitMs: db.kind === 'pglite' ? 2 : 1,
        maxBatch: 500,
        maxInFlight: db.kind === 'pglite' ? 1 : 4,
        maxPending: config.clickBufferMax,
        onBatch: (rows, seconds, ok) => {
          const kinds = { click: 0, impression: 0 };
          for (const r of rows) kinds[r.kind]++;
          this.metrics?.batch(kinds, seconds, ok);
        },
      },
    );
  }

  /** Clicks and impressions waiting for or in their group commit. */
  get pendingHits(): number {
    return this.hits.pending;
  }

  /** Null while clicks are taken and the click buffer is below its bound, else why not (for /readyz). */
  clickBufferProblem(): string | null {
    const pending = this.pendingHits;
    return pending < this.config.clickBufferMax
      ? null
      : `${pending} clicks pending, bound ${this.config.clickBufferMax}`;
  }

  /* Programmes */

  private async checkProgram(input: Partial<ProgramInput>): Promise<void> {
    if (input.slug !== undefined && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(input.slug))
      throw invalidField('slug', 'must be 1 to 63 lowercase letters, digits or dashes');
    if (input.landingParams !== undefined) {
      // Encoded at click time anyway; refused here so no stored template holds a raw line break.
      if (/[\p{Cc}\p{Zl}\p{Zp}]/u.test(input.landingParams))
        throw invalidField(
          'landingParams',
          'must not hold control characters or line breaks (CR, LF, U+0000–U+001F, U+007F–U+009F, U+2028, U+2029)',
        );
      const unknown = unknownMacros(input.landingParams);
      if (unknown.length)
        throw invalidField('landingParams', `unknown macro {${unknown[0]}}; known: ${MACROS.join(', ')}`);
    }
    for (const [field, name] of Object.entries(input.paramMap ?? {})) {
      if (!(POSTBACK_FIELDS as readonly string[]).includes(field))
        throw invalidField(`paramMap.${field}`, `is not a postback field (${POSTBACK_FIELDS.join(', ')})`);
      if (!/^[A-Za-z0-9_.[\]-]{1,64}$/.test(name))
        throw invalidField(`paramMap.${field}`, 'must be a parameter name of letters, digits and _.-[]');
    }
    if (input.timezone !== undefined && !isTimezone(input.timezone, await databaseTimezones(this.db)))
      throw invalidField('timezone', 'must be an IANA time zone such as Europe/Malta');
  }

  private async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      throw fromDbError(err, FIELD_BY_CONSTRAINT) ?? err;
    }
  }

  /** Creates a programme; the postback token is in the answer and nowhere else. */
  async createProgram(
    input: ProgramInput,
  ): Promise<Program & { postbackToken: string; postbackUrl: string }> {
    await this.checkProgram(input);
    if (input.trackerIds) await this.catalog.assertTrackersExist(input.trackerIds, 'trackerIds');
    const { token, hash, hint } = newToken('postback');
    const { trackerIds, ...fields } = input;
    const id = await this.guard(
      this.db.tx(async (q) => {
        const repo = this.repo.with(q);
        const id = await repo.insertProgram(fields as ProgramFields, hash, hint);
        if (trackerIds) await repo.setProgramTrackers(id, trackerIds);
        return id;
      }),
    );
    this.forget();
    const program = await this.getProgram(id);
    return { ...program, postbackToken: token, postbackUrl: this.postbackUrl(program.slug, token) };
  }

  private postbackUrl(slug: string, token: string): string {
    return `${this.config.publicUrl}/api/postback/${slug}/${token}`;
  }

  async updateProgram(id: number, patch: Partial<ProgramInput>): Promise<Program> {
    await this.checkProgram(patch);
    if (patch.trackerIds) await this.catalog.assertTrackersExist(patch.trackerIds, 'trackerIds');
    const { trackerIds, ...fields } = patch;
    const found = await this.guard(
      this.db.tx(async (q) => {
        const repo = this.repo.with(q);
        if (!(await repo.updateProgram(id, fields as ProgramFields))) return false;
        if (trackerIds) await repo.setProgramTrackers(id, trackerIds);
        return true;
      }),
    );
    if (!found) throw notFound('Program');
    this.forget();
    return this.getProgram(id);
  }

  /** Cached links and programmes are read again after a programme changes. */
  private forget(): void {
    this.forgetLinks();
    this.intake.forget();
  }

  /** Drops the cached links (or one): reads in flight then neither answer later clicks nor are kept. */
  private forgetLinks(slug?: string): void {
    if (slug === undefined) this.links.clear();
    else this.links.delete(slug);
  }

  /** Replaces the postback token; the old one stops working at once in this process, within a second in others. */
  async rotateProgramToken(id: number): Promise<Program & { postbackToken: string; postbackUrl: string }> {
    const { token, hash, hint } = newToken('postback');
    if (!(await this.repo.setProgramToken(id, hash, hint))) throw notFound('Program');
    this.forget();
    const program = await this.getProgram(id);
    return { ...program, postbackToken: token, postbackUrl: this.postbackUrl(program.slug, token) };
  }

  async getProgram(id: number): Promise<Program> {
    const p = await this.repo.getProgram(id);
    if (!p) throw notFound('Program');
    const { tokenHash: _, ...program } = p;
    return program;
  }

  /** The slug of the programme with this id, or undefined when there is none. */
  async programSlug(id: number): Promise<string | undefined> {
    return (await this.repo.getProgram(id))?.slug;
  }

  /** A page of programmes, optionally only those whose name or slug contains `search`. */
  async listPrograms(page = 1, perPage = DEFAULT_PER_PAGE, search?: string): Promise<Page<Program>> {
    const w = pageWindow(page, perPage);
    const { rows, total } = await this.repo.listPrograms(w.limit, w.offset, search);
    return { data: rows.map(({ tokenHash: _, ...p }) => p), meta: pageMeta(total, page, perPage) };
  }

  /* Clicks and impressions */

  /** A link by slug: from the cache when fresh; past its time, the cached entry while one read refreshes it. */
  private async resolve(slug: string): Promise<CachedLink | undefined> {
    const now = this.now().getTime();
    const started = this.readStarted.get(slug);
    // A read that hangs (a lost connection) must not hold every later click on this link.
    if (started !== undefined && now - started > LINK_READ_SHARED_MS) this.links.delete(slug);
    // An entry further past its time than LINK_STALE_MS is not answered: the clicks wait for the read.
    const entry = await this.links.fetch(slug, {
      allowStale: this.links.getRemainingTTL(slug) > -LINK_STALE_MS,
    });
    if (entry !== GONE) return entry;
    // Misses are not kept: they would crowd out links (and a link may be created any time).
    if (this.links.peek(slug) === GONE) this.links.delete(slug);
    return undefined;
  }

  /** Reads a link and its programme (undefined, and nothing cached, when the slug names none). */
  private async readLink(slug: string): Promise<CachedLink | undefined> {
    const started = this.now().getTime();
    this.readStarted.set(slug, started);
    try {
      const link: HitLink | undefined =
        (await this.catalog.publishing.resolveTrackingLink(slug)) ??
        bannerTarget(await this.banners.byCode(slug));
      const program =
        link && link.trackerId !== null ? await this.repo.programOfTracker(link.trackerId) : undefined;
      return link && this.cachedLink(link, program);
    } finally {
      if (this.readStarted.get(slug) === started) this.readStarted.delete(slug);
    }
  }

  private cachedLink(link: HitLink, program: StoredProgram | undefined): CachedLink {
    const landing = new LandingTemplate(link.landingUrl, program?.landingParams ?? '', {
      affiliate_id: program?.affiliateId ?? '',
      site_id: link.siteId === null ? '' : String(link.siteId),
      toplist_id: link.toplistId === null ? '' : String(link.toplistId),
      position: link.position === null ? '' : String(link.position),
    });
    return { link, program, landing };
  }

  private flagOf(ctx: HitContext): HitFlag | null {
    if (ctx.method === 'HEAD') return 'head';
    if (ctx.prefetch) return 'prefetch';
    if (ctx.userAgent !== undefined && this.isBot(ctx.userAgent)) return 'bot';
    return null;
  }

  /** `isbot` runs one large regular expression; visitors' user agents repeat, so answers are kept. */
  private isBot(userAgent: string): boolean {
    let bot = this.botAnswers.get(userAgent);
    if (bot === undefined) {
      bot = isbot(userAgent);
      this.botAnswers.set(userAgent, bot);
    }
    return bot;
  }

  /** The row a hit on `slug` would write, with its link; 404 when the slug names none. */
  private async hitRow(
    kind: ClickRow['kind'],
    slug: string,
    ctx: HitContext,
  ): Promise<{ row: ClickRow } & CachedLink> {
    const entry = await this.resolve(slug);
    if (!entry) throw notFound(kind === 'click' ? 'Tracking link' : 'Impression code');
    const { link, program } = entry;
    const row: ClickRow = {
      id: ulid(),
      kind,
      at: this.now(),
      linkId: link.linkId,
      trackerId: link.trackerId,
      offerId: link.offerId,
      brandId: link.brandId,
      siteId: link.siteId,
      toplistId: link.toplistId,
      position: link.position,
      programId: program?.id ?? null,
      subId: ctx.subId ?? null,
      referrer: trunc(ctx.referrer, 2048),
      userAgent: trunc(ctx.userAgent, 512),
      country: ctx.country ?? null,
      flag: this.flagOf(ctx),
    };
    return { row, ...entry };
  }

  /** Writes a hit durably (group commit), or fails with a 503. */
  private async write(row: ClickRow): Promise<void> {
    try {
      await this.hits.add(row);
    } catch {
      throw new AppError('service_unavailable', 'The click could not be recorded; try again');
    }
  }

  /**
   * Records a click durably and returns the landing URL to redirect to. A click whose landing
   * URL cannot be built is not recorded: the visitor goes nowhere, so no click is counted.
   */
  async click(slug: string, ctx: HitContext): Promise<ClickAnswer> {
    const { row, landing, link } = await this.hitRow('click', slug, ctx);
    if (
      this.clickGuard &&
      row.country !== null &&
      link.brandId !== null &&
      !(await this.clickGuard.clickAllowed(link.brandId, row.country))
    ) {
      // The operator never hears of this visitor: no landing URL is built, the row is flagged.
      row.flag = 'blocked';
      await this.write(row);
      this.metrics?.blockedClick();
      const site = link.siteId === null ? undefined : await this.catalog.repo.getSite(link.siteId);
      return { blocked: true, location: site?.complianceFallbackUrl ?? null };
    }
    const location = landing.url(row.id, ctx.subId ?? '');
    if (!location) throw notFound('Landing page of this tracking link');
    await this.write(row);
    return { blocked: false, location };
  }

  /** Records an impression durably. */
  async impression(code: string, ctx: HitContext): Promise<void> {
    await this.write((await this.hitRow('impression', code, ctx)).row);
  }

  /** Writes every pending click and postback batch; called on shutdown. */
  async drain(): Promise<void> {
    await Promise.all([this.hits.drain(), this.intake.drain()]);
  }

  /* Postbacks */

  /** Handles one postback (see PostbackIntake). */
  postback(raw: RawPostback): Promise<PostbackResult> {
    return this.intake.handle(raw);
  }

  /** Processes a logged postback again with its programme's current settings (see PostbackIntake). */
  replay(entry: LoggedPostback): Promise<ReplayOutcome> {
    return this.intake.replay(entry);
  }

  /** The keyed hash a postback's player id is stored as (see PostbackIntake.playerRef). */
  playerRef(playerId: string): Promise<string> {
    return this.intake.playerRef(playerId);
  }

  /* Banner links */

  /**
   * The banner code of a booked line's creative: created on first call, the same code afterwards
   * (its image, landing page, size and site follow the latest call). Returns the code and the URL
   * of the frame `/ad/{code}` a third-party tag loads.
   */
  async bannerCode(input: BannerLinkInput): Promise<{ code: string; frameUrl: string }> {
    // The marketplace's own creative URLs are accepted on whatever scheme its base has (http on loopback).
    const hosted = input.imageUrl.startsWith(`${this.config.creativeBaseUrl}/`);
    for (const [field, url, schemes] of [
      ['landing_url', input.landingUrl, ['http:', 'https:']],
      ['image_url', input.imageUrl, hosted ? ['http:', 'https:'] : ['https:']],
    ] as const) {
      const parsed = URL.parse(url);
      if (!parsed || !(schemes as readonly string[]).includes(parsed.protocol) || url.length > 2048)
        throw invalidField(field, `must be an ${schemes.join(' or ')} URL of at most 2048 characters`);
    }
    // 24 characters: toplist slugs have 12, so a code can never name a toplist link.
    const link = await this.banners.upsert(input, randomBytes(18).toString('base64url'));
    this.forgetLinks(link.code);
    return { code: link.code, frameUrl: `${this.config.publicUrl}/ad/${link.code}` };
  }

  /** The banner link behind a frame request, or 404. */
  async bannerFrame(code: string): Promise<BannerLink> {
    const link = await this.banners.byCode(code);
    if (!link) throw notFound('Banner');
    return link;
  }

  /** Podium's own counted /go clicks and /imp impressions per code and day, for comparing with an ad server. */
  async countsByCode(codes: readonly string[], from: string, to: string, timezone: string) {
    if (!codes.length) return [];
    return this.reports.countsBySlug(codes, from, to, timezone);
  }
}
