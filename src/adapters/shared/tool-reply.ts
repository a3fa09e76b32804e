import type { CorruptAuditChain } from '../../engine/corrupt-audit-chain.js';
import type { InvalidRequest } from '../../engine/freeze-proposal.js';
import type { Proposal } from '../../engine/proposal.js';
import type { RateLimited } from '../../engine/proposal-quota.js';

/**
 * What a proposing tool hands back to the model, as a discriminated union so each adapter can
 * mark a refusal as an error where its framework has that notion. `text` is always safe to show
 * the model: ids, the short hash, the application's own one-line summary — never arguments the
 * model did not choose, never a stack trace.
 */
export type ToolReply =
  | { readonly kind: 'proposed'; readonly text: string; readonly proposal: Proposal }
  | {
      readonly kind: 'invalid_request';
      readonly reason: InvalidRequest['reason'];
      readonly text: string;
      readonly issues: InvalidRequest['issues'];
    }
  | {
      readonly kind: 'rate_limited';
      readonly reason: 'rate_limited';
      /** Says how long to wait before proposing again. */
      readonly text: string;
      readonly retryAfterMs: number;
    }
  | {
      /** The tenant's audit chain needs an operator's repair: nothing was proposed. */
      readonly kind: 'corrupt_audit_chain';
      readonly reason: 'corrupt_audit_chain';
      readonly text: string;
    };

const MAX_SUMMARY = 160;
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * The one-line summary of a proposal: the preview's `title` when the operation provides one
 * (written by the application from its own records), else the operation kind. Control characters
 * and line breaks become spaces so the line cannot smuggle a second instruction into the transcript.
 */
export function summaryOf(proposal: Pick<Proposal, 'preview' | 'operation'>): string {
  const preview = proposal.preview as { readonly title?: unknown } | null;
  const title =
    preview && typeof preview === 'object' && typeof preview.title === 'string'
      ? preview.title
      : proposal.operation;
  const line = title.replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  return line.length > MAX_SUMMARY ? `${line.slice(0, MAX_SUMMARY - 1)}…` : line;
}

/** What a proposal a standing grant approved within the tool call came to, in words the model may read. */
const GRANTED: Partial<Record<Proposal['status'], string>> = {
  executing: 'it is executing now',
  succeeded: 'it was executed and succeeded',
  needs_reconciliation: 'the provider did not confirm it; it is being reconciled and must not be retried',
  revision_required: 'it was not executed because a fact changed; a new proposal is needed',
  terminal_failure: 'it failed and will not be retried',
};

/**
 * The model-facing text of a new proposal: id, short hash, summary, and its true status — waiting
 * for a human, or (when a standing grant approved it inside the call) what its execution came to.
 */
export function proposedText(proposal: Proposal): string {
  // The summary is quoted as a JSON string: it may repeat model-chosen values, and quoted it can
  // never read as the status sentence that follows it.
  const head = `Proposal ${proposal.id} (short hash ${proposal.short}) created: ${JSON.stringify(summaryOf(proposal))}. `;
  const granted = proposal.approvalKind === 'grant' ? GRANTED[proposal.status] : undefined;
  if (granted) {
    return `${head}Status: approved by a standing grant; ${granted}. Do not propose it again.`;
  }
  return (
    `${head}Status: waiting for approval by a human; nothing has been executed. ` +
    'Do not propose it again: the application executes it after approval and reports the outcome in a later turn.'
  );
}

/** Turns an engine propose result into the tool's reply. */
export function toToolReply(
  result:
    | { readonly kind: 'proposed'; readonly proposal: Proposal }
    | InvalidRequest
    | RateLimited
    | CorruptAuditChain,
): ToolReply {
  switch (result.kind) {
    case 'proposed':
      return { kind: 'proposed', text: proposedText(result.proposal), proposal: result.proposal };
    case 'invalid_request':
      return {
        kind: 'invalid_request',
        reason: result.reason,
        text: result.modelMessage,
        issues: result.issues,
      };
    case 'rate_limited':
      return {
        kind: 'rate_limited',
        reason: 'rate_limited',
        text: result.modelMessage,
        retryAfterMs: result.retryAfterMs,
      };
    case 'corrupt_audit_chain':
      return { kind: 'corrupt_audit_chain', reason: 'corrupt_audit_chain', text: result.modelMessage };
  }
}
