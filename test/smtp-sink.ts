// A real SMTP server on loopback (smtp-server) that keeps every message it receives, parsed.
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` for PODIUM_SMTP_URL. */
  url: string;
  messages: ParsedMail[];
  /** The next message to `to` (already received or still to come). */
  next(to: string): Promise<ParsedMail>;
  close(): Promise<void>;
}

const recipients = (m: ParsedMail): string[] =>
  [m.to ?? []].flat().flatMap((a) => a.value.map((v) => (v.address ?? '').toLowerCase()));

/** Starts the sink; messages are matched to `next` callers in the order they arrive. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ParsedMail[] = [];
  const taken = new Set<ParsedMail>();
  const waiting: { to: string; resolve: (m: ParsedMail) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, done) {
      simpleParser(stream).then(
        (m) => {
          messages.push(m);
          const i = waiting.findIndex((w) => recipients(m).includes(w.to));
          if (i >= 0) {
            taken.add(m);
            waiting.splice(i, 1)[0]!.resolve(m);
          }
          done();
        },
        (err: Error) => done(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    next(to) {
      const addr = to.toLowerCase();
      const found = messages.find((m) => !taken.has(m) && recipients(m).includes(addr));
      if (found) {
        taken.add(found);
        return Promise.resolve(found);
      }
      return new Promise((resolve) => waiting.push({ to: addr, resolve }));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The one-time console link in a message's text. */
export function linkIn(m: ParsedMail): string {
  const found = /https?:\/\/\S+\/console\/#\/(accept|reset)\/[A-Za-z0-9_-]+/.exec(m.text ?? '');
  if (!found) throw new Error(`no link in: ${m.text}`);
  return found[0];
}
