import { ConfigurationError } from '../canonical/errors.js';

/** When a failed delivery is tried again, and when it is given up (dead letter). */
export interface RetrySchedule {
  /** The waits after the 1st, 2nd, … failed attempt, in milliseconds. */
  readonly delaysMs: readonly number[];
  /** The wait after every later failure. */
  readonly thenEveryMs: number;
  /** No attempt starts later than this after the event (or a manual redelivery): dead after. */
  readonly budgetMs: number;
  /** Each wait is spread by up to this fraction either way, so receivers are not hit in lockstep. */
  readonly jitter: number;
}

/** 1 s, 5 s, 30 s, 2 min, 10 min, 1 h, then hourly, for 24 hours; ±20 % jitter. */
export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = Object.freeze({
  delaysMs: Object.freeze([1_000, 5_000, 30_000, 120_000, 600_000, 3_600_000]),
  thenEveryMs: 3_600_000,
  budgetMs: 24 * 3_600_000,
  jitter: 0.2,
});

/**
 * When to try again after the `failures`-th failed attempt, or `dead` when that is past the
 * budget counted from `retryFrom`. `random` is in [0, 1).
 */
export function nextAttemptAt(
  schedule: RetrySchedule,
  failures: number,
  retryFrom: number,
  now: number,
  random: number = Math.random(),
): number | 'dead' {
  const base = schedule.delaysMs[failures - 1] ?? schedule.thenEveryMs;
  const spread = base * schedule.jitter * (2 * random - 1);
  const at = now + Math.max(0, Math.round(base + spread));
  return at > retryFrom + schedule.budgetMs ? 'dead' : at;
}

function positive(value: unknown, field: string, zeroOk = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!zeroOk && value === 0))
    throw new ConfigurationError(`${field}: must be a number of milliseconds above 0`);
  return value;
}

/** Checks a partial schedule from a config file and fills it from the defaults; names the bad field. */
export function retrySchedule(value: unknown, field = 'notifications.retry'): RetrySchedule {
  if (value === undefined) return DEFAULT_RETRY_SCHEDULE;
  if (typeof value !== 'object' || value === null)
    throw new ConfigurationError(`${field}: must be an object`);
  const v = value as Record<string, unknown>;
  for (const key of Object.keys(v)) {
    if (!['delaysMs', 'thenEveryMs', 'budgetMs', 'jitter'].includes(key))
      throw new ConfigurationError(
        `${field}.${key}: not a retry setting (delaysMs, thenEveryMs, budgetMs, jitter)`,
      );
  }
  const delays = v['delaysMs'] ?? DEFAULT_RETRY_SCHEDULE.delaysMs;
  if (!Array.isArray(delays) || delays.length === 0)
    throw new ConfigurationError(`${field}.delaysMs: must be a non-empty list of milliseconds`);
  const jitter = v['jitter'] ?? DEFAULT_RETRY_SCHEDULE.jitter;
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter < 1))
    throw new ConfigurationError(`${field}.jitter: must be a fraction from 0 to below 1`);
  return Object.freeze({
    delaysMs: Object.freeze(delays.map((d, i) => positive(d, `${field}.delaysMs[${i}]`))),
    thenEveryMs: positive(v['thenEveryMs'] ?? DEFAULT_RETRY_SCHEDULE.thenEveryMs, `${field}.thenEveryMs`),
    budgetMs: positive(v['budgetMs'] ?? DEFAULT_RETRY_SCHEDULE.budgetMs, `${field}.budgetMs`, true),
    jitter,
  });
}
