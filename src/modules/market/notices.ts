import type { Db } from '../../db/index.ts';
import type { Mailer, MailMessage } from '../../lib/mailer.ts';
import { MarketRepository } from './repository.ts';
import type { Advertiser, NoticeKind, NoticeRow, Reservation } from './types.ts';

/** Notices one run of the job sends at most (the rest wait for the next run). */
export const NOTICE_BATCH = 50;
/** Tries of a notice before it is given up (its outcome `failed`, the error kept). */
export const NOTICE_ATTEMPTS = 8;
/** How long a claimed notice is left to its sender before another process may take it. */
const LEASE_MS = 5 * 60_000;
/** Wait before the next try: 1, 2, 4 … minutes, at most an hour. */
const backoffMs = (attempts: number) => Math.min(60, 2 ** (attempts - 1)) * 60_000;

const SUBJECTS: Record<NoticeKind, (r: Reservation) => string> = {
  booked: (r) => `Reservation ${r.id} "${r.campaign_name}" is approved and booked`,
  rejected: (r) => `Reservation ${r.id} "${r.campaign_name}" was not approved`,
  expired: (r) => `Reservation ${r.id} "${r.campaign_name}" expired before approval`,
};

/** The plain-text mail of a notice: what happened, why, and the lines it concerns. */
export function noticeMail(
  kind: NoticeKind,
  r: Reservation,
  a: Pick<Advertiser, 'name'>,
): Omit<MailMessage, 'to'> {
  const what: Record<NoticeKind, string> = {
    booked: `The publisher approved it: the ad server holds draft order ${r.order_id ?? '(none)'}.`,
    rejected: `The publisher rejected it${r.reason ? `: ${r.reason}` : '.'} Its impressions are free again.`,
    expired: `It was not approved before its hold ran out (${r.expires_at}); its impressions are free again. Reserve again to hold them.`,
  };
  const lines = r.lines.map(
    (l) =>
      `  ${l.line_no}. ${l.product_id} · ${l.geo} · ${l.month} · ${l.impressions} impressions · ${l.pricing} ${l.price} ${r.currency}`,
  );
  return {
    subject: SUBJECTS[kind](r),
    text: [`Hello ${a.name},`, '', what[kind], '', 'Lines:', ...lines, '', 'Podium marketplace'].join('\n'),
  };
}

/** What the notices need of the marketplace: the reservation and its advertiser as the API shows them. */
export interface NoticeSource {
  getReservation(id: string): Promise<Reservation>;
  getAdvertiser(id: string): Promise<Advertiser>;
}

/**
 * Sends the notices owed to advertisers (the market-notices job): each to every contact of the
 * advertiser by mail, or to the log when no SMTP server is configured. A notice is written in the
 * transaction that changed the reservation, so none is lost to a crash; a failed send is tried
 * again with backoff, and its outcome is kept on the reservation's timeline.
 */
export class MarketNotices {
  private readonly repo: MarketRepository;

  constructor(
    db: Db,
    private readonly source: NoticeSource,
    private readonly mailer: Mailer,
    private readonly log: { info?(msg: string): void; warn(msg: string, err?: unknown): void },
    private readonly now: () => Date,
  ) {
    this.repo = new MarketRepository(db);
  }

  /** Sends every due notice (batch after batch); returns how many were closed. */
  async sendDue(signal?: AbortSignal): Promise<number> {
    let closed = 0;
    for (;;) {
      const at = this.now();
      const claimed = await this.repo.claimNotices(at, new Date(at.getTime() + LEASE_MS), NOTICE_BATCH);
      for (const n of claimed) {
        if (signal?.aborted) return closed;
        if (await this.send(n)) closed++;
      }
      if (claimed.length < NOTICE_BATCH) return closed;
    }
  }

  /** One notice: true once it is closed (mailed, logged, nobody to mail, or given up). */
  private async send(n: NoticeRow): Promise<boolean> {
    const r = await this.source.getReservation(n.reservation_id);
    const a = await this.source.getAdvertiser(r.advertiser_id);
    const mail = noticeMail(n.kind, r, a);
    const to = [...new Set(a.contacts.map((c) => c.email.toLowerCase()))];
    const close = async (outcome: 'mailed' | 'logged' | 'no_contacts' | 'failed', error: string | null) => {
      const at = this.now();
      await this.repo.finishNotice(n.id, at, outcome, error);
      await this.repo.addEvent(r.id, at, `notice_${outcome}`, 'job:market-notices', {
        notice: n.kind,
        recipients: outcome === 'mailed' ? to.length : 0,
        ...(error ? { error } : {}),
      });
      return true;
    };
    if (!to.length) return close('no_contacts', null);
    if (!this.mailer.configured) {
      // The addresses stay out of the log: the subject says what the advertiser was owed.
      this.log.info?.(
        `market notice not mailed (no SMTP server, PODIUM_SMTP_URL): ${mail.subject} — ${to.length} contact(s)`,
      );
      return close('logged', null);
    }
    try {
      for (const address of to) await this.mailer.send({ to: address, ...mail });
      return close('mailed', null);
    } catch (err) {
      const error = (err as Error).message.slice(0, 500);
      if (n.attempts >= NOTICE_ATTEMPTS) return close('failed', error);
      this.log.warn(
        `market notice of reservation ${r.id} not sent (try ${n.attempts} of ${NOTICE_ATTEMPTS})`,
        err,
      );
      await this.repo.retryNotice(n.id, new Date(this.now().getTime() + backoffMs(n.attempts)), error);
      return false;
    }
  }
}
