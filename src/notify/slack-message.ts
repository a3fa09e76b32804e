import type { AnyOperation } from '../operation/define-operation.js';
import { declaredOrder } from '../operation/field-emphasis.js';
import type { ProposalStatus } from '../records/status.js';
import { expiryText } from './email-message.js';
import { fieldText, highImpactFields } from './notification-facts.js';
import type { NotificationPayload } from './outbox-writer.js';
import type { SlackBlock, SlackMessageContent } from './slack-api.js';

/** The `action_id`s of a card's buttons. */
export const SLACK_ACTIONS = Object.freeze({
  approve: 'countersign_approve',
  decline: 'countersign_decline',
  open: 'countersign_open',
});

/** What an Approve or Decline button carries back: the proposal and the digest the card showed. */
export interface SlackButtonValue {
  readonly tenant: string;
  readonly proposalId: string;
  readonly digest: string;
}

/** Where a proposal stands now, as its card shows it below the facts. */
export interface SlackCardState {
  readonly status: ProposalStatus;
  readonly required: number;
  /** Who approved its digest so far (principal ids, `user:<email>`), in order. */
  readonly approvers: readonly string[];
  /** Who declined it (or completed its approval). */
  readonly decidedBy: string | null;
}

// Slack's limits: a plain_text field holds 2,000 characters, a header 150, a message 50 blocks.
// Ten fields per section block.
const FIELD_LIMIT = 1_900;
const MAX_FIELDS = 40;

function label(field: string): string {
  const words = field.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// Model-produced text goes out as plain_text only: Slack shows it as typed, so a title cannot
// mention @channel, link elsewhere or fake formatting.
const plain = (text: string) => ({ type: 'plain_text' as const, text, emoji: false });

/**
 * The preview's fields as the card lists them: the high-impact ones first (amount, destination,
 * recipients…, as the email orders them), then every other field in the operation's declared
 * order (the review page's). `whole` is false when a field would not fit a Slack field whole.
 */
export function slackFields(
  preview: unknown,
  operation: AnyOperation | undefined,
): {
  readonly fields: readonly { readonly name: string; readonly text: string; readonly highImpact: boolean }[];
  readonly whole: boolean;
} {
  if (typeof preview !== 'object' || preview === null || Array.isArray(preview))
    return { fields: [], whole: true };
  const values = preview as Readonly<Record<string, unknown>>;
  const first = highImpactFields(values, operation).map((f) => f.field);
  const order = operation ? declaredOrder(operation) : [];
  const rank = (key: string) => {
    const i = order.indexOf(key);
    return i === -1 ? order.length : i;
  };
  const rest = Object.keys(values)
    .filter((key) => key !== 'title' && !first.includes(key))
    .map((key, stored) => ({ key, stored }))
    .sort((a, b) => rank(a.key) - rank(b.key) || a.stored - b.stored)
    .map(({ key }) => key);
  const fields = [
    ...first.map((key) => ({ name: key, text: fieldText(values[key]), highImpact: true })),
    ...rest.map((key) => ({ name: key, text: fieldText(values[key]), highImpact: false })),
  ];
  const whole =
    fields.length <= MAX_FIELDS &&
    fields.every((f) => label(f.name).length + f.text.length + 4 <= FIELD_LIMIT);
  return { fields, whole };
}

function who(principal: string): string {
  return principal.startsWith('user:') ? principal.slice('user:'.length) : principal;
}

/** The line under the facts: where the decision stands ("Approved by ada@acme.test — 1 of 2"). */
export function slackStatusLine(state: SlackCardState): string {
  const { required, approvers } = state;
  const by = approvers.map(who).join(', ');
  const tally = `${approvers.length} of ${required}`;
  switch (state.status) {
    case 'pending':
      return approvers.length === 0
        ? `Waiting for approval: needs ${required}.`
        : `Approved by ${by} — ${tally}. Waiting for ${required - approvers.length} more.`;
    case 'executing':
      return `Approved by ${by || 'a grant'} — ${tally}. Executing.`;
    case 'succeeded':
      return `Approved by ${by || 'a grant'} — ${tally}. Outcome: succeeded.`;
    case 'needs_reconciliation':
      return `Approved by ${by || 'a grant'} — ${tally}. Outcome: needs reconciliation (the provider did not confirm; see the console).`;
    case 'revision_required':
      return `Approved by ${by || 'a grant'} — ${tally}. Outcome: revision required (the facts changed before it ran; nothing was done).`;
    case 'terminal_failure':
      return `Approved by ${by || 'a grant'} — ${tally}. Outcome: terminal failure.`;
    case 'declined':
      return `Declined${state.decidedBy ? ` by ${who(state.decidedBy)}` : ''}. Nothing was done.`;
    case 'expired':
      return 'Expired before it was decided. Nothing was done.';
    case 'superseded':
      return 'Edited in the console: this version is superseded. The new version is posted on its own.';
  }
}

/**
 * The Block Kit message of one proposal: its title, every field of the preview (high-impact ones
 * first), the short hash, the approval rule ("needs 2"), the expiry, where the decision stands, and
 * the buttons. Approve and Decline appear only while it is pending, when the operation allows a
 * chat approval (`chatApproval`) and every field fits the message whole; otherwise only "Open in
 * console". Each decision button carries the tenant, the proposal id and the full digest shown.
 */
export function slackCard(input: {
  readonly data: NotificationPayload['data'];
  readonly operation: AnyOperation | undefined;
  readonly state: SlackCardState;
  readonly link: string;
  readonly now: number;
}): SlackMessageContent {
  const { data, operation, state, link, now } = input;
  const title = fieldText(data.title).slice(0, 150) || data.operation;
  const { fields, whole } = slackFields(data.preview, operation);
  const shown = fields.slice(0, MAX_FIELDS);
  const blocks: SlackBlock[] = [
    { type: 'header', text: plain(title) },
    {
      type: 'context',
      elements: [
        plain(
          `${who(data.requestedBy)} proposes ${data.operation}${data.editedBy ? ` (edited by ${who(data.editedBy)})` : ''}`,
        ),
      ],
    },
  ];
  for (let i = 0; i < shown.length; i += 10)
    blocks.push({
      type: 'section',
      fields: shown
        .slice(i, i + 10)
        .map((f) => plain(`${f.highImpact ? '⚠ ' : ''}${label(f.name)}\n${f.text.slice(0, FIELD_LIMIT)}`)),
    });
  const rule = `needs ${data.approvals.required}${data.approvals.roles.length > 0 ? ` (${data.approvals.roles.join(' or ')})` : ''}`;
  blocks.push({
    type: 'context',
    elements: [
      plain(
        `Short hash ${data.short} · Approval rule: ${rule} · Expires ${expiryText(new Date(data.expiresAt), now)}`,
      ),
    ],
  });
  blocks.push({ type: 'section', text: plain(slackStatusLine(state)) });
  const decidable = state.status === 'pending' && whole && (operation?.chatApproval ?? true);
  const value = JSON.stringify({
    tenant: data.tenant,
    proposalId: data.proposalId,
    digest: data.digest,
  } satisfies SlackButtonValue);
  const open = {
    type: 'button' as const,
    action_id: SLACK_ACTIONS.open,
    text: plain('Open in console'),
    url: link,
  };
  blocks.push({
    type: 'actions',
    elements: decidable
      ? [
          {
            type: 'button',
            action_id: SLACK_ACTIONS.approve,
            style: 'primary',
            text: plain('Approve'),
            value,
            confirm: {
              title: plain('Approve this proposal?'),
              text: plain(`You approve exactly what this message shows, short hash ${data.short}.`),
              confirm: plain('Approve'),
              deny: plain('Cancel'),
            },
          },
          {
            type: 'button',
            action_id: SLACK_ACTIONS.decline,
            style: 'danger',
            text: plain('Decline'),
            value,
          },
          open,
        ]
      : [open],
  });
  if (state.status === 'pending' && !decidable)
    blocks.push({
      type: 'context',
      elements: [
        plain('This proposal is decided in the console only: its preview does not fit a message whole.'),
      ],
    });
  return { text: `Approval needed: ${title} [${data.short}]`, blocks };
}
