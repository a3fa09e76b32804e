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

/** The model-facing text of a new pending proposal: id, short hash, summary, and that it waits for a human. */
export function proposedText(proposal: Proposal): string {
  return (
    `Proposal ${proposal.id} (short hash ${proposal.short}) created: ${summaryOf(proposal)}. ` +
    'Status: waiting for approval by a human; nothing has been executed. ' +
    'Do not propose it again: the application executes it after approval and reports the outcome in a later turn.'
  );
}

/** Turns an engine propose result into the tool's reply. */
export function toToolReply(
  result: { readonly kind: 'proposed'; readonly proposal: Proposal } | InvalidRequest | RateLimited,
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
  }
}
