import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.ts';

/** One plain-text message to one person. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends Podium's mail; `configured` false when no SMTP server is set (then `send` throws). */
export interface Mailer {
  readonly configured: boolean;
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * How long a send may wait on the SMTP server: connecting, its greeting, and any silence after.
 * Sends happen inside an admin's request, so a dead server must fail it in seconds, not minutes.
 */
const SMTP_TIMEOUT_MS = 10_000;

/** The mailer of `PODIUM_SMTP_URL` (nodemailer over SMTP), or one that is not configured. */
export function mailerFromConfig(config: Pick<Config, 'smtpUrl' | 'mailFrom'>): Mailer {
  if (!config.smtpUrl) return NO_MAIL;
  let transport: Transporter | undefined;
  const from = config.mailFrom;
  const url = config.smtpUrl;
  return {
    configured: true,
    async send(m) {
      transport ??= nodemailer.createTransport({
        url,
        connectionTimeout: SMTP_TIMEOUT_MS,
        greetingTimeout: SMTP_TIMEOUT_MS,
        socketTimeout: SMTP_TIMEOUT_MS,
        // Never log: messages carry one-time links.
        logger: false,
        debug: false,
      } as Parameters<typeof nodemailer.createTransport>[0]);
      await transport.sendMail({ from, to: m.to, subject: m.subject, text: m.text });
    },
    close() {
      transport?.close();
    },
  };
}

const NO_MAIL: Mailer = {
  configured: false,
  send: () => Promise.reject(new Error('no SMTP server is configured (PODIUM_SMTP_URL)')),
  close: () => {},
};
