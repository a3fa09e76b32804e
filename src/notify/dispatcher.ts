import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type Clock, type Logger, silentLogger } from '../engine/engine-context.js';
import {
  type AttemptResult,
  type NotificationChannel,
  type OutboxRecord,
  outboxOf,
} from '../store/sql-outbox.js';
import type { Store } from '../store/store.js';
import type { ChannelSender, SendResult } from './channel.js';
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
}

/** Delivers the notification outbox: at least once, retried on a schedule, dead after its budget. */
export interface Dispatcher {
  /** Claims what is due, delivers it, records each attempt. Returns how many it tried. */
  runOnce(): Promise<number>;
  /** Polls in the background until {@link Dispatcher.stop}. */
  start(): void;
  /** Stops polling and waits for the deliveries in flight. */
  stop(): Promise<void>;
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
  const { capabilities } = store;

  const attemptResult = (delivery: OutboxRecord, sent: SendResult): AttemptResult => {
    const at = clock.now();
    if (sent.kind === 'delivered') return { status: 'delivered', nextAt: at, lastError: null, at };
    if (sent.kind === 'skipped') return { status: 'skipped', nextAt: at, lastError: sent.note, at };
    const next = nextAttemptAt(retry, delivery.attempts + 1, delivery.retryFrom, at, random());
    return next === 'dead'
      ? { status: 'dead', nextAt: at, lastError: sent.error, at }
      : { status: 'pending', nextAt: next, lastError: sent.error, at };
  };

  const deliver = async (delivery: OutboxRecord): Promise<void> => {
    const sender = options.senders[delivery.channel];
    let sent: SendResult;
    try {
      sent = sender
        ? await sender(delivery)
        : { kind: 'failed', error: `the ${delivery.channel} channel is not configured` };
    } catch (error) {
      logger.error({ err: error, deliveryId: delivery.id }, 'a notification sender threw');
      sent = { kind: 'failed', error: 'the sender failed' };
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

  let running: Promise<void> | undefined;
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = async () => {
    while (!stopped) {
      let tried = 0;
      try {
        tried = await runOnce();
      } catch (error) {
        logger.error({ err: error }, 'notification dispatch failed');
      }
      if (tried >= batchSize || stopped) continue;
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
