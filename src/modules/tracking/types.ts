/** An affiliate programme as the admin API shows it (never its token). */
export interface Program {
  id: number;
  slug: string;
  name: string;
  affiliateId: string;
  landingParams: string;
  paramMap: Record<string, string>;
  timezone: string;
  currency: string;
  trackerIds: number[];
  postbackTokenHint: string;
  createdAt: string;
  updatedAt: string;
}

/** Why a recorded hit is not counted. */
/** Why a hit is not counted: not a visitor's click (`head`, `prefetch`, `bot`), or kept from the operator (`blocked`). */
export type HitFlag = 'head' | 'prefetch' | 'bot' | 'blocked';

/** One click or impression as written by the group commit. */
export interface ClickRow {
  id: string;
  kind: 'click' | 'impression';
  at: Date;
  linkId: number;
  /** Null for a banner link (paid by its booking, not by a programme). */
  trackerId: number | null;
  offerId: number | null;
  brandId: number | null;
  siteId: number | null;
  toplistId: number | null;
  position: number | null;
  programId: number | null;
  subId: string | null;
  referrer: string | null;
  userAgent: string | null;
  country: string | null;
  flag: HitFlag | null;
}

/** The click fields a conversion is attributed to. */
export type ClickAttribution = Pick<
  ClickRow,
  'trackerId' | 'offerId' | 'brandId' | 'siteId' | 'toplistId' | 'position' | 'programId'
>;

/** The raw postback as logged, secrets already removed. */
export interface PostbackLogEntry {
  program: string;
  method: string;
  contentType: string | null;
  query: Record<string, unknown>;
  body: string | null;
  remoteIp: string | null;
}

/** A validated conversion as the postback intake hands it to the repository. */
export interface ConversionInput {
  id: string;
  programId: number;
  transactionId: string;
  event: string;
  amount: string | null;
  currency: string | null;
  playerRef: string | null;
  clickId: string | null;
}

/** How stats cut days: in each row's site zone, its programme's zone, or one fixed zone. */
export type StatsZoneMode = 'site' | 'program' | 'fixed';

/** The dimensions a stats report can be grouped by. */
export const STATS_DIMENSIONS = ['day', 'site', 'toplist', 'position', 'brand', 'program'] as const;
export type StatsDimension = (typeof STATS_DIMENSIONS)[number];

export interface StatsFilter {
  from: string;
  to: string;
  tz: StatsZoneMode;
  /** The IANA zone when `tz` is `fixed`. */
  zone?: string | undefined;
  programId?: number | undefined;
  siteId?: number | undefined;
  /** Only these sites' rows (a person limited to some sites); undefined: every site. */
  siteIds?: readonly number[] | undefined;
  toplistId?: number | undefined;
  brandId?: number | undefined;
  /** Split rows by the click's sub_id (raw rows: the caller bounds the range). */
  bySubId?: boolean | undefined;
  /**
   * Sum rows over every dimension not named (`day` included); absent: one row per day and every
   * dimension. Grouped rows without `day` come most clicks first.
   */
  group?: readonly StatsDimension[] | undefined;
  limit: number;
  offset: number;
}

/** Exact decimal strings per ISO currency code. */
export type Money = Record<string, string>;

export interface StatsRow {
  /** Null when the report is grouped without `day`. */
  day: string | null;
  /** The zone this row's day was cut in; null when grouped without `day`. */
  timezone: string | null;
  siteId: number | null;
  toplistId: number | null;
  position: number | null;
  brandId: number | null;
  programId: number | null;
  clicks: number;
  impressions: number;
  /** Clicks the compliance click guard sent to the site's fallback page instead of the operator (not in `clicks`). */
  blockedClicks: number;
  /** Conversions per event name (`registration`, `ftd`, … as the operator sent them). */
  events: Record<string, number>;
  /** Amounts of revenue events (`ftd`, `deposit`) per currency, 4 decimals. */
  revenue: Money;
  /** Amounts of commission events (`cpa`, `revshare`, `commission`) per currency, 4 decimals. */
  commission: Money;
  /** Commission per counted click per currency, 4 decimals; null without clicks. */
  epc: Record<string, string | null>;
  /** The clicks' sub_id, only when broken down by it. */
  subId?: string | null;
}

/** One figure of a reconciliation day. */
export interface Compared {
  ours: number;
  operator: number | null;
  /** Ours minus the operator's; null without an operator figure. */
  difference: number | null;
  /** The difference as a percentage of the operator's figure, 2 decimals; null when undefined. */
  differencePercent: string | null;
  /** The difference exceeds the threshold (any difference when the operator's figure is 0). */
  flagged: boolean;
}

export interface ReconcileDay {
  day: string;
  pulled: boolean;
  lastPull: { status: 'ok' | 'failed'; reason: string | null } | null;
  pulledAt: string | null;
  clicks: Compared;
  registrations: Compared;
  ftds: Compared;
  commission: ComparedMoney;
  flagged: boolean;
}

/** Commission of a reconciliation day: exact decimal strings in one currency. */
export interface ComparedMoney {
  /** The operator report's currency that day, else the programme's. */
  currency: string;
  /** Our commission-event (`cpa`, `revshare`, `commission`) amounts in that currency. */
  ours: string;
  operator: string | null;
  difference: string | null;
  differencePercent: string | null;
  flagged: boolean;
}
