import type { Store } from '../store/store.js';
import { StoreFaultError } from '../store/store-fault.js';

/** One thing `GET /readyz` checked. `ok: false` makes the server not ready. */
export interface ReadinessCheck {
  readonly ok: boolean;
  /** Why it is not ok, in words that name no tenant, table or secret. */
  readonly detail?: string;
}

/** The body of `GET /readyz`: every check by name. */
export interface ReadinessReport {
  readonly status: 'ready' | 'not_ready';
  readonly checks: Readonly<Record<string, ReadinessCheck>>;
}

/** What {@link readiness} checks. */
export interface ReadinessOptions {
  /** The store: reachable (one statement) and its migrations current. */
  readonly store: Store;
  /** Background workers by name (`sweeps`, `notifications`): true while each runs. */
  readonly workers?: Readonly<Record<string, () => boolean>>;
  /**
   * How long the store check may take before it counts as unavailable (default 2 000 ms): a
   * load balancer's probe must get an answer while the database hangs.
   */
  readonly timeoutMs?: number;
}

/** Default of {@link ReadinessOptions.timeoutMs}. */
export const READINESS_TIMEOUT_MS = 2_000;

// How many migrations the store lacks; throws when it cannot be reached.
type StoreProbe = () => Promise<number>;

async function storeCheck(probe: StoreProbe, timeoutMs: number): Promise<ReadinessCheck> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ReadinessCheck>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, detail: `the store did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  const checked = probe().then(
    (pending): ReadinessCheck =>
      pending === 0
        ? { ok: true }
        : { ok: false, detail: `${pending} migration(s) not applied: run countersign migrate` },
    (error: unknown): ReadinessCheck => ({
      ok: false,
      detail:
        error instanceof StoreFaultError
          ? `${error.condition}: ${error.message}`
          : `the store failed a read (${error instanceof Error ? error.name : 'unknown error'})`,
    }),
  );
  try {
    return await Promise.race([checked, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The store's own probe: {@link Store.health}, or an ordinary read for a store without it. */
export function storeProbe(store: Store): StoreProbe {
  return async () => {
    if (store.health) return (await store.health()).pendingMigrations;
    await store.read((reader) => reader.auditHead('countersign-readyz'));
    return 0;
  };
}

/** {@link readiness} over any probe: the app's default probes through the engine. */
export function probeReadiness(
  probe: StoreProbe,
  options: Omit<ReadinessOptions, 'store'> = {},
): () => Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? READINESS_TIMEOUT_MS;
  // Probes asked for while one runs share it: a flood of unauthenticated /readyz requests makes
  // one statement at a time, never one each.
  let running: Promise<ReadinessCheck> | undefined;
  const sharedCheck = () => {
    running ??= storeCheck(probe, timeoutMs).finally(() => {
      running = undefined;
    });
    return running;
  };
  return async () => {
    const checks: Record<string, ReadinessCheck> = { store: await sharedCheck() };
    for (const [name, running] of Object.entries(options.workers ?? {})) {
      checks[name] = running() ? { ok: true } : { ok: false, detail: `${name} is not running` };
    }
    const ready = Object.values(checks).every((check) => check.ok);
    return { status: ready ? 'ready' : 'not_ready', checks };
  };
}

/**
 * Builds the check behind `GET /readyz`: the store reachable with its schema current, and every
 * named background worker running. Answers within `timeoutMs` even when the database hangs.
 *
 * @example
 * const app = createCountersignApp({ engine, directory, readiness: readiness({ store }) });
 */
export function readiness(options: ReadinessOptions): () => Promise<ReadinessReport> {
  return probeReadiness(storeProbe(options.store), options);
}
