import { asksForDecision } from './lifecycle-event.js';
import type { NotificationPayload } from './outbox-writer.js';

// Headers and the subject are one line: a title with a line break cannot add a header.
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point.
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').slice(0, 200);
}

/** An instant as an approver reads it anywhere: `2025-05-01 10:30:00 UTC`. */
export function utcText(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A span as words: `less than a minute`, `58 min`, `2 h 5 min`, `3 days`. */
export function spanText(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes < 1) return 'less than a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

/** An expiry in UTC and relative to `now`: `2025-05-01 10:30:00 UTC (expires in 58 min)`. */
export function expiryText(expiresAt: Date, now: number): string {
  const left = expiresAt.getTime() - now;
  return `${utcText(expiresAt)} (${left > 0 ? `expires in ${spanText(left)}` : `expired ${spanText(left)} ago`})`;
}

function agoText(at: Date, now: number): string {
  const past = now - at.getTime();
  return `${utcText(at)} (${past >= 0 ? `${spanText(past)} ago` : `in ${spanText(past)}`})`;
}

/** "needs 2 approvals from approver or admin — 1 given (user:ada@acme.test)". */
export function approvalRuleText(approvals: NotificationPayload['data']['approvals'] | undefined): string {
  if (!approvals) return 'needs 1 approval';
  const { required, roles, given, approvers } = approvals;
  const rule = `needs ${required} ${required === 1 ? 'approval' : 'approvals'}${roles.length > 0 ? ` from ${roles.join(' or ')}` : ''}`;
  const who = approvers.length > 0 ? ` (${approvers.map(oneLine).join(', ')})` : '';
  return `${rule} — ${given} given${who}`;
}

function label(field: string): string {
  const words = field.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function column(name: string, value: string): string {
  return `${`${name}:`.padEnd(13)}${value}`;
}

/** What a message says first, per event: the subject and its opening line. */
function heading(payload: NotificationPayload): { subject: string; opening: string[] } {
  const d = payload.data;
  const title = oneLine(d.title);
  const approvals = d.approvals;
  switch (payload.type) {
    case 'proposal.approval_given': {
      const left = Math.max((approvals?.required ?? 1) - (approvals?.given ?? 0), 0);
      return {
        subject: `Approval ${approvals?.given ?? 1} of ${approvals?.required ?? 1} given: ${title} [${d.short}]`,
        opening: [
          `${oneLine(d.actor)} approved (${approvals?.given ?? 1} of ${approvals?.required ?? 1}): ${title}`,
          `It waits for ${left} more ${left === 1 ? 'approval' : 'approvals'} before it runs; you may give one.`,
        ],
      };
    }
    case 'proposal.escalated':
      return {
        subject: `Escalated to you: ${title} [${d.short}]`,
        opening: [
          `Nobody decided this in time${d.route ? ` on the route ${oneLine(d.route.name)}` : ''}; it is escalated${d.route ? ` to the group ${oneLine(d.route.group)}` : ''}: ${title}`,
        ],
      };
    case 'proposal.reminded':
      return {
        subject: `Reminder, expires soon: ${title} [${d.short}]`,
        opening: [`Still waiting for a decision before it expires: ${title}`],
      };
    case 'proposal.outcome': {
      const status = d.resolution ? `${d.status} (${d.resolution})` : d.status;
      return {
        subject: `Outcome ${status.replace(/_/g, ' ')}: ${title} [${d.short}]`,
        opening: [`A proposal you approved has an outcome: ${status.replace(/_/g, ' ')}.`, title],
      };
    }
    default:
      return {
        subject: `Approval needed: ${title} [${d.short}]`,
        opening: [`${oneLine(d.requestedBy)} proposes: ${title}`],
      };
  }
}

/**
 * The plain-text message of one notification for one approver: what happened, the approval rule
 * and where it stands ("needs 2 approvals — 1 given (…)"), the operation, the amount and the other
 * high-impact fields (redacted as the operation redacts them), the short hash, times in UTC and
 * relative to `now` ("expires in 58 min"), and the deep link.
 */
export function notificationEmail(
  payload: NotificationPayload,
  link: string,
  now: number,
): { subject: string; text: string } {
  const d = payload.data;
  const { subject, opening } = heading(payload);
  const amount = d.amount?.display;
  const fields = (d.highImpact ?? []).filter((f) => f.text !== amount);
  const deciding = asksForDecision(payload.type);
  const lines = [
    ...opening,
    '',
    column('Approval', approvalRuleText(d.approvals)),
    column('Operation', d.operation),
    ...(amount ? [column('Amount', amount)] : []),
    ...fields.map((f) => `${label(f.field)}: ${oneLine(f.text)}`),
    column('Short hash', deciding ? `${d.short} (the Approve button shows the same)` : d.short),
    column('Proposed', agoText(new Date(d.createdAt), now)),
    ...(deciding ? [column('Expires', expiryText(new Date(d.expiresAt), now))] : []),
    '',
    deciding ? `Review and decide: ${link}` : `See the outcome: ${link}`,
    ...(deciding ? ['', 'Approve only on the proposal page, after checking the short hash matches.'] : []),
  ];
  return { subject: oneLine(subject), text: `${lines.join('\n')}\n` };
}
