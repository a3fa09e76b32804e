import type { NotificationPayload } from './outbox-writer.js';

/** Chooses the Slack channel a proposal's card is posted to. */
export type SlackChannelChooser = (
  tenant: string,
  proposal: NotificationPayload['data'],
) => string | Promise<string>;

/**
 * The Slack channel a new proposal of `tenant` is posted to: the channel its route names, else
 * `defaults.channel`, the configured channel of unrouted proposals (`COUNTERSIGN_SLACK_CHANNEL`).
 * Routing plugs in here; without routes every proposal goes to the configured channel.
 */
export function slackChannelFor(
  _tenant: string,
  _proposal: NotificationPayload['data'],
  defaults: { readonly channel: string },
): string {
  return defaults.channel;
}
