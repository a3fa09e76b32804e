import type { NotificationPayload } from './outbox-writer.js';

/** Chooses the Slack channel a proposal's card is posted to. */
export type SlackChannelChooser = (
  tenant: string,
  proposal: NotificationPayload['data'],
) => string | Promise<string>;

/**
 * The Slack channel a proposal's card is posted to: the channel its route names now (the
 * escalation's once escalated), else `defaults.channel`, the configured channel of unrouted
 * proposals (`COUNTERSIGN_SLACK_CHANNEL`).
 */
export function slackChannelFor(
  _tenant: string,
  proposal: NotificationPayload['data'],
  defaults: { readonly channel: string },
): string {
  return proposal.route?.channel ?? defaults.channel;
}
