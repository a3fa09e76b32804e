import type { StepWriter } from '../engine/audit-step.js';
import type { Logger } from '../engine/engine-context.js';
import type { Actor } from '../operation/actor.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { NotificationChannel } from '../store/sql-outbox.js';
import type { Store } from '../store/store.js';
import type { ChannelSender, PublicUrl } from './channel.js';
import { createDispatcher, type Dispatcher } from './dispatcher.js';
import { type EmailContext, emailSender } from './email-sender.js';
import type { ResolvedNotifications } from './notify-config.js';
import { notificationOutbox } from './outbox-writer.js';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, webhookSender } from './webhook-sender.js';
import type { Proposal } from '../engine/proposal.js';
import { DEFAULT_SLACK_TIMEOUT_MS, type SlackApi, slackApi } from './slack-api.js';
import type { SlackChannelChooser } from './slack-channel.js';
import type { SlackCardState } from './slack-message.js';
import { type SlackCards, slackSender } from './slack-sender.js';

/** The two halves of notifications: the writer the engine runs in each step, and the dispatcher. */
export interface Notifications {
  readonly channels: readonly NotificationChannel[];
  /** Give to `createEngine({ stepWriters: [writer] })`. */
  readonly writer: StepWriter;
  /** Start it once the store is open; stop it before the store closes. */
  readonly dispatcher: Dispatcher;
  /** With Slack configured: its Web API and the cards, for the interaction route (`createCountersignApp({ slack })`). */
  readonly slack?: { readonly api: SlackApi; readonly cards: SlackCards };
}

/** Where a proposal stands, as its Slack card shows it. */
export function slackCardState(proposal: Proposal): SlackCardState {
  return {
    status: proposal.status,
    required: proposal.approvals.required,
    approvers: proposal.approvals.given.map((g) => g.by),
    decidedBy: proposal.decidedBy,
  };
}

/** What notifications need from the server. */
export interface NotificationDeps {
  readonly store: Store;
  readonly operations: readonly AnyOperation[];
  /** The console's public URL: approval links are built from it at delivery. */
  readonly publicUrl: PublicUrl;
  /** A tenant's approvers with their emails (the principal directory: see {@link tenantApprovers}). */
  readonly approvers: (tenant: string) => Promise<readonly NotifiedOperator[]>;
  /**
   * Whether the engine would let this operator approve the proposal now (`engine.proposals.mayDecide`):
   * new proposals and approvals toward a quorum are mailed only to those it allows. Without it,
   * the approvers who are neither its proposer, its editor nor one of its approvers, holding one
   * of its policy's roles.
   */
  readonly mayApprove?: (actor: Actor, proposalId: string) => Promise<boolean>;
  /**
   * A proposal as it stands now (`engine.proposals.get`): Slack cards show where it stands. Without
   * it, Slack posts nothing (every delivery is skipped `not_pending`).
   */
  readonly proposal?: (tenant: string, proposalId: string) => Promise<Proposal | undefined>;
  /** Chooses a new proposal's Slack channel (default `slackChannelFor`: the configured channel). */
  readonly slackChannelFor?: SlackChannelChooser;
  /** The Slack Web API to call (default: `slackApi(config.slack)`). */
  readonly slackApi?: SlackApi;
  readonly logger?: Logger;
  /** Default: twice the longest channel timeout and 5 s more. */
  readonly leaseMs?: number;
  readonly pollMs?: number;
  /**
   * The engine's seal key (the `sealKey` given to `createEngine`, 32+ bytes). With it every delivery
   * is sealed when written and verified before it is sent: a row a database writer inserted or
   * edited is dead-lettered, never signed with the webhook secret or mailed.
   */
  readonly sealKey?: string | Uint8Array;
}

/**
 * The emails of a tenant's operators holding one of `roles` (the approver roles), from the
 * principal directory (disabled operators are not listed there).
 */
export function approverEmails(
  directory: {
    operators(
      tenant: string,
    ): Promise<readonly { readonly email: string; readonly roles: readonly string[] }[]>;
  },
  roles: readonly string[],
): (tenant: string) => Promise<readonly string[]> {
  return async (tenant) =>
    (await directory.operators(tenant))
      .filter((o) => o.roles.some((r) => roles.includes(r)))
      .map((o) => o.email);
}

/** An operator notifications may be mailed to: their address and who they act as. */
export interface NotifiedOperator {
  readonly email: string;
  readonly actor: Actor;
}

/**
 * A tenant's operators holding one of `roles` (the approver roles), each with the actor they act
 * as in the console (`user:<email>`), from the principal directory (disabled operators are not
 * listed there).
 */
export function tenantApprovers(
  directory: {
    operators(
      tenant: string,
    ): Promise<readonly { readonly email: string; readonly roles: readonly string[] }[]>;
  },
  roles: readonly string[],
): (tenant: string) => Promise<readonly NotifiedOperator[]> {
  return async (tenant) =>
    (await directory.operators(tenant))
      .filter((o) => o.roles.some((r) => roles.includes(r)))
      .map((o) => ({
        email: o.email,
        actor: { kind: 'operator', id: `user:${o.email}`, tenant, roles: [...o.roles] },
      }));
}

/**
 * Who an email is sent to, one message each: for `proposal.outcome` the approvers who decided it
 * (`approvals.approvers` of the sealed payload); for `proposal.created` and
 * `proposal.approval_given` the approvers who may still decide it — `mayApprove` (the engine's
 * answer) when given, else those who are not its proposer, editor or an approver already and hold
 * one of its policy's roles. Never another tenant's operator.
 */
export function emailRecipients(
  approvers: (tenant: string) => Promise<readonly NotifiedOperator[]>,
  mayApprove?: (actor: Actor, proposalId: string) => Promise<boolean>,
): EmailContext['recipients'] {
  return async (tenant, notice) => {
    const d = notice.payload.data;
    const candidates = (await approvers(tenant)).filter((o) => o.actor.tenant === tenant);
    const approved = new Set(d.approvals?.approvers ?? []);
    if (notice.type === 'proposal.outcome')
      return candidates.filter((o) => approved.has(o.actor.id)).map((o) => o.email);
    if (mayApprove) {
      const allowed = await Promise.all(candidates.map((o) => mayApprove(o.actor, notice.proposalId)));
      return candidates.filter((_, i) => allowed[i]).map((o) => o.email);
    }
    const roles = d.approvals?.roles ?? [];
    return candidates
      .filter(
        (o) =>
          o.actor.id !== d.requestedBy &&
          o.actor.id !== d.editedBy &&
          !approved.has(o.actor.id) &&
          (roles.length === 0 || o.actor.roles.some((r) => roles.includes(r))),
      )
      .map((o) => o.email);
  };
}

/**
 * Wires the configured channels: one outbox writer, one dispatcher (both sealing with `sealKey`
 * when given).
 *
 * @throws {ConfigurationError} when `sealKey` is shorter than 32 bytes.
 */
export function createNotifications(config: ResolvedNotifications, deps: NotificationDeps): Notifications {
  const senders: Partial<Record<NotificationChannel, ChannelSender>> = {};
  if (config.webhook) senders.webhook = webhookSender(config.webhook, { publicUrl: deps.publicUrl });
  if (config.email) {
    senders.email = emailSender(config.email, {
      publicUrl: deps.publicUrl,
      recipients: emailRecipients(deps.approvers, deps.mayApprove),
      stillPending: async (tenant, id) =>
        (await deps.store.read((r) => r.getProposal(tenant, id)))?.status === 'pending',
    });
  }
  const sealed = deps.sealKey !== undefined ? { sealKey: deps.sealKey } : {};
  let slack: Notifications['slack'];
  if (config.slack) {
    const api = deps.slackApi ?? slackApi(config.slack);
    const cards = slackSender(api, {
      store: deps.store,
      operations: deps.operations,
      publicUrl: deps.publicUrl,
      channel: config.slack.channel,
      state: async (tenant, id) => {
        const proposal = await deps.proposal?.(tenant, id);
        return proposal ? slackCardState(proposal) : undefined;
      },
      ...(deps.slackChannelFor ? { channelFor: deps.slackChannelFor } : {}),
      ...sealed,
    });
    senders.slack = cards;
    slack = { api, cards };
  }
  const channels = Object.keys(senders) as NotificationChannel[];
  const longest = Math.max(
    config.webhook?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    config.email?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    // A Slack delivery makes up to two calls in a row (the post, then a catch-up update).
    2 * (config.slack?.timeoutMs ?? DEFAULT_SLACK_TIMEOUT_MS),
  );
  return {
    channels,
    ...(slack ? { slack } : {}),
    writer: notificationOutbox({ channels, operations: deps.operations, ...sealed }),
    dispatcher: createDispatcher({
      store: deps.store,
      senders,
      retry: config.retry,
      retainMs: config.retainMs,
      leaseMs: deps.leaseMs ?? 2 * longest + 5_000,
      ...(deps.pollMs !== undefined ? { pollMs: deps.pollMs } : {}),
      ...(deps.logger ? { logger: deps.logger } : {}),
      ...sealed,
    }),
  };
}
