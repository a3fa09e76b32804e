import { asksForDecision } from './lifecycle-event.js';
import { createTransport } from 'nodemailer';
import { parseStoredJson } from '../canonical/stored-json.js';
import { approvalLink, type ChannelSender, type PublicUrl } from './channel.js';
import { networkFailure } from './delivery-error.js';
import { notificationEmail } from './email-message.js';
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

/** The event one email delivery is about, for choosing who receives it. */
export interface EmailNotice {
  readonly type: string;
  readonly proposalId: string;
  readonly payload: NotificationPayload;
}

/** What the email channel asks of the server. */
export interface EmailContext {
  readonly publicUrl: PublicUrl;
  /**
   * The addresses one delivery goes to, one message each: for `proposal.created` and
   * `proposal.approval_given` the approvers who may still decide the proposal, for
   * `proposal.outcome` the approvers who decided it (see `emailRecipients`).
   */
  recipients(tenant: string, notice: EmailNotice): Promise<readonly string[]>;
  /** Whether the proposal still waits for a decision (one a grant approved at once is not mailed). */
  stillPending(tenant: string, proposalId: string): Promise<boolean>;
  /** The clock relative times ("expires in 58 min") are written from. Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Emails notifications over SMTP (nodemailer): a new proposal and an approval toward a quorum to
 * the approvers who may still decide it (skipped once it is no longer pending), an outcome to the
 * approvers who decided it. Each recipient gets a message of their own (no approver sees the
 * others' addresses). An address the server refuses is left out; a connection or login failure
 * fails the delivery, which is retried whole (at least once: a recipient mailed before the failure
 * may get the message twice). No recipients is a failure, retried (one may be added).
 */
export function emailSender(target: EmailTarget, context: EmailContext): ChannelSender {
  const timeoutMs = target.timeoutMs ?? 10_000;
  const now = context.now ?? Date.now;
  const transport = createTransport({
    url: target.smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return async (delivery) => {
    const deciding = asksForDecision(delivery.type);
    if (deciding && !(await context.stillPending(delivery.tenant, delivery.proposalId)))
      return { kind: 'skipped', reason: 'not_pending' };
    const payload = parseStoredJson(delivery.payloadJson) as unknown as NotificationPayload;
    const to = [
      ...new Set(
        await context.recipients(delivery.tenant, {
          type: delivery.type,
          proposalId: delivery.proposalId,
          payload,
        }),
      ),
    ];
    if (to.length === 0) return { kind: 'failed', error: { code: 'no_recipients' } };
    const message = notificationEmail(payload, approvalLink(context.publicUrl, delivery.proposalId), now());
    let sent = 0;
    let refused: unknown;
    for (const address of to) {
      try {
        await transport.sendMail({
          from: target.from,
          to: address,
          subject: message.subject,
          text: message.text,
          headers: { 'X-Countersign-Event': delivery.eventId },
        });
        sent += 1;
      } catch (error) {
        // The server refused this one address (as one message to all would have left it out): the
        // others still get theirs. Anything else (the connection, the login) fails the delivery.
        if ((error as { code?: unknown } | null)?.code !== 'EENVELOPE')
          return { kind: 'failed', error: networkFailure(error) };
        refused = error;
      }
    }
    return sent > 0 ? { kind: 'delivered' } : { kind: 'failed', error: networkFailure(refused) };
  };
}
