import { createTransport } from 'nodemailer';
import { parseStoredJson } from '../canonical/stored-json.js';
import { approvalLink, type ChannelSender, type PublicUrl } from './channel.js';
import { networkFailure } from './delivery-error.js';
import type { NotificationPayload } from './outbox-writer.js';

/** Where approval emails go out. */
export interface EmailTarget {
  /** `smtp://HOST:PORT` (STARTTLS when offered) or `smtps://HOST:PORT`, with optional `user:pass@`. */
  readonly smtpUrl: string;
  /** The From address, e.g. `Countersign <approvals@example.com>`. */
  readonly from: string;
  /** An SMTP exchange taking longer fails (and is retried). Default 10 s. */
  readonly timeoutMs?: number;
}

/** What the email channel asks of the server. */
export interface EmailContext {
  readonly publicUrl: PublicUrl;
  /** The emails of the tenant's operators who may approve. */
  recipients(tenant: string): Promise<readonly string[]>;
  /** Whether the proposal still waits for a decision (one a grant approved at once is not mailed). */
  stillPending(tenant: string, proposalId: string): Promise<boolean>;
}

// Headers and the subject are one line: a title with a line break cannot add a header.
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point.
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').slice(0, 200);
}

/** The plain-text message about one new proposal: title, amount, short hash, expiry, deep link. */
export function approvalEmail(payload: NotificationPayload, link: string): { subject: string; text: string } {
  const d = payload.data;
  const lines = [
    `${d.requestedBy} proposes: ${oneLine(d.title)}`,
    '',
    `Operation:  ${d.operation}`,
    ...(d.amount ? [`Amount:     ${d.amount.display}`] : []),
    `Short hash: ${d.short} (the Approve button shows the same)`,
    `Expires:    ${d.expiresAt}`,
    '',
    `Review and decide: ${link}`,
    '',
    'Approve only on the proposal page, after checking the short hash matches.',
  ];
  return { subject: oneLine(`Approval needed: ${d.title} [${d.short}]`), text: `${lines.join('\n')}\n` };
}

/**
 * Emails a new proposal to the tenant's approvers over SMTP (nodemailer). A delivery is one
 * message to every approver; no approvers is a failure, retried (one may be added).
 */
export function emailSender(target: EmailTarget, context: EmailContext): ChannelSender {
  const timeoutMs = target.timeoutMs ?? 10_000;
  const transport = createTransport({
    url: target.smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return async (delivery) => {
    if (!(await context.stillPending(delivery.tenant, delivery.proposalId)))
      return { kind: 'skipped', reason: 'not_pending' };
    const to = await context.recipients(delivery.tenant);
    if (to.length === 0) return { kind: 'failed', error: { code: 'no_recipients' } };
    const payload = parseStoredJson(delivery.payloadJson) as unknown as NotificationPayload;
    const message = approvalEmail(payload, approvalLink(context.publicUrl, delivery.proposalId));
    try {
      await transport.sendMail({
        from: target.from,
        to: [...to],
        subject: message.subject,
        text: message.text,
        headers: { 'X-Countersign-Event': delivery.eventId },
      });
      return { kind: 'delivered' };
    } catch (error) {
      return { kind: 'failed', error: networkFailure(error) };
    }
  };
}
