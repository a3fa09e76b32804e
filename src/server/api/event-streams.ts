import type { FeedEngine } from '../../notify/live-feed.js';
import { type FeedHubStats, LiveFeedHub } from './live-feed-hub.js';

/** How the live event streams behave; every field has a default. */
export interface EventStreamOptions {
  /** How often a tenant's chain is read while it has streams open (default 1000 ms). */
  readonly pollMs?: number;
  /** How long a quiet stream waits before a heartbeat comment (default 15 000 ms). */
  readonly heartbeatMs?: number;
  /** Open streams one principal may hold (default 5); more are refused `rate_limited`. */
  readonly maxPerPrincipal?: number;
  /** Events a stream may have waiting (its client not reading) before it is dropped (default 256). */
  readonly maxQueuedEvents?: number;
  /** Bytes of events a stream may have waiting before it is dropped (default 1 MiB). */
  readonly maxQueuedBytes?: number;
}

/**
 * The open live event streams of one app, counted per principal so one operator (or a leaked
 * token) cannot hold an unbounded number of streams, and the shared per-tenant readers that feed
 * them ({@link LiveFeedHub}, one per engine).
 */
export class EventStreams {
  readonly pollMs: number;
  readonly heartbeatMs: number;
  readonly maxPerPrincipal: number;
  readonly maxQueuedEvents: number;
  readonly maxQueuedBytes: number;
  readonly #hubs = new Map<FeedEngine, LiveFeedHub>();
  readonly #open = new Map<string, number>();
  readonly #enders = new Set<() => void>();
  #closed = false;

  constructor(options: EventStreamOptions = {}) {
    this.pollMs = options.pollMs ?? 1000;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxPerPrincipal = options.maxPerPrincipal ?? 5;
    this.maxQueuedEvents = options.maxQueuedEvents ?? 256;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 1024 * 1024;
  }

  /** The shared reader of `engine`'s tenants' chains for these streams, made on first use. */
  hub(engine: FeedEngine): LiveFeedHub {
    let hub = this.#hubs.get(engine);
    if (!hub) {
      hub = new LiveFeedHub(engine, {
        pollMs: this.pollMs,
        maxQueuedEvents: this.maxQueuedEvents,
        maxQueuedBytes: this.maxQueuedBytes,
      });
      if (this.#closed) hub.close();
      this.#hubs.set(engine, hub);
    }
    return hub;
  }

  /** What the shared readers hold now, summed over engines: subscribers, timers, reads, drops. */
  get feeds(): FeedHubStats {
    const total = { tenants: 0, subscribers: 0, timers: 0, reads: 0, dropped: 0 };
    for (const hub of this.#hubs.values()) {
      const stats = hub.stats;
      total.tenants += stats.tenants;
      total.subscribers += stats.subscribers;
      total.timers += stats.timers;
      total.reads += stats.reads;
      total.dropped += stats.dropped;
    }
    return total;
  }

  /** Streams open now, across principals. */
  get open(): number {
    let total = 0;
    for (const count of this.#open.values()) total += count;
    return total;
  }

  /**
   * Takes a slot for `principal`; undefined when it holds the most it may. `ended` resolves when
   * {@link close} is called (the stream should end); the release is idempotent.
   */
  acquire(principal: string): { readonly release: () => void; readonly ended: Promise<void> } | undefined {
    const held = this.#open.get(principal) ?? 0;
    if (held >= this.maxPerPrincipal) return undefined;
    this.#open.set(principal, held + 1);
    let end = () => {};
    const ended = new Promise<void>((resolve) => (end = resolve));
    if (this.#closed) end();
    else this.#enders.add(end);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#enders.delete(end);
      const now = (this.#open.get(principal) ?? 1) - 1;
      if (now <= 0) this.#open.delete(principal);
      else this.#open.set(principal, now);
    };
    return { release, ended };
  }

  /**
   * Ends every open stream (and any opened later) so a shutdown does not wait for clients that
   * never leave; EventSource clients reconnect to another instance with their `Last-Event-ID`.
   */
  close(): void {
    this.#closed = true;
    for (const end of this.#enders) end();
    this.#enders.clear();
    for (const hub of this.#hubs.values()) hub.close();
  }
}
