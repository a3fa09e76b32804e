import { parseStoredJson } from '../canonical/stored-json.js';
import type { AnyOperation } from '../operation/define-operation.js';
import { type OutboxRecord, outboxOf } from '../store/sql-outbox.js';
import { slackRecordsOf } from '../store/sql-slack.js';
import { checkDeliverySeal } from './delivery-seal.js';
import type { Store } from '../store/store.js';
import type { DeliveryError } from './delivery-error.js';
import { approvalLink, type ChannelSender, type PublicUrl } from './channel.js';
import type { NotificationPayload } from './outbox-writer.js';
import type { SlackApi } from './slack-api.js';
import { type SlackChannelChooser, slackChannelFor } from './slack-channel.js';
import { type SlackCardState, slackCard } from './slack-message.js';

/** What the Slack channel asks of the server. */
export interface SlackContext {
  readonly store: Store;
  readonly operations: readonly AnyOperation[];
  readonly publicUrl: PublicUrl;
  /** The configured channel of unrouted proposals. */
  readonly channel: string;
  /** Where the proposal stands now (from `engine.proposals.get`), or undefined when there is none. */
  state(tenant: string, proposalId: string): Promise<SlackCardState | undefined>;
  /** Chooses a new proposal's channel (default {@link slackChannelFor}: the configured channel). */
  readonly channelFor?: SlackChannelChooser;
  /** The engine's seal key, when it has one: a card is re-rendered only from a sealed delivery. */
  readonly sealKey?: string | Uint8Array;
  /** The clock relative times ("expires in 58 min") are written from. Default `Date.now`. */
  readonly now?: () => number;
}

/** What renders and updates one proposal's card: used by the sender and by the interaction route. */
export interface SlackCards {
  /**
   * Updates a proposal's posted card to where it stands now. `no_message` when it was never posted,
   * `gone` when the proposal is not found.
   */
  refresh(
    tenant: string,
    proposalId: string,
    data?: NotificationPayload['data'],
  ): Promise<'updated' | 'no_message' | 'gone' | { readonly failed: DeliveryError }>;
}

/**
 * Posts each new proposal to Slack as a card with Approve, Decline and Open in console, and
 * updates that same message (by its stored channel and `ts`) at every later lifecycle event, from
 * where the proposal stands when the update is sent — so updates arriving out of order still end
 * on the latest state. A proposal no longer pending when its post is due is not posted
 * (`not_pending`); an update of one never posted is skipped (`no_message`). Slack's failures
 * (`slack_error channel_not_found`, `http_status 429`, a timeout) fail the delivery, which the
 * outbox retries. At least once: a server killed between Slack's answer and the stored `ts`
 * posts the card again at the retry.
 */
export function slackSender(api: SlackApi, context: SlackContext): ChannelSender & SlackCards {
  const operations = new Map(context.operations.map((o) => [o.kind, o]));
  const now = context.now ?? Date.now;
  const channelFor: SlackChannelChooser =
    context.channelFor ??
    ((tenant, proposal) => slackChannelFor(tenant, proposal, { channel: context.channel }));
  const cardOf = (data: NotificationPayload['data'], state: SlackCardState) =>
    slackCard({
      data,
      operation: operations.get(data.operation),
      state,
      link: approvalLink(context.publicUrl, data.proposalId),
      now: now(),
    });
  const messageOf = (tenant: string, proposalId: string) =>
    context.store.transaction((tx) => slackRecordsOf(tx).message(tenant, proposalId));
  // The facts of a card come from the proposal's created event (its digest never changes).
  const factsOf = async (tenant: string, proposalId: string) => {
    const delivery = await context.store.transaction(async (tx) => {
      const id = await slackRecordsOf(tx).cardDelivery(tenant, proposalId);
      return id === undefined ? undefined : outboxOf(tx, {}).get(tenant, id);
    });
    // Sealed rows only, as the dispatcher sends them: a row a database writer edited shows nothing.
    if (
      !delivery ||
      (context.sealKey !== undefined && checkDeliverySeal(delivery, context.sealKey).kind !== 'intact')
    )
      return undefined;
    return (parseStoredJson(delivery.payloadJson) as unknown as NotificationPayload).data;
  };

  const refresh: SlackCards['refresh'] = async (tenant, proposalId, given) => {
    const message = await messageOf(tenant, proposalId);
    if (!message) return 'no_message';
    const [state, data] = await Promise.all([
      context.state(tenant, proposalId),
      given ? Promise.resolve(given) : factsOf(tenant, proposalId),
    ]);
    if (!state || !data) return 'gone';
    const updated = await api.update({ channel: message.channel, ts: message.ts, ...cardOf(data, state) });
    return updated.kind === 'ok' ? 'updated' : { failed: updated.error };
  };

  // An escalation tells the escalation group where it is: a card of its own in the escalation's
  // channel. The first card stays the one updated in place; a click on either decides the same
  // digest through the same checks.
  const postEscalation = async (delivery: OutboxRecord, data: NotificationPayload['data']) => {
    if (data.route?.escalated !== true || data.route.channel === null) return undefined;
    const state = await context.state(delivery.tenant, delivery.proposalId);
    if (state?.status !== 'pending') return undefined;
    const posted = await api.postMessage({ channel: data.route.channel, ...cardOf(data, state) });
    return posted.kind === 'failed' ? posted.error : undefined;
  };

  const send: ChannelSender = async (delivery) => {
    const payload = parseStoredJson(delivery.payloadJson) as unknown as NotificationPayload;
    const refreshed = await refresh(delivery.tenant, delivery.proposalId, payload.data);
    if (refreshed === 'gone') return { kind: 'skipped', reason: 'not_pending' };
    if (typeof refreshed === 'object') return { kind: 'failed', error: refreshed.failed };
    // After the update, so a retry after a failed update never posts the escalation twice.
    if (delivery.type === 'proposal.escalated') {
      const failed = await postEscalation(delivery, payload.data);
      return failed ? { kind: 'failed', error: failed } : { kind: 'delivered' };
    }
    if (refreshed === 'updated') return { kind: 'delivered' };
    if (delivery.type !== 'proposal.created') return { kind: 'skipped', reason: 'no_message' };
    const state = await context.state(delivery.tenant, delivery.proposalId);
    if (state?.status !== 'pending') return { kind: 'skipped', reason: 'not_pending' };
    const channel = await channelFor(delivery.tenant, payload.data);
    const posted = await api.postMessage({ channel, ...cardOf(payload.data, state) });
    if (posted.kind === 'failed') return { kind: 'failed', error: posted.error };
    await context.store.transaction((tx) =>
      slackRecordsOf(tx).recordMessage({
        tenant: delivery.tenant,
        proposalId: delivery.proposalId,
        channel: posted.value.channel,
        ts: posted.value.ts,
        postedAt: now(),
      }),
    );
    // A decision made while the post was on its way found no message to update: catch up now.
    const after = await context.state(delivery.tenant, delivery.proposalId);
    if (after && (after.status !== state.status || after.approvers.length !== state.approvers.length))
      await refresh(delivery.tenant, delivery.proposalId, payload.data);
    return { kind: 'delivered' };
  };
  return Object.assign(send, { refresh });
}
