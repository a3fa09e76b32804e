import type { AuditEvent } from '../audit/event.js';
import { canonicalize } from '../canonical/canonicalize.js';
import { verifySeal } from '../canonical/seal.js';
import { policyOf } from '../engine/proposal.js';
import type { AnyOperation } from '../operation/define-operation.js';
import { declaredOrder, isHighImpact } from '../operation/field-emphasis.js';
import { formatMoney } from '../operation/money.js';
import type { ProposalRecord } from '../store/records.js';
import type { StoreTransaction } from '../store/store.js';

/**
 * The approval rule of a proposal and where it stands at an event: `required` distinct approvers
 * (holding one of `roles`, any approver when empty), `given` so far, and who (`approvers`, principal
 * ids). For an outcome, `approvers` are the people who decided it (none when a grant approved it).
 */
export interface NotificationApprovals {
  readonly required: number;
  readonly roles: readonly string[];
  readonly given: number;
  readonly approvers: readonly string[];
}

/** One high-impact field of a (redacted) preview, as one line of text. */
export interface NotificationField {
  readonly field: string;
  readonly text: string;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v): v is string => typeof v === 'string') ? value : undefined;
}

/**
 * The approval rule and its approvals at `event`, read in the step's transaction: the engine's own
 * count for a quorum approval (the audit detail of `partially_approved` and of the `approved` that
 * completed it), else the proposal's recorded approvals of its current digest (with `sealKey`, only
 * rows sealed with it, as the engine counts them), else the one operator whose exact approval
 * decided it.
 */
export async function approvalsAt(
  tx: Pick<StoreTransaction, 'listApprovals'>,
  event: Pick<AuditEvent, 'step' | 'detail'>,
  record: ProposalRecord,
  sealKey: string | Uint8Array | undefined,
): Promise<NotificationApprovals> {
  const policy = policyOf(record);
  const counted = strings(event.detail['approvers']);
  let approvers: readonly string[];
  if ((event.step === 'partially_approved' || event.step === 'approved') && counted) approvers = counted;
  else if (policy.required > 1) {
    const seen = new Set<string>();
    for (const a of await tx.listApprovals(record.tenant, record.id)) {
      if (a.digest !== record.digest || a.approver === record.requestedBy || a.approver === record.editedBy)
        continue;
      const fields = {
        tenant: a.tenant,
        proposalId: a.proposalId,
        approver: a.approver,
        digest: a.digest,
        at: a.at,
      };
      if (sealKey !== undefined && (a.seal === null || !verifySeal(fields, sealKey, a.seal))) continue;
      seen.add(a.approver);
    }
    approvers = [...seen];
  } else approvers = record.approvalKind === 'exact' && record.decidedBy !== null ? [record.decidedBy] : [];
  return { required: policy.required, roles: policy.roles, given: approvers.length, approvers };
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const DESTINATION = /destination|recipient/i;
const MAX_TEXT = 200;

function flat(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point.
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}

function oneLine(text: string): string {
  const line = flat(text);
  return line.length > MAX_TEXT ? `${line.slice(0, MAX_TEXT - 1)}…` : line;
}

/**
 * A preview value as one line of full-precision text, never shortened: money as `12,500.00 USD`,
 * a list of strings joined by commas, anything else as canonical JSON. Control characters become
 * spaces. (The email's lines are this, cut at 200 characters.)
 */
export function fieldText(value: unknown): string {
  if (typeof value === 'string') return flat(value);
  if (
    isRecord(value) &&
    Number.isSafeInteger(value['minor']) &&
    typeof value['currency'] === 'string' &&
    /^[A-Z]{3}$/.test(value['currency'])
  )
    return formatMoney(value['minor'] as number, value['currency']);
  const list = strings(value);
  if (list) return flat(list.join(', '));
  return flat(typeof value === 'number' || typeof value === 'boolean' ? String(value) : canonicalize(value));
}

function textOf(value: unknown): string {
  return oneLine(fieldText(value));
}

/**
 * The fields an approver must not miss, from the preview as the operation redacts it: those the
 * operation declares `highImpact`, and any named like a destination or recipients, in the
 * operation's declared order (the review page's). Each is one line of full-precision text (money
 * as `12,500.00 USD`); a redacted value stays redacted.
 */
export function highImpactFields(preview: unknown, operation: AnyOperation | undefined): NotificationField[] {
  if (!isRecord(preview)) return [];
  const order = operation ? declaredOrder(operation) : [];
  const rank = (key: string) => {
    const i = order.indexOf(key);
    return i === -1 ? order.length : i;
  };
  return Object.keys(preview)
    .filter((key) => key !== 'title' && (isHighImpact(operation, key) || DESTINATION.test(key)))
    .map((key, stored) => ({ key, stored }))
    .sort((a, b) => rank(a.key) - rank(b.key) || a.stored - b.stored)
    .map(({ key }) => ({ field: key, text: textOf(preview[key]) }));
}
