/** How the live event streams behave; every field has a default. */
export interface EventStreamOptions {
  /** How often each stream reads the tenant's chain (default 1000 ms). */
  readonly pollMs?: number;
  /** How long a quiet stream waits before a heartbeat comment (default 15 000 ms). */
  readonly heartbeatMs?: number;
  /** Open streams one principal may hold (default 5); more are refused `rate_limited`. */
  readonly maxPerPrincipal?: number;
}

/**
 * The open live event streams of one app, counted per principal so one operator (or a leaked
 * token) cannot hold an unbounded number of polling loops.
 */
export class EventStreams {
  readonly pollMs: number;
  readonly heartbeatMs: number;
  readonly maxPerPrincipal: number;
  readonly #open = new Map<string, number>();
  readonly #enders = new Set<() => void>();
  #closed = false;

  constructor(options: EventStreamOptions = {}) {
    this.pollMs = options.pollMs ?? 1000;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxPerPrincipal = options.maxPerPrincipal ?? 5;
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
  }
}
