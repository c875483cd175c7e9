import { wireTimestamp } from '../../lib/time.ts';
import type { WireItem, WireToplist } from '../delivery/schemas.ts';
import type { EditionSnapshot } from './types.ts';

export interface RenderInput {
  snapshot: EditionSnapshot;
  version: number;
  publishedAt: Date;
  /** Tracking-link slug per `${trackerId}:${position}`. */
  linkSlugs: ReadonlyMap<string, string>;
  /** Public base URL for `trackerLink` (`{publicUrl}/go/{slug}`). */
  publicUrl: string;
}

/**
 * Renders the wire document of one edition. Runs once at publish time; the result is stored
 * and served byte for byte, so every field of the spec must be produced here and nowhere else.
 */
export function renderEdition(input: RenderInput): WireToplist {
  const { snapshot: s, publishedAt } = input;
  const t = s.toplist;
  const items: WireItem[] = t.items.map((i) => {
    const b = s.brands.get(i.brandId);
    const o = s.offers.get(i.offerId);
    if (!b || !o) throw new Error(`toplist ${t.id} item ${i.id} references a missing brand or offer`);
    return {
      type: 'topListItem',
      id: i.id,
      position: i.position,
      isLocked: i.isLocked,
      dealId: i.dealId,
      brand: {
        type: 'brand',
        id: b.id,
        externalId: b.externalId,
        name: b.name,
        slug: b.slug,
        rating: b.rating,
        logo: { ...b.logo },
        licenses: b.licenses,
        paymentMethods: b.paymentMethods,
        restrictedCountries: b.restrictedCountries,
        classificationTypes: b.classificationTypes,
        languages: { ...b.languages },
      },
      offer: {
        type: 'offer',
        id: o.id,
        offerTypeId: o.offerTypeId,
        offerTypeName: o.offerTypeName,
        offerText: o.offerText,
        currencies: o.currencies,
        has_free_spins: o.hasFreeSpins,
        bonus_wagering_requirement: o.bonusWageringRequirement,
        bonus_expiry_date: o.bonusExpiryDate,
        bonus_code: o.bonusCode,
        minimum_deposit: o.minimumDeposit,
        free_tickets: o.freeTickets,
        max_bonus_amount: o.maxBonusAmount,
        max_payout: o.maxPayout,
        minimum_odds: o.minimumOdds,
        free_bet_value: o.freeBetValue,
        tournament_ticket_value: o.tournamentTicketValue,
        rakeback_percentage: o.rakebackPercentage,
        is_sticky_bonus: o.isStickyBonus,
        stake_returned: o.stakeReturned,
        bet_type: o.betType,
        geos: { countries: o.geos.countries, markets: o.geos.markets },
        trackers: o.trackers.map((tr) => {
          const slug = input.linkSlugs.get(`${tr.id}:${i.position}`);
          if (!slug)
            throw new Error(`no tracking link minted for tracker ${tr.id} at position ${i.position}`);
          return {
            id: tr.id,
            campaignName: tr.campaignName,
            trackerLink: `${input.publicUrl}/go/${slug}`,
            tcLink: tr.tcLink,
            pageType: tr.pageType,
            geos: { countries: tr.geos.countries, markets: tr.geos.markets },
          };
        }),
      },
    };
  });

  const geo =
    t.geo.type === 'market'
      ? {
          geo_type: 'market' as const,
          name: t.geo.name,
          code: t.geo.code,
          coveredCountries: t.geo.coveredCountries ?? [],
        }
      : t.geo.type === 'country'
        ? { geo_type: 'country' as const, name: t.geo.name, code: t.geo.code, coveredCountries: null }
        : { geo_type: 'global' as const, name: t.geo.name, code: 'ROW' as const, coveredCountries: null };

  return {
    type: 'toplist',
    id: t.id,
    name: t.name,
    status: 'published',
    locked: t.locked,
    version: String(input.version),
    owner: { id: t.ownerId, name: s.ownerName },
    createdAt: wireTimestamp(t.createdAt),
    updatedAt: wireTimestamp(publishedAt),
    publishedAt: wireTimestamp(publishedAt),
    template: {
      type: 'listTemplate',
      id: s.template.id,
      name: s.template.name,
      productTypeId: s.template.productTypeId,
      productType: s.template.productType,
      listClassificationTypeId: s.template.classificationTypeId,
      listClassificationType: s.template.classificationType,
    },
    site: { id: t.siteId, domain: s.siteDomain },
    geo,
    slug: t.slug,
    currentPeriod: t.currentPeriod,
    shortcode: null,
    items,
  };
}

/**
 * The stored document of an edition with every `trackerLink` moved to `base` (the slug after
 * `/go/` is kept): the edition's content is unchanged, only where its links point.
 */
export function retargetLinks(document: string, base: string): string {
  const doc = JSON.parse(document) as WireToplist;
  for (const item of doc.items)
    for (const tr of item.offer.trackers) {
      const slug = tr.trackerLink.slice(tr.trackerLink.lastIndexOf('/go/') + 4);
      tr.trackerLink = `${base}/go/${slug}`;
    }
  return JSON.stringify(doc);
}
