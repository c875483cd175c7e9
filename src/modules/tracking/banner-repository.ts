import type { Db } from '../../db/index.ts';

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

const SELECT = `SELECT id, code, owner, site_id AS "siteId", landing_url AS "landingUrl", image_url AS "imageUrl",
                       width, height FROM banner_links`;

/** SQL of banner links (table `banner_links`). */
export class BannerRepository {
  constructor(private readonly db: Db) {}

  /** Creates the owner's link with `code`, or updates its creative and keeps its existing code. */
  async upsert(input: BannerLinkInput, code: string): Promise<BannerLink> {
    const [row] = await this.db.query<BannerLink>(
      `WITH up AS (
         INSERT INTO banner_links (code, owner, site_id, landing_url, image_url, width, height)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (owner) DO UPDATE SET site_id = EXCLUDED.site_id, landing_url = EXCLUDED.landing_url,
           image_url = EXCLUDED.image_url, width = EXCLUDED.width, height = EXCLUDED.height, updated_at = now()
         RETURNING *)
       SELECT id, code, owner, site_id AS "siteId", landing_url AS "landingUrl", image_url AS "imageUrl",
              width, height FROM up`,
      [code, input.owner, input.siteId, input.landingUrl, input.imageUrl, input.width, input.height],
    );
    return row!;
  }

  async byCode(code: string): Promise<BannerLink | undefined> {
    const [row] = await this.db.query<BannerLink>(`${SELECT} WHERE code = $1`, [code], 'banner_by_code');
    return row;
  }
}
