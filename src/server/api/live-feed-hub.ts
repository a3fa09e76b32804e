import {
  type FeedEngine,
  type FeedPosition,
  type LiveEvent,
  readLiveEvents,
} from '../../notify/live-feed.js';

/** One live event, framed once for every subscriber it goes to. */
export interface FeedItem {
  readonly event: LiveEvent;
  /** The event as a Server-Sent Events message (`event:`, `data:`, `id:`), UTF-8. */
  readonly frame: Uint8Array;
}

/** Why a subscription ended: released by its stream, over its buffer, the feed failed, or the hub closed. */
export type FeedEnd =
  | { readonly kind: 'released' }
  | { readonly kind: 'overflow'; readonly queued: number; readonly bytes: number }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'closed' };

/** What {@link FeedSubscription.next} hands a stream: the events since its last call (maybe none: a poll passed), or its end. */
export type FeedDelivery =
  | { readonly kind: 'events'; readonly items: readonly FeedItem[] }
  | { readonly kind: 'ended'; readonly end: FeedEnd };

/** One stream's place in its tenant's shared feed. */
export interface FeedSubscription {
  /**
   * Resolves after the next poll of the tenant's chain with the events this subscriber has not
   * been given (after its own resume point), at once if some are queued; or with its end.
   */
  next(): Promise<FeedDelivery>;
  /** Leaves the feed and drops what is queued; idempotent. The last subscriber stops the polling. */
  release(): void;
}

/** Bounds and pace of a {@link LiveFeedHub}. */
export interface LiveFeedHubOptions {
  /** How often a tenant's chain is read while it has subscribers. */
  readonly pollMs: number;
  /** Events a subscriber that stopped taking them may have waiting before it is dropped (default 256). */
  readonly maxQueuedEvents?: number;
  /** Bytes of framed events one subscriber may have waiting before it is dropped (default 1 MiB). */
  readonly maxQueuedBytes?: number;
}

/** What a hub holds now: counted by the hub itself, for tests and metrics. */
export interface FeedHubStats {
  /** Tenants with a shared feed (subscribers, a pending poll or a read in flight). */
  readonly tenants: number;
  readonly subscribers: number;
  /** Poll timers armed (at most one per tenant). */
  readonly timers: number;
  /** Reads of a tenant's chain by the shared feeds since the hub was made. */
  readonly reads: number;
  /** Subscribers dropped for not reading since the hub was made. */
  readonly dropped: number;
}

interface Subscriber {
  /** The last seq this subscriber was given (or resumed after). */
  cursor: number;
  /** Shared with other subscribers when it is one whole batch: replaced, never pushed into. */
  queue: readonly FeedItem[];
  bytes: number;
  /** A poll finished since the last delivery. */
  ticked: boolean;
  end: FeedEnd | undefined;
  wake: (() => void) | undefined;
  readonly onEnd: (end: FeedEnd) => void;
}

interface TenantFeed {
  position: FeedPosition;
  readonly subscribers: Set<Subscriber>;
  timer: NodeJS.Timeout | undefined;
  reading: boolean;
}

const encoder = new TextEncoder();
// A batch's frames joined, per batch array; gone with the array once every subscriber took it.
const joinedBatches = new WeakMap<readonly FeedItem[], Uint8Array>();

/** The Server-Sent Events message of one live event, exactly as `writeSSE` writes it. */
function frameOf(event: LiveEvent): Uint8Array {
  return encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event.data)}\nid: ${event.seq}\n\n`);
}

/**
 * One reader per tenant, shared by that tenant's live event streams: while a tenant has
 * subscribers its chain is read once every `pollMs`, each event framed once, and every subscriber
 * handed the events after its own resume point (all operators of a tenant see the same feed).
 * A subscriber that does not take its events (its socket's write is stuck) is dropped once more
 * than `maxQueuedEvents` or `maxQueuedBytes` wait for it and it has not taken the batch before the
 * last (so one large batch to a subscriber that is reading never drops it); the others do not
 * wait for it. When the last
 * subscriber of a tenant leaves, its timer is cleared and its feed forgotten.
 *
 * @example
 * const hub = new LiveFeedHub(engine, { pollMs: 1000 });
 * const sub = hub.subscribe('acme', read.position, (end) => log(end)); // undefined: read up to the feed first
 * for (let d = await sub!.next(); d.kind === 'events'; d = await sub!.next()) send(d.items);
 */
export class LiveFeedHub {
  readonly #engine: FeedEngine;
  readonly #pollMs: number;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  readonly #feeds = new Map<string, TenantFeed>();
  #reads = 0;
  #dropped = 0;
  #closed = false;

  constructor(engine: FeedEngine, options: LiveFeedHubOptions) {
    this.#engine = engine;
    this.#pollMs = options.pollMs;
    this.#maxEvents = options.maxQueuedEvents ?? 256;
    this.#maxBytes = options.maxQueuedBytes ?? 1024 * 1024;
  }

  /** What the hub holds now. */
  get stats(): FeedHubStats {
    let subscribers = 0;
    let timers = 0;
    for (const feed of this.#feeds.values()) {
      subscribers += feed.subscribers.size;
      if (feed.timer) timers++;
    }
    return { tenants: this.#feeds.size, subscribers, timers, reads: this.#reads, dropped: this.#dropped };
  }

  /** Frames events for a stream's own reads (its backlog), the same way the shared feed does. */
  static items(events: readonly LiveEvent[]): FeedItem[] {
    return events.map((event) => ({ event, frame: frameOf(event) }));
  }

  /** The frames of `items` as one chunk, so a stream writes (and awaits) once per delivery, not once per event. */
  static frames(items: readonly FeedItem[]): Uint8Array {
    if (items.length === 1) return items[0]!.frame;
    // Subscribers handed the same batch share its array: join it once for all of them.
    let joined = joinedBatches.get(items);
    if (!joined) {
      joined = Buffer.concat(items.map((item) => item.frame));
      joinedBatches.set(items, joined);
    }
    return joined;
  }

  /**
   * Joins `tenant`'s feed at `position` (where the caller's own reads stopped). Undefined when the
   * shared feed has already read past it: the caller reads its backlog up to the feed and joins
   * again, so no event falls between the two. `onEnd` is told when the hub ends the subscription
   * (overflow, a failed read, close) — while the stream may be stuck in a write, so it can abort it.
   */
  subscribe(
    tenant: string,
    position: FeedPosition,
    onEnd: (end: FeedEnd) => void,
  ): FeedSubscription | undefined {
    const subscriber: Subscriber = {
      cursor: position.afterSeq,
      queue: [],
      bytes: 0,
      ticked: false,
      end: undefined,
      wake: undefined,
      onEnd,
    };
    if (this.#closed) {
      subscriber.end = { kind: 'closed' };
      return this.#subscription(tenant, subscriber);
    }
    let feed = this.#feeds.get(tenant);
    if (feed && position.afterSeq < feed.position.afterSeq) return undefined;
    if (!feed) {
      feed = { position, subscribers: new Set(), timer: undefined, reading: false };
      this.#feeds.set(tenant, feed);
    }
    feed.subscribers.add(subscriber);
    this.#arm(tenant, feed);
    return this.#subscription(tenant, subscriber);
  }

  /** Ends every subscription and clears every timer; later subscriptions end at once. */
  close(): void {
    this.#closed = true;
    for (const [tenant, feed] of this.#feeds) {
      clearTimeout(feed.timer);
      feed.timer = undefined;
      for (const subscriber of feed.subscribers) this.#end(feed, subscriber, { kind: 'closed' });
      this.#feeds.delete(tenant);
    }
  }

  #subscription(tenant: string, subscriber: Subscriber): FeedSubscription {
    return {
      next: async () => {
        for (;;) {
          if (subscriber.end) return { kind: 'ended', end: subscriber.end };
          if (subscriber.queue.length > 0 || subscriber.ticked) {
            const items = subscriber.queue;
            subscriber.queue = [];
            subscriber.bytes = 0;
            subscriber.ticked = false;
            return { kind: 'events', items };
          }
          await new Promise<void>((resolve) => (subscriber.wake = resolve));
          subscriber.wake = undefined;
        }
      },
      release: () => {
        if (subscriber.end) return;
        const feed = this.#feeds.get(tenant);
        subscriber.end = { kind: 'released' };
        subscriber.queue = [];
        subscriber.bytes = 0;
        subscriber.wake?.();
        if (feed?.subscribers.delete(subscriber)) this.#retireIfIdle(tenant, feed);
      },
    };
  }

  /** Ends one subscriber on the hub's initiative (not its own release) and tells its stream. */
  #end(feed: TenantFeed, subscriber: Subscriber, end: FeedEnd): void {
    if (subscriber.end) return;
    feed.subscribers.delete(subscriber);
    subscriber.end = end;
    subscriber.queue = [];
    subscriber.bytes = 0;
    subscriber.wake?.();
    subscriber.onEnd(end);
  }

  #arm(tenant: string, feed: TenantFeed): void {
    if (feed.timer || feed.reading || feed.subscribers.size === 0) return;
    feed.timer = setTimeout(() => {
      feed.timer = undefined;
      void this.#poll(tenant, feed);
    }, this.#pollMs);
  }

  #retireIfIdle(tenant: string, feed: TenantFeed): void {
    if (feed.subscribers.size > 0) return;
    clearTimeout(feed.timer);
    feed.timer = undefined;
    // A read in flight retires the feed when it returns (a subscriber may join before then).
    if (!feed.reading && this.#feeds.get(tenant) === feed) this.#feeds.delete(tenant);
  }

  async #poll(tenant: string, feed: TenantFeed): Promise<void> {
    feed.reading = true;
    try {
      let more = true;
      while (more && feed.subscribers.size > 0) {
        this.#reads++;
        const read = await readLiveEvents(this.#engine, tenant, feed.position);
        feed.position = read.position;
        more = read.more;
        if (read.events.length > 0) this.#fanOut(feed, LiveFeedHub.items(read.events));
      }
    } catch (error) {
      for (const subscriber of feed.subscribers) this.#end(feed, subscriber, { kind: 'failed', error });
    } finally {
      feed.reading = false;
    }
    for (const subscriber of feed.subscribers) {
      subscriber.ticked = true;
      subscriber.wake?.();
    }
    if (this.#closed) return;
    this.#retireIfIdle(tenant, feed);
    this.#arm(tenant, feed);
  }

  #fanOut(feed: TenantFeed, items: readonly FeedItem[]): void {
    const first = items[0]!.event.seq;
    const last = items[items.length - 1]!.event.seq;
    let batchBytes = 0;
    for (const item of items) batchBytes += item.frame.byteLength;
    for (const subscriber of feed.subscribers) {
      if (subscriber.cursor >= last) continue;
      // A subscriber that took its last delivery is reading, however large this one batch (at most
      // a read's page); one that did not and is over its bound is stuck in a write.
      const waiting = subscriber.queue.length > 0;
      // The whole batch, shared (never copied, never pushed into) unless the cursor cuts it.
      const fresh = subscriber.cursor < first ? items : items.filter((i) => i.event.seq > subscriber.cursor);
      const bytes =
        fresh === items ? batchBytes : fresh.reduce((sum, item) => sum + item.frame.byteLength, 0);
      subscriber.queue = waiting ? subscriber.queue.concat(fresh) : fresh;
      subscriber.bytes += bytes;
      subscriber.cursor = last;
      if (waiting && (subscriber.queue.length > this.#maxEvents || subscriber.bytes > this.#maxBytes)) {
        this.#dropped++;
        this.#end(feed, subscriber, {
          kind: 'overflow',
          queued: subscriber.queue.length,
          bytes: subscriber.bytes,
        });
      }
      subscriber.wake?.();
    }
  }
}
