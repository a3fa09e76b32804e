import { AsyncLocalStorage } from 'node:async_hooks';
import type { MiddlewareHandler } from 'hono';

/** The console sections that exist only when the app is configured for them. */
export interface ConsoleSections {
  /** The Slack links page (`createCountersignApp({ slack })`). */
  readonly slack: boolean;
}

const NONE: ConsoleSections = Object.freeze({ slack: false });

// The navigation is the app's, not any one page's: it is read where the layout renders rather than
// threaded through every page's props and every handler that renders one.
const storage = new AsyncLocalStorage<ConsoleSections>();

/** Middleware: the requests it serves render the console navigation with `sections`. */
export function consoleSections(sections: ConsoleSections): MiddlewareHandler {
  const frozen = Object.freeze({ ...sections });
  return (_, next) => storage.run(frozen, next);
}

/** The sections of the request being served (none outside {@link consoleSections}). */
export function currentConsoleSections(): ConsoleSections {
  return storage.getStore() ?? NONE;
}
