import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { expect } from 'vitest';

/** One message the SMTP receiver kept. */
export interface Mail {
  readonly from: string;
  readonly to: readonly string[];
  readonly raw: string;
}

/** A real SMTP server on loopback (no TLS, no auth) that keeps every message. */
export interface SmtpReceiver {
  /** The URL to give the email sender (`smtp://127.0.0.1:PORT`). */
  readonly url: string;
  readonly mails: Mail[];
  close(): Promise<void>;
}

/** Starts an SMTP receiver on 127.0.0.1, on any free port. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The decoded text of a quoted-printable (UTF-8) or 7bit message, its folded headers unfolded. */
function textOf(raw: string): string {
  const unfolded = raw.replace(/\r?\n[ \t]+/g, ' ').replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < unfolded.length; i++) {
    const hex = /^=([0-9A-F]{2})/.exec(unfolded.slice(i, i + 3));
    if (hex) {
      bytes.push(Number.parseInt(hex[1]!, 16));
      i += 2;
    } else bytes.push(...Buffer.from(unfolded[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The decoded text of the one message sent to `address` (each recipient has their own). */
export function mailTo(mails: readonly Mail[], address: string): string {
  const sent = mails.filter((m) => m.to.includes(address));
  expect(sent, address).toHaveLength(1);
  expect(sent[0]!.to).toEqual([address]);
  return textOf(sent[0]!.raw);
}
