import type { Outcome } from '../../lib/outbound.ts';
import type { Slot } from './types.ts';

/** Largest page the contract allows, and the most pages one walk follows. */
export const INVENTORY_PAGE_LIMIT = 200;
export const INVENTORY_MAX_PAGES = 500;

const SIZE = /^[1-9]\d{0,4}x[1-9]\d{0,4}$/;

export interface WalkResult {
  /** Valid slots, first occurrence of each id. */
  slots: Omit<Slot, 'seen_at'>[];
  pages: number;
  /** True when the walk reached a last page (no failure, loop or cap on the way). */
  complete: boolean;
  problems: string[];
  /** The call outcome that stopped the walk, when one did. */
  failure?: Outcome;
}

/** Checks one slot against the contract's field rules; returns it normalised or the reason it is refused. */
export function checkSlot(raw: unknown): { slot: Omit<Slot, 'seen_at'> } | { problem: string } {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { problem: 'slot is not an object' };
  const s = raw as Record<string, unknown>;
  const id = typeof s.inventory_id === 'string' && s.inventory_id.length > 0 && s.inventory_id.length <= 200;
  if (!id) return { problem: 'slot without a valid inventory_id' };
  const where = `slot ${JSON.stringify(s.inventory_id)}`;
  if (typeof s.name !== 'string') return { problem: `${where}: name missing` };
  if (!Array.isArray(s.sizes) || s.sizes.length === 0) return { problem: `${where}: sizes missing` };
  const bad = s.sizes.find((z) => typeof z !== 'string' || !SIZE.test(z));
  if (bad !== undefined) return { problem: `${where}: size ${JSON.stringify(bad)} is not WIDTHxHEIGHT` };
  if (s.status !== undefined && s.status !== 'active' && s.status !== 'archived')
    return { problem: `${where}: status ${JSON.stringify(s.status)} is neither active nor archived` };
  if (s.format !== undefined && s.format !== null && typeof s.format !== 'string')
    return { problem: `${where}: format is not a string` };
  return {
    slot: {
      inventory_id: s.inventory_id as string,
      name: s.name.slice(0, 500),
      sizes: [...new Set(s.sizes as string[])],
      format: typeof s.format === 'string' ? s.format.slice(0, 100) : null,
      status: (s.status as Slot['status'] | undefined) ?? 'active',
    },
  };
}

/**
 * Walks `GET /inventory` by cursor to the last page: stops on a failed call, a cursor seen
 * before, a page repeating an earlier one, or the page cap; refuses slots breaking the field
 * rules and duplicate ids (each reported).
 */
export async function walkInventory(
  fetchPage: (cursor: string | undefined) => Promise<Outcome>,
  maxPages = INVENTORY_MAX_PAGES,
): Promise<WalkResult> {
  const slots = new Map<string, Omit<Slot, 'seen_at'>>();
  const problems: string[] = [];
  const cursors = new Set<string>();
  const pageFingerprints = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    if (pages >= maxPages) {
      problems.push(`stopped after ${maxPages} pages (page cap)`);
      return { slots: [...slots.values()], pages, complete: false, problems };
    }
    const o = await fetchPage(cursor);
    pages++;
    const body = o.kind === 'ok' ? (o.json as { data?: unknown; next_cursor?: unknown }) : undefined;
    if (!body || !Array.isArray(body.data)) {
      const why = o.kind === 'ok' ? 'GET /inventory: answer has no data array' : o.message;
      problems.push(why);
      return { slots: [...slots.values()], pages, complete: false, problems, failure: o };
    }
    const fingerprint = JSON.stringify(body.data);
    if (body.data.length && pageFingerprints.has(fingerprint)) {
      problems.push(`page ${pages} repeats an earlier page`);
      return { slots: [...slots.values()], pages, complete: false, problems };
    }
    pageFingerprints.add(fingerprint);
    for (const raw of body.data) {
      const checked = checkSlot(raw);
      if ('problem' in checked) {
        problems.push(checked.problem);
        continue;
      }
      if (slots.has(checked.slot.inventory_id)) {
        problems.push(`duplicate inventory_id ${JSON.stringify(checked.slot.inventory_id)} (first kept)`);
        continue;
      }
      slots.set(checked.slot.inventory_id, checked.slot);
    }
    const next = body.next_cursor;
    if (next === undefined || next === null)
      return { slots: [...slots.values()], pages, complete: true, problems };
    if (typeof next !== 'string' || next === '' || next.length > 2000) {
      problems.push('next_cursor is not a usable string');
      return { slots: [...slots.values()], pages, complete: false, problems };
    }
    if (cursors.has(next)) {
      problems.push(`cursor loop: next_cursor ${JSON.stringify(next.slice(0, 40))} was seen before`);
      return { slots: [...slots.values()], pages, complete: false, problems };
    }
    cursors.add(next);
    cursor = next;
  }
}
