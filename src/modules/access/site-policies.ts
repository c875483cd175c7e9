import type { Queryable } from '../../db/index.ts';
import type { SitePolicy, SiteResolver, SiteTarget } from '../../plugins/site-scope.ts';

const none: SitePolicy = { kind: 'none' };
const deny: SitePolicy = { kind: 'deny' };
const list: SitePolicy = { kind: 'list' };
const of = (target: SiteTarget, entity: string, body?: string): SitePolicy =>
  body
    ? { kind: 'object', target, param: 'id', entity, body }
    : { kind: 'object', target, param: 'id', entity };
const into = (field: string, required = true): SitePolicy => ({ kind: 'body', field, required });

const site = of('site', 'Site');
const toplist = of('toplist', 'Toplist');
const webhook = of('webhook', 'Webhook endpoint');
const placement = of('placement', 'Placement');
const booking = of('booking', 'Booking');

/**
 * How each admin route touches sites (see SitePolicy), by method and path below the admin
 * prefix. Routes of another site's objects answer 404; routes that span sites without a per-site
 * filter are refused to people limited to some sites.
 */
const BY_ROUTE: Record<string, SitePolicy> = {
  'GET /sites': list,
  'POST /sites': deny,
  'GET /sites/:id': site,
  'PATCH /sites/:id': site,
  'GET /sites/:id/tokens': site,
  'POST /sites/:id/tokens': site,
  'DELETE /sites/:id/tokens/:subId': site,
  'GET /tracking/sites/:id': site,
  'PUT /tracking/sites/:id': site,

  'GET /toplists': list,
  'POST /toplists': into('siteId'),
  'GET /toplists/:id': toplist,
  'PATCH /toplists/:id': toplist,
  'PUT /toplists/:id/items': toplist,
  'POST /toplists/:id/publish': toplist,
  'POST /toplists/:id/unpublish': toplist,
  'GET /toplists/:id/editions': toplist,
  'GET /toplists/:id/editions/:subId': toplist,
  'GET /toplists/:id/compliance': toplist,
  'POST /toplists/:id/compliance': toplist,
  'GET /toplists/:id/suggested-order': toplist,
  'GET /compliance/report': list,

  'GET /tracking/stats': list,
  'GET /tracking/conversions': list,

  'GET /webhooks': list,
  'POST /webhooks': into('siteId'),
  'GET /webhooks/:id': webhook,
  'PATCH /webhooks/:id': of('webhook', 'Webhook endpoint', 'siteId'),
  'DELETE /webhooks/:id': webhook,
  'POST /webhooks/:id/rotate': webhook,
  'POST /webhooks/:id/test': webhook,
  'GET /webhooks/:id/deliveries': webhook,

  'GET /adserver/placements': list,
  'POST /adserver/placements': into('site_id'),
  'GET /adserver/placements/:id': placement,
  'PUT /adserver/placements/:id/slots': placement,
  'DELETE /adserver/placements/:id/slots/:connectionId': placement,
  'GET /adserver/bookings': list,
  'GET /adserver/bookings/:id': booking,
  'GET /adserver/bookings/:id/pushes': booking,
  'GET /adserver/bookings/:id/delivery': booking,
  'POST /adserver/bookings/:id/push': booking,
};

/**
 * Areas by path prefix, for routes not listed above: site-less catalogue data and one's own
 * profile follow the role; areas spanning sites (people, tokens, audit, the raw postback log,
 * whose payloads name no site, bookings, the marketplace, player data) are refused to people
 * limited to some sites.
 */
const BY_AREA: [RegExp, SitePolicy][] = [
  [
    /^\/(owners|templates|brands|offers|product-types|classification-types|offer-types|compliance\/rules)(\/|$)/,
    none,
  ],
  [/^\/(me|tracking\/programs|adserver\/connections|creatives)(\/|$)/, none],
  [
    /^\/(admin-tokens|audit|roles|users|settings|player-data|tracking\/conversions|tracking\/postbacks|adserver\/bookings|market)(\/|$)/,
    deny,
  ],
];

/** The site policy of an admin route (`METHOD /path`), or undefined when none is declared. */
export function sitePolicyOf(key: string): SitePolicy | undefined {
  const direct = BY_ROUTE[key];
  if (direct) return direct;
  const path = key.slice(key.indexOf(' ') + 1);
  return BY_AREA.find(([re]) => re.test(path))?.[1];
}

const SITE_OF: Record<SiteTarget, string> = {
  site: 'SELECT id AS site_id FROM sites WHERE id = $1',
  toplist: 'SELECT site_id FROM toplists WHERE id = $1',
  webhook: 'SELECT site_id FROM webhook_endpoints WHERE id = $1',
  placement: 'SELECT site_id FROM adserver_placements WHERE id = $1',
  // The sites of its lines' placements; null (every site) when it has no line or a site-less one.
  booking: `SELECT CASE WHEN count(l.line_no) > 0 AND bool_and(p.site_id IS NOT NULL)
                   THEN array_agg(DISTINCT p.site_id) END AS site_id
              FROM adserver_bookings b
              LEFT JOIN adserver_booking_lines l ON l.booking_id = b.id
              LEFT JOIN adserver_placements p ON p.id = l.placement_id
             WHERE b.id = $1 GROUP BY b.id`,
};

/** Finds the site of an object by SQL, for the site restriction's checks. */
export class SqlSiteResolver implements SiteResolver {
  constructor(private readonly db: Queryable) {}

  async siteOf(target: SiteTarget, id: number | string): Promise<number | number[] | null | undefined> {
    const [row] = await this.db.query<{ site_id: number | number[] | null }>(SITE_OF[target], [id]);
    if (!row) return undefined;
    return Array.isArray(row.site_id) ? row.site_id.map(Number) : row.site_id;
  }
}
