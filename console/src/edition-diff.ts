import type { WireItem, WireToplist } from './api.ts';

/** One line of an edition diff: an item added, removed, or changed between two editions. */
export interface ItemChange {
  kind: 'added' | 'removed' | 'changed';
  /** Position in the newer edition (in the older one for a removed item). */
  position: number;
  brand: string;
  details: string[];
}

/** Offer fields an editor cares about, with their labels; the rest of the wire offer is noise here. */
const OFFER_FIELDS: [string, string][] = [
  ['offerText', 'offer text'],
  ['bonus_code', 'bonus code'],
  ['bonus_wagering_requirement', 'wagering'],
  ['minimum_deposit', 'minimum deposit'],
  ['max_bonus_amount', 'max bonus'],
  ['bonus_expiry_date', 'bonus expiry'],
];

const shown = (v: unknown): string => (v === null || v === undefined || v === '' ? '—' : String(v));
const offerLabel = (i: WireItem) => `#${i.offer.id} “${i.offer.offerText}”`;

/**
 * Pairs the items of two editions (by item id, which survives draft saves, then by brand for
 * items re-added) and lists what changed, ordered by position.
 */
export function diffEditions(older: WireToplist, newer: WireToplist): ItemChange[] {
  const pairs: [WireItem, WireItem][] = [];
  const oldLeft = [...older.items];
  const newLeft: WireItem[] = [];
  for (const n of newer.items) {
    const at = oldLeft.findIndex((o) => o.id === n.id);
    if (at >= 0) pairs.push([oldLeft.splice(at, 1)[0]!, n]);
    else newLeft.push(n);
  }
  const added: WireItem[] = [];
  for (const n of newLeft) {
    const at = oldLeft.findIndex((o) => o.brand.id === n.brand.id);
    if (at >= 0) pairs.push([oldLeft.splice(at, 1)[0]!, n]);
    else added.push(n);
  }

  const changes: ItemChange[] = [];
  for (const [o, n] of pairs) {
    const details: string[] = [];
    if (o.position !== n.position) details.push(`moved from position ${o.position} to ${n.position}`);
    if (o.brand.id !== n.brand.id) details.push(`brand: ${o.brand.name} → ${n.brand.name}`);
    else if (o.brand.name !== n.brand.name) details.push(`brand name: ${o.brand.name} → ${n.brand.name}`);
    if (o.brand.rating !== n.brand.rating) details.push(`rating: ${o.brand.rating} → ${n.brand.rating}`);
    if (o.offer.id !== n.offer.id) details.push(`offer: ${offerLabel(o)} → ${offerLabel(n)}`);
    else
      for (const [key, label] of OFFER_FIELDS)
        if (shown(o.offer[key]) !== shown(n.offer[key]))
          details.push(`${label}: ${shown(o.offer[key])} → ${shown(n.offer[key])}`);
    if (details.length) changes.push({ kind: 'changed', position: n.position, brand: n.brand.name, details });
  }
  for (const n of added)
    changes.push({ kind: 'added', position: n.position, brand: n.brand.name, details: [offerLabel(n)] });
  for (const o of oldLeft)
    changes.push({ kind: 'removed', position: o.position, brand: o.brand.name, details: [offerLabel(o)] });
  return changes.sort((a, b) => a.position - b.position || a.kind.localeCompare(b.kind));
}
