import { invalidField } from '../../lib/errors.ts';
import { addDays } from '../../lib/time.ts';
import type { CatalogService } from '../catalog/service.ts';
import type { Shrinkage, SuggestedOrderRepository, SuggestedRow } from './suggested-order-repository.ts';

export const SUGGESTED_DEFAULT_DAYS = 30;
export const SUGGESTED_MAX_DAYS = 90;

/**
 * How far small samples are pulled toward the family: a brand's conversion rate counts as if it
 * had 100 more clicks at the family's rate, and its commission per conversion as if it had 10
 * more conversions at the family's value. The interval is 90 % (z = 1.645).
 */
export const SHRINKAGE: Shrinkage = { priorClicks: 100, priorConversions: 10, z: 1.645 };

/** One toplist item with its measured and estimated EPC (decimal strings). */
export type SuggestedItem = Omit<SuggestedRow, 'low' | 'high'> & { interval: { low: string; high: string } };

/** `GET /toplists/{id}/suggested-order`: the ranking, never applied or published. */
export interface SuggestedOrder {
  toplistId: number;
  days: number;
  from: string;
  to: string;
  currency: string;
  priorEpc: string | null;
  items: SuggestedItem[];
  expected: { currentEpc: string; suggestedEpc: string; change: string };
}

/**
 * Suggests the order of a toplist's brands by commission per click over a window, each brand's
 * EPC shrunk toward its geo family's (empirical Bayes), so thin evidence does not top the list.
 */
export class SuggestedOrders {
  constructor(
    private readonly repo: SuggestedOrderRepository,
    private readonly catalog: CatalogService,
    private readonly now: () => Date,
  ) {}

  async suggest(
    toplistId: number,
    days: number = SUGGESTED_DEFAULT_DAYS,
    currency?: string,
  ): Promise<SuggestedOrder> {
    if (!Number.isInteger(days) || days < 1 || days > SUGGESTED_MAX_DAYS)
      throw invalidField('days', `must be a whole number from 1 to ${SUGGESTED_MAX_DAYS}`);
    if (currency !== undefined && !/^[A-Z]{3}$/.test(currency))
      throw invalidField('currency', 'must be an ISO 4217 code such as EUR');
    await this.catalog.toplists.get(toplistId);
    const to = this.now().toISOString().slice(0, 10);
    const from = addDays(to, 1 - days);
    const f = await this.repo.figures(toplistId, from, to, currency ?? null, SHRINKAGE);
    return {
      toplistId,
      days,
      from,
      to,
      currency: f.currency,
      priorEpc: f.priorEpc,
      items: f.items.map(({ low, high, ...item }) => ({ ...item, interval: { low, high } })),
      expected: { currentEpc: f.currentEpc, suggestedEpc: f.suggestedEpc, change: f.change },
    };
  }
}
