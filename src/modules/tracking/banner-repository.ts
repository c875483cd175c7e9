import { sql } from 'kysely';
import type { Db } from '../../db/index.ts';
import { kysely, runNamed } from '../../db/kysely.ts';

export interface BannerLinkInput {
  /** The marketplace's opaque name of the line and creative; one code per owner, kept across edits. */
  owner: string;
  siteId: number | null;
  landingUrl: string;
  imageUrl: string;
  width: number;
  height: number;
}

/** A banner link: one booked line's creative, answered by /go, /imp and /ad with its code. */
export interface BannerLink extends BannerLinkInput {
  id: number;
  code: string;
}

/** The columns of a banner link as the service names them. */
const COLUMNS = [
  'id',
  'code',
  'owner',
  'site_id as siteId',
  'landing_url as landingUrl',
  'image_url as imageUrl',
  'width',
  'height',
] as const;

/** SQL of banner links (table `banner_links`). */
export class BannerRepository {
  constructor(private readonly db: Db) {}

  /** Creates the owner's link with `code`, or updates its creative and keeps its existing code. */
  async upsert(input: BannerLinkInput, code: string): Promise<BannerLink> {
    const creative = {
      site_id: input.siteId,
      landing_url: input.landingUrl,
      image_url: input.imageUrl,
      width: input.width,
      height: input.height,
    };
    return kysely(this.db)
      .insertInto('banner_links')
      .values({ code, owner: input.owner, ...creative })
      .onConflict((c) => c.column('owner').doUpdateSet({ ...creative, updated_at: sql`now()` }))
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
  }

  async byCode(code: string): Promise<BannerLink | undefined> {
    const query = kysely(this.db).selectFrom('banner_links').select(COLUMNS).where('code', '=', code);
    const [row] = await runNamed(this.db, query, 'banner_by_code');
    return row;
  }
}
