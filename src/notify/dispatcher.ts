import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigurationError } from '../canonical/errors.js';
import { type Clock, type Logger, silentLogger } from '../engine/engine-context.js';
import {
  type AttemptResult,
  type NotificationChannel,
  type OutboxRecord,
  outboxOf,
} from '../store/sql-outbox.js';
import { storeFaultFields } from '../store/store-fault.js';
import type { Store } from '../store/store.js';
import type { ChannelSender, SendResult } from './channel.js';
import { deliveryErrorText } from './delivery-error.js';
import { checkDeliverySeal, checkDeliverySealKey } from './delivery-seal.js';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptAt, type RetrySchedule } from './retry-schedule.js';

/** How a {@link Dispatcher} delivers the outbox. */
export interface DispatcherOptions {
  readonly store: Store;
  /** The configured channels; a delivery for a channel without a sender fails (and is retried). */
  readonly senders: Partial<Record<NotificationChannel, ChannelSender>>;
  readonly retry?: RetrySchedule;
  /**
   * How long a claimed delivery is this dispatcher's (default 60 s): longer than a sender's
   * timeout. After it, another dispatcher (or this one restarted) delivers it again.
   */
  readonly leaseMs?: number;
  /** How often the outbox is polled when it had nothing due (default 1 s). */
  readonly pollMs?: number;
  /** Deliveries claimed and sent at once (default 20). */
  readonly batchSize?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Names this dispatcher in leases (default host, process id and a random suffix). */
  readonly owner?: string;
  /** For tests of the jitter; default Math.random. */
  readonly random?: () => number;
  /**
   * How long a finished delivery (delivered, skipped or dead) is kept after its event or its last
   * manual redelivery (default 30 days), or `false` to keep every one. The polling loop deletes
   * older ones once an hour ({@link Dispatcher.pruneOnce}); pending deliveries are never deleted.
   */
  readonly retainMs?: number | false;
  /**
   * The engine's seal key (32+ bytes), the one the outbox writer sealed with. With it, a claimed
   * delivery whose seal is missing or does not verify (inserted or edited by a database writer) is
   * never sent: it is dead at once, its last error says why. Without it every row is sent.
   */
  readonly sealKey?: string | Uint8Array;
}

/** Finished deliveries are kept this long by default: 30 days. */
export const DEFAULT_RETAIN_MS = 30 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
// Deleted per transaction, so a first prune of a large backlog never holds the write lock long.
const PRUNE_BATCH = 500;

/** Delivers the notification outbox: at least once, retried on a schedule, dead after its budget. */
export interface Dispatcher {
  /** Claims what is due, delivers it, records each attempt. Returns how many it tried. */
  runOnce(): Promise<number>;
  /** Polls in the background until {@link Dispatcher.stop}. */
  start(): void;
  /** Stops polling and waits for the deliveries in flight. */
  stop(): Promise<void>;
  /** True between `start()` and `stop()`: what `GET /readyz` reports as `notifications`. */
  readonly running: boolean;
  /**
   * Deletes the finished deliveries older than the retention, in batches; returns how many (0 when
   * `retainMs` is `false`). The polling loop runs it once an hour.
   */
  pruneOnce(): Promise<number>;
}

/** A dispatcher over one store (several may share it: leases keep them apart). */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const logger = options.logger ?? silentLogger;
  const retry = options.retry ?? DEFAULT_RETRY_SCHEDULE;
  const leaseMs = options.leaseMs ?? 60_000;
  const pollMs = options.pollMs ?? 1_000;
  const batchSize = options.batchSize ?? 20;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const random = options.random ?? Math.random;
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  if (retainMs !== false && !(Number.isSafeInteger(retainMs) && retainMs > 0))
    throw new ConfigurationError('retainMs: must be a whole number of milliseconds above 0, or false');
  const { capabilities } = store;
  const { sealKey } = options;
  if (sealKey !== undefined) checkDeliverySealKey(sealKey);

  const attemptResult = (delivery: OutboxRecord, sent: SendResult): AttemptResult => {
    const at = clock.now();
    if (sent.kind === 'delivered') return { status: 'delivered', nextAt: at, lastError: null, at };
    if (sent.kind === 'skipped')
      return {
        status: 'skipped',
        nextAt: at,
        lastError: sent.reason === 'not_pending' || sent.reason === 'no_message' ? sent.reason : null,
        at,
      };
    const next = nextAttemptAt(retry, delivery.attempts + 1, delivery.retryFrom, at, random());
    const lastError = deliveryErrorText(sent.error);
    return next === 'dead'
      ? { status: 'dead', nextAt: at, lastError, at }
      : { status: 'pending', nextAt: next, lastError, at };
  };

  // Checked before any sender sees the row: the webhook secret must never sign a forged payload.
  const refuseForged = async (delivery: OutboxRecord): Promise<boolean> => {
    if (sealKey === undefined) return false;
    const check = checkDeliverySeal(delivery, sealKey);
    if (check.kind === 'intact') return false;
    const at = clock.now();
    const recorded = await store.transaction((tx) =>
      outboxOf(tx, capabilities).finish(delivery.tenant, delivery.id, owner, {
        status: 'dead',
        nextAt: at,
        lastError: check.reason,
        at,
      }),
    );
    logger.warn(
      {
        tenant: delivery.tenant,
        deliveryId: delivery.id,
        reason: check.reason,
        ...(recorded ? {} : { recorded }),
      },
      'notification not sent: not sealed by this server',
    );
    return true;
  };

  // Channels whose endpoint failed since its last success, as this process saw them.
  const failing = new Set<NotificationChannel>();
  // An endpoint that answers again after failing gets its waiting retries at once: after an outage
  // the backlog would otherwise wait out each delivery's schedule (2 min, 10 min, 1 h, …). A retry
  // that succeeds counts as such an answer too, since another process may have seen the failures.
  const noteEndpoint = async (delivery: OutboxRecord, result: AttemptResult): Promise<void> => {
    const { channel } = delivery;
    if (result.status === 'pending') {
      failing.add(channel);
      return;
    }
    if (result.status !== 'delivered' || (!failing.has(channel) && delivery.attempts === 0)) return;
    failing.delete(channel);
    try {
      const resumed = await store.transaction((tx) =>
        outboxOf(tx, capabilities).resume(channel, clock.now()),
      );
      if (resumed > 0) {
        logger.info(
          { channel, resumed },
          'notification endpoint answers again; its waiting retries are due now',
        );
        wake?.();
      }
    } catch (error) {
      // The retries keep their schedule: nothing is lost, only sent later.
      const fault = storeFaultFields(error);
      logger.warn(fault ?? { err: error }, 'waiting notification retries not brought forward');
    }
  };

  const deliver = async (delivery: OutboxRecord): Promise<void> => {
    if (await refuseForged(delivery)) return;
    const sender = options.senders[delivery.channel];
    let sent: SendResult;
    try {
      sent = sender ? await sender(delivery) : { kind: 'failed', error: { code: 'channel_not_configured' } };
    } catch (error) {
      logger.error({ err: error, deliveryId: delivery.id }, 'a notification sender threw');
      sent = { kind: 'failed', error: { code: 'sender_failed' } };
    }
    const result = attemptResult(delivery, sent);
    const recorded = await store.transaction((tx) =>
      outboxOf(tx, capabilities).finish(delivery.tenant, delivery.id, owner, result),
    );
    const fields = {
      tenant: delivery.tenant,
      deliveryId: delivery.id,
      eventId: delivery.eventId,
      channel: delivery.channel,
      type: delivery.type,
      proposalId: delivery.proposalId,
      attempt: delivery.attempts + 1,
      status: result.status,
      ...(result.lastError ? { error: result.lastError } : {}),
    };
    if (recorded) await noteEndpoint(delivery, result);
    if (!recorded) logger.warn(fields, 'notification lease lost before its attempt was recorded');
    else if (result.status === 'dead') logger.error(fields, 'notification dead-lettered');
    else if (result.status === 'pending') logger.warn(fields, 'notification failed; retrying');
    else logger.info(fields, `notification ${result.status}`);
  };

  const runOnce = async (): Promise<number> => {
    const now = clock.now();
    const claimed = await store.transaction((tx) =>
      outboxOf(tx, capabilities).claim({ now, leaseUntil: now + leaseMs, owner, limit: batchSize }),
    );
    await Promise.all(claimed.map(deliver));
    return claimed.length;
  };

  const pruneOnce = async (): Promise<number> => {
    if (retainMs === false) return 0;
    const before = clock.now() - retainMs;
    let pruned = 0;
    for (;;) {
      const deleted = await store.transaction((tx) => outboxOf(tx, capabilities).prune(before, PRUNE_BATCH));
      pruned += deleted;
      if (deleted < PRUNE_BATCH) break;
    }
    if (pruned > 0) logger.info({ pruned, before }, 'finished notifications pruned');
    return pruned;
  };

  let lastPrune = Number.NEGATIVE_INFINITY;
  const pruneIfDue = async () => {
    if (retainMs === false || clock.now() - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = clock.now();
    try {
      await pruneOnce();
    } catch (error) {
      logger.error({ err: error }, 'pruning finished notifications failed');
    }
  };

  let running: Promise<void> | undefined;
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = async () => {
    while (!stopped) {
      let tried = 0;
      try {
        tried = await runOnce();
      } catch (error) {
        const fault = storeFaultFields(error);
        if (fault) logger.warn(fault, 'notification dispatch waits for the store');
        else logger.error({ err: error }, 'notification dispatch failed');
      }
      if (tried >= batchSize || stopped) continue;
      await pruneIfDue();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return {
    runOnce,
    pruneOnce,
    get running() {
      return running !== undefined && !stopped;
    },
    start: () => {
      stopped = false;
      running ??= loop();
    },
    stop: async () => {
      stopped = true;
      wake?.();
      await running;
      running = undefined;
    },
  };
}
