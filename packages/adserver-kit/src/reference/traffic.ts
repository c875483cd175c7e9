import { createHash } from 'node:crypto';
import { addDays, daysBetween, maxDate, minDate, weekday } from './dates.ts';

// Deterministic synthetic traffic: the same seed, slot, country and day always give the same
// numbers, so forecasts are consistent across calls and processes, and geo only ever narrows.

/** Share of a slot's worldwide traffic per country; the rest is spread over all other countries. */
const COUNTRY_SHARE: Record<string, number> = {
  DE: 0.14,
  GB: 0.12,
  SE: 0.07,
  FI: 0.05,
  NO: 0.05,
  DK: 0.04,
  NL: 0.05,
  IE: 0.03,
  MT: 0.02,
  CA: 0.07,
  NZ: 0.03,
  AU: 0.04,
  AT: 0.03,
  CH: 0.03,
  ES: 0.04,
  IT: 0.04,
  FR: 0.04,
};
const LISTED_SHARE = Object.values(COUNTRY_SHARE).reduce((a, b) => a + b, 0);
const REST_SHARE = 1 - LISTED_SHARE;
/** Share given to one country outside the table (capped so all of them together fit the rest). */
const UNLISTED_SHARE = 0.002;

/** A uniform number in [0, 1) derived from the parts. */
export function noise(...parts: (string | number)[]): number {
  return createHash('sha256').update(parts.join('|')).digest().readUInt32BE(0) / 2 ** 32;
}

/** Fraction of worldwide traffic a geo list covers (empty = worldwide = 1). */
export function geoShare(geo: readonly string[]): number {
  if (geo.length === 0) return 1;
  const listed = [...new Set(geo)].filter((c) => c in COUNTRY_SHARE);
  return listed.reduce((a, c) => a + (COUNTRY_SHARE[c] ?? 0), 0) + unlistedShare(geo);
}

/** Share of the countries of `geo` outside the table, together never more than the rest. */
function unlistedShare(geo: readonly string[]): number {
  const n = new Set(geo.filter((c) => !(c in COUNTRY_SHARE))).size;
  return Math.min(REST_SHARE, n * UNLISTED_SHARE);
}

/** Fraction of traffic of geo `a` that also falls in geo `b` (either empty = worldwide). */
function overlapShare(a: readonly string[], b: readonly string[]): number {
  if (b.length === 0) return geoShare(a);
  if (a.length === 0) return geoShare(b);
  const inB = new Set(b);
  const both = a.filter((c) => inB.has(c));
  // Disjoint lists share nothing (an empty list means worldwide only as an input).
  return both.length ? geoShare(both) : 0;
}

export interface SlotTraffic {
  seed: number;
  slotId: string;
  dailyImpressions: number;
}

/** Predicted impressions of a slot on one day for one geo (before any commitment). */
function dayTraffic(s: SlotTraffic, date: string, geo: readonly string[]): number {
  const week = weekday(date) === 0 || weekday(date) === 6 ? 0.85 : 1;
  const base = s.dailyImpressions * week;
  const parts = geo.length === 0 ? [...Object.keys(COUNTRY_SHARE), '*'] : [...new Set(geo)];
  let sum = 0;
  for (const c of parts) {
    const share = c === '*' ? REST_SHARE : c in COUNTRY_SHARE ? (COUNTRY_SHARE[c] ?? 0) : 0;
    sum += base * share * (0.9 + 0.2 * noise(s.seed, s.slotId, c, date));
  }
  if (geo.length > 0) {
    sum += base * unlistedShare(geo) * (0.9 + 0.2 * noise(s.seed, s.slotId, '*', date));
  }
  return sum;
}

/** An existing commitment on the slot, as far as the forecast cares. */
export interface Commitment {
  start: string;
  end: string;
  goal: number;
  geo: readonly string[];
}

/** Forecast of a slot over an inclusive date range and geo, minus the commitments' share. */
export function forecast(
  s: SlotTraffic,
  start: string,
  end: string,
  geo: readonly string[],
  commitments: readonly Commitment[],
): { forecasted: number; available: number } {
  let total = 0;
  for (let d = start; d <= end; d = addDays(d, 1)) total += dayTraffic(s, d, geo);
  let booked = 0;
  for (const c of commitments) {
    const from = maxDate(c.start, start);
    const to = minDate(c.end, end);
    if (from > to) continue;
    const perDay = c.goal / (daysBetween(c.start, c.end) + 1);
    // The part of the line's goal that lands in the requested geo, assuming it delivers like traffic.
    const inGeo = overlapShare(c.geo, geo) / geoShare(c.geo);
    booked += perDay * (daysBetween(from, to) + 1) * inGeo;
  }
  const forecasted = Math.floor(total);
  return { forecasted, available: Math.max(0, Math.floor(total - booked)) };
}

/** Simulated delivery of a live line on one day (zero outside its flight). */
export function delivery(
  seed: number,
  line: { id: string; start: string; end: string; goal: number },
  date: string,
): { impressions: number; clicks: number } {
  if (date < line.start || date > line.end) return { impressions: 0, clicks: 0 };
  const perDay = line.goal / (daysBetween(line.start, line.end) + 1);
  const impressions = Math.floor(perDay * (0.9 + 0.2 * noise(seed, line.id, date)));
  const clicks = Math.floor(impressions * (0.001 + 0.004 * noise(seed, line.id, date, 'c')));
  return { impressions, clicks };
}
