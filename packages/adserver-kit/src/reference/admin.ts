import { randomInt } from 'node:crypto';
import type { Queryable } from '../db.ts';
import { isIanaZone, isIsoCurrency, SCOPES, type Scope } from '../schemas.ts';
import { hashKey, keyHint, mintKey, newId } from './keys.ts';
import * as repo from './repository.ts';

// Console-side operations of the reference server (accounts, keys, slots, activation). They are
// not reachable through the API: the contract's key can read, draft and report, nothing more.

export interface AccountInput {
  name?: string;
  timezone?: string;
  currency?: string;
  forecast?: boolean;
  /** Seed of the synthetic traffic model (random when absent). */
  trafficSeed?: number;
}

/** Creates an account; fails on a non-IANA zone or non-ISO currency. */
export async function createAccount(q: Queryable, input: AccountInput = {}): Promise<repo.Account> {
  const account: repo.Account = {
    id: newId('acc'),
    name: input.name ?? 'Reference Publisher',
    timezone: input.timezone ?? 'Europe/Malta',
    currency: input.currency ?? 'EUR',
    forecast_enabled: input.forecast ?? true,
    traffic_seed: input.trafficSeed ?? randomInt(1, 2 ** 31 - 1),
  };
  if (!isIanaZone(account.timezone)) throw new Error(`timezone ${account.timezone} is not an IANA zone`);
  if (!isIsoCurrency(account.currency)) throw new Error(`currency ${account.currency} is not ISO-4217`);
  await repo.insertAccount(q, account);
  return account;
}

export interface IssuedKey {
  id: string;
  key: string;
  scopes: Scope[];
}

/** Issues a new key for the account (all scopes by default); the plaintext is returned once. */
export async function issueKey(
  q: Queryable,
  accountId: string,
  opts: { scopes?: readonly Scope[]; label?: string; expiresAt?: Date | null } = {},
): Promise<IssuedKey> {
  const scopes = [...(opts.scopes ?? SCOPES)];
  for (const s of scopes)
    if (!SCOPES.includes(s)) throw new Error(`unknown scope ${s} (known: ${SCOPES.join(', ')})`);
  if (!(await repo.getAccount(q, accountId))) throw new Error(`unknown account ${accountId}`);
  const key = mintKey();
  const id = newId('key');
  await repo.insertKey(q, {
    id,
    accountId,
    hash: hashKey(key),
    hint: keyHint(key),
    label: opts.label ?? '',
    scopes,
    expiresAt: opts.expiresAt ?? null,
  });
  return { id, key, scopes };
}

/** The demo slots a fresh account gets: one unforecastable and one archived, to exercise both paths. */
export const DEMO_SLOTS: repo.SlotRow[] = [
  {
    id: 'slot-home-leaderboard',
    name: 'Home leaderboard',
    sizes: ['728x90', '970x90'],
    format: 'display',
    status: 'active',
    daily_impressions: 120_000,
    forecastable: true,
  },
  {
    id: 'slot-home-mpu',
    name: 'Home MPU',
    sizes: ['300x250'],
    format: 'display',
    status: 'active',
    daily_impressions: 80_000,
    forecastable: true,
  },
  {
    id: 'slot-article-sidebar',
    name: 'Article sidebar',
    sizes: ['300x250', '300x600'],
    format: 'display',
    status: 'active',
    daily_impressions: 200_000,
    forecastable: true,
  },
  {
    id: 'slot-mobile-banner',
    name: 'Mobile banner',
    sizes: ['320x50', '320x100'],
    format: 'display',
    status: 'active',
    daily_impressions: 150_000,
    forecastable: true,
  },
  {
    id: 'slot-new-skin',
    name: 'New site skin (no history)',
    sizes: ['1920x1080'],
    format: 'display',
    status: 'active',
    daily_impressions: 10_000,
    forecastable: false,
  },
  {
    id: 'slot-old-popunder',
    name: 'Old pop-under',
    sizes: ['800x600'],
    format: 'display',
    status: 'archived',
    daily_impressions: 5_000,
    forecastable: true,
  },
];

/** Adds (or replaces) slots of an account. */
export async function putSlots(
  q: Queryable,
  accountId: string,
  slots: readonly repo.SlotRow[],
): Promise<void> {
  for (const s of slots) await repo.upsertSlot(q, accountId, s);
}
