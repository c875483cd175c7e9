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
export type HitFlag = 'head' | 'prefetch' | 'bot';

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

export interface StatsFilter {
  from: string;
  to: string;
  tz: StatsZoneMode;
  /** The IANA zone when `tz` is `fixed`. */
  zone?: string | undefined;
  programId?: number | undefined;
  siteId?: number | undefined;
  toplistId?: number | undefined;
  brandId?: number | undefined;
  limit: number;
  offset: number;
}

export interface StatsRow {
  day: string;
  /** The zone this row's day was cut in. */
  timezone: string;
  siteId: number | null;
  toplistId: number | null;
  position: number | null;
  brandId: number | null;
  programId: number | null;
  clicks: number;
  impressions: number;
  /** Conversions per event name (`registration`, `ftd`, … as the operator sent them). */
  events: Record<string, number>;
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
  flagged: boolean;
}
