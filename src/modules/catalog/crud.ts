import type { Paged } from '../../db/paged.ts';
import { fromDbError } from '../../lib/db-errors.ts';
import { notFound } from '../../lib/errors.ts';
import { type Page, pageMeta, pageWindow } from '../../lib/paging.ts';
import type { PageArgs } from './rows.ts';

// The console's API types read `Page` from here.
export type { Page };

/** Constraint names that map to a field of the request, for 409/422 answers naming it. */
export const FIELD_BY_CONSTRAINT: Record<string, string> = {
  toplists_site_id_slug_key: 'slug',
  toplists_site_id_template_id_geo_type_geo_code_key: 'geo',
  toplists_check: 'liveUntil',
};

/** Awaits `p`, turning constraint violations into client errors. */
export async function guard<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw fromDbError(err, FIELD_BY_CONSTRAINT) ?? err;
  }
}

/** How one editorial entity is stored: what the generic create/update/get/list run on. */
export interface EntityStore<T, I, P, F> {
  /** Name in 404 messages ("Owner not found"). */
  entity: string;
  /** Refuses what neither a create nor a patch may carry, before either is stored. */
  check?(values: I | P): void;
  insert(input: I): Promise<number>;
  /** False when the row does not exist. */
  update(id: number, patch: P): Promise<boolean>;
  get(id: number): Promise<T | undefined>;
  list(window: PageArgs, filter: F): Promise<Paged<T>>;
}

/**
 * The create / update / get / list run every editorial entity shares: constraint violations
 * become client errors, a missing row a 404, lists a page with its `meta`.
 */
export class Crud<T, I, P = Partial<I>, F = undefined> {
  constructor(private readonly store: EntityStore<T, I, P, F>) {}

  async create(input: I): Promise<T> {
    this.store.check?.(input);
    const id = await guard(this.store.insert(input));
    return (await this.store.get(id))!;
  }

  async update(id: number, patch: P): Promise<T> {
    this.store.check?.(patch);
    if (!(await guard(this.store.update(id, patch)))) throw notFound(this.store.entity);
    return (await this.store.get(id))!;
  }

  async get(id: number): Promise<T> {
    return (await this.store.get(id)) ?? Promise.reject(notFound(this.store.entity));
  }

  /** One page, narrowed to the rows whose name or slug contains `search` (any case) when given. */
  async list(page = 1, perPage = 15, filter?: F, search?: string): Promise<Page<T>> {
    const { rows, total } = await this.store.list({ ...pageWindow(page, perPage), search }, filter as F);
    return { data: rows, meta: pageMeta(total, page, perPage) };
  }
}
