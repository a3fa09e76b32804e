import { StoreUnavailableError } from '../store/store-errors.js';
import { StoreFaultError } from '../store/store-fault.js';
import type { Store } from '../store/store.js';

/** Options of {@link waitForStore}. */
export interface WaitForStoreOptions {
  /** The store as it may be printed (a URL's password hidden). */
  readonly name: string;
  /** Where the one line per distinct cause goes. */
  readonly stderr: (text: string) => void;
  /** Stops waiting (SIGTERM while the database is down). */
  readonly signal?: AbortSignal | undefined;
  /** First pause between tries, doubled up to `maxDelayMs` (default 500 ms). */
  readonly firstDelayMs?: number;
  /** Longest pause between tries (default 10 000 ms). */
  readonly maxDelayMs?: number;
}

/** What {@link waitForStore} ended with. */
export type StoreWait = { readonly kind: 'reachable'; readonly tries: number } | { readonly kind: 'stopped' };

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Migrates the store, trying again with backoff while it is unavailable for a while (a
 * {@link StoreFaultError}: PostgreSQL still starting, a restart, a full disk), and prints one line
 * per distinct cause instead of a stack trace. Anything else (a wrong password, a missing
 * directory) is final: a {@link StoreUnavailableError} naming the store and the cause.
 */
export async function waitForStore(store: Store, options: WaitForStoreOptions): Promise<StoreWait> {
  const maxDelay = options.maxDelayMs ?? 10_000;
  let delay = options.firstDelayMs ?? 500;
  let lastCause: string | undefined;
  for (let tries = 1; ; tries++) {
    if (options.signal?.aborted) return { kind: 'stopped' };
    try {
      await store.migrate();
      if (lastCause !== undefined)
        options.stderr(`countersign serve: the store ${options.name} is reachable\n`);
      return { kind: 'reachable', tries };
    } catch (error) {
      if (!(error instanceof StoreFaultError)) {
        if (error instanceof StoreUnavailableError) throw error;
        const why = error instanceof Error ? error.message : String(error);
        throw new StoreUnavailableError(`cannot use the store ${options.name}: ${why}`, { cause: error });
      }
      const cause = `${error.condition}: ${error.message}`;
      if (cause !== lastCause) {
        options.stderr(
          `countersign serve: the store ${options.name} is unavailable (${cause}); trying again with backoff until it answers\n`,
        );
        lastCause = cause;
      }
    }
    await pause(delay, options.signal);
    delay = Math.min(delay * 2, maxDelay);
  }
}
