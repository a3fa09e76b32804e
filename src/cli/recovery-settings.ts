import { parseDuration } from '../operation/define-operation.js';
import type { RecoveryConfig } from '../server/serve-config.js';
import { UsageProblem } from './command.js';

/**
 * How `countersign serve` leases, recovers and reconciles, resolved from its flags and its config
 * file's `recovery` (a flag wins), in milliseconds.
 */
export interface RecoverySettings {
  /** How long a claimed attempt may run before another server may take it over (`createEngine({ leaseMs })`). */
  readonly leaseMs: number;
  /** How often the expiry, recovery and reconciliation sweep runs. */
  readonly sweepMs: number;
  /** The automatic reconciliation's backoff, or false when an operator reconciles by hand only. */
  readonly reconcile: false | { readonly firstMs: number; readonly maxMs: number };
  /** Attempts per proposal before recovery parks one that never reached its effect or provider. */
  readonly maxAttempts: number;
}

/**
 * The defaults. A lease of a minute takes a crashed worker's attempt over within about 75 seconds
 * (lease plus one sweep); a provider call slower than the lease after its command was recorded is
 * taken over while still running (sent to reconciliation, or resent under the same key when the
 * provider deduplicates), so the lease must stay well above the slowest provider timeout.
 */
export const RECOVERY_DEFAULTS: RecoverySettings = Object.freeze({
  leaseMs: 60_000,
  sweepMs: 15_000,
  reconcile: Object.freeze({ firstMs: 10_000, maxMs: 10 * 60_000 }),
  // Above the engine's own 3: a server that is restarted (or killed) while an attempt is in flight
  // loses that attempt each time, and a proposal a person approved is parked only for a proposal
  // that keeps killing its worker, not for a restart storm.
  maxAttempts: 10,
});

const MIN_LEASE_MS = 1_000;
const MIN_SWEEP_MS = 100;

function durationOf(value: string | number, where: string): number {
  try {
    return parseDuration(value);
  } catch {
    throw new UsageProblem(`${where} ${value}: expected a duration like 500ms, 30s, 2m or 1h`);
  }
}

/**
 * Resolves and checks the lease and sweep settings: a lease of at least 1s, a sweep interval of at
 * least 100ms and at most the lease (so an attempt is taken over within one sweep of its lease's
 * end), a reconciliation backoff whose `max` is at least its `first`. Each problem names its flag
 * (or its config field) in a {@link UsageProblem}.
 */
export function recoverySettings(
  flags: { readonly lease?: string | undefined; readonly sweepInterval?: string | undefined },
  config: RecoveryConfig | undefined,
): RecoverySettings {
  const leaseWhere = flags.lease !== undefined ? '--lease' : 'recovery.lease';
  const sweepWhere = flags.sweepInterval !== undefined ? '--sweep-interval' : 'recovery.sweepInterval';
  const leaseValue = flags.lease ?? config?.lease;
  const sweepValue = flags.sweepInterval ?? config?.sweepInterval;
  const leaseMs = leaseValue === undefined ? RECOVERY_DEFAULTS.leaseMs : durationOf(leaseValue, leaseWhere);
  if (leaseMs < MIN_LEASE_MS)
    throw new UsageProblem(
      `${leaseWhere} ${leaseValue}: a lease must be at least 1s (a provider call must finish within it)`,
    );
  const sweepMs =
    sweepValue === undefined
      ? Math.min(RECOVERY_DEFAULTS.sweepMs, leaseMs)
      : durationOf(sweepValue, sweepWhere);
  if (sweepMs < MIN_SWEEP_MS)
    throw new UsageProblem(`${sweepWhere} ${sweepValue}: the sweep interval must be at least 100ms`);
  if (sweepMs > leaseMs)
    throw new UsageProblem(
      `${sweepWhere} ${sweepValue ?? `${sweepMs}ms`}: the sweep interval must not exceed the lease (${leaseMs}ms), or a crashed worker's attempt waits more than one sweep past its lease`,
    );
  const maxAttempts = config?.maxAttempts ?? RECOVERY_DEFAULTS.maxAttempts;
  const wanted = config?.reconcile;
  if (wanted === false) return Object.freeze({ leaseMs, sweepMs, reconcile: false, maxAttempts });
  const defaults = RECOVERY_DEFAULTS.reconcile as { readonly firstMs: number; readonly maxMs: number };
  const firstMs =
    wanted?.first === undefined ? defaults.firstMs : durationOf(wanted.first, 'recovery.reconcile.first');
  const maxMs =
    wanted?.max === undefined
      ? Math.max(defaults.maxMs, firstMs)
      : durationOf(wanted.max, 'recovery.reconcile.max');
  if (maxMs < firstMs)
    throw new UsageProblem(
      `recovery.reconcile.max ${wanted?.max}: must be at least recovery.reconcile.first`,
    );
  return Object.freeze({ leaseMs, sweepMs, reconcile: Object.freeze({ firstMs, maxMs }), maxAttempts });
}

/** The default of `recovery.remindBefore`: approvers are reminded five minutes before a proposal expires. */
export const REMIND_BEFORE_DEFAULT_MS = 5 * 60_000;

/** `recovery.remindBefore` in milliseconds, or false when reminders are off. */
export function remindBeforeMs(config: RecoveryConfig | undefined): number | false {
  const value = config?.remindBefore;
  if (value === false) return false;
  return value === undefined ? REMIND_BEFORE_DEFAULT_MS : durationOf(value, 'recovery.remindBefore');
}
