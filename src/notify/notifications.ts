import type { StepWriter } from '../engine/audit-step.js';
import type { Logger } from '../engine/engine-context.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { NotificationChannel } from '../store/sql-outbox.js';
import type { Store } from '../store/store.js';
import type { ChannelSender, PublicUrl } from './channel.js';
import { createDispatcher, type Dispatcher } from './dispatcher.js';
import { emailSender } from './email-sender.js';
import type { ResolvedNotifications } from './notify-config.js';
import { notificationOutbox } from './outbox-writer.js';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, webhookSender } from './webhook-sender.js';

/** The two halves of notifications: the writer the engine runs in each step, and the dispatcher. */
export interface Notifications {
  readonly channels: readonly NotificationChannel[];
  /** Give to `createEngine({ stepWriters: [writer] })`. */
  readonly writer: StepWriter;
  /** Start it once the store is open; stop it before the store closes. */
  readonly dispatcher: Dispatcher;
}

/** What notifications need from the server. */
export interface NotificationDeps {
  readonly store: Store;
  readonly operations: readonly AnyOperation[];
  /** The console's public URL: approval links are built from it at delivery. */
  readonly publicUrl: PublicUrl;
  /** The emails of a tenant's approvers (the principal directory). */
  readonly approverEmails: (tenant: string) => Promise<readonly string[]>;
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
      recipients: deps.approverEmails,
      stillPending: async (tenant, id) =>
        (await deps.store.read((r) => r.getProposal(tenant, id)))?.status === 'pending',
    });
  }
  const channels = Object.keys(senders) as NotificationChannel[];
  const longest = Math.max(
    config.webhook?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    config.email?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
  );
  const sealed = deps.sealKey !== undefined ? { sealKey: deps.sealKey } : {};
  return {
    channels,
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
