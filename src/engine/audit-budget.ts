import { ConfigurationError } from '../canonical/errors.js';

/**
 * How many audited actions that change nothing one principal may cause per minute, per engine:
 * refused decisions (`denied` and `replayed` events of approve and decline) and read-tool calls
 * (`read` events). Each writes an audit event, so without a bound one principal could flood the
 * hash chain (2,000 refused self-approvals wrote 2,000 events). Past the bound the action is
 * answered `rate_limited` before anything is written.
 */
export interface AuditedActionLimits {
  /** Refused decisions per principal in a 60-second window (default 60: one a second, sustained). */
  readonly refusalsPerMinute: number;
  /** Read-tool calls per agent in a 60-second window (default 120; an agent reads a few per turn). */
  readonly readsPerMinute: number;
}

/** The defaults of {@link AuditedActionLimits}. */
export const DEFAULT_AUDITED_LIMITS: AuditedActionLimits = Object.freeze({
  refusalsPerMinute: 60,
  readsPerMinute: 120,
});

/** Which budget an audited action draws on. */
export type AuditedAction = 'refusal' | 'read';

/** The action may be audited, or the principal's budget is spent until `retryAfterMs` from now. */
export type BudgetAnswer =
  | { readonly kind: 'ok' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number; readonly limit: number };

const WINDOW_MS = 60_000;
// Forgotten windows are swept once the map holds this many principals, so memory stays bounded.
const SWEEP_AT = 10_000;

/**
 * Counts audited actions per tenant, principal and kind in fixed 60-second windows, in this
 * process. Kept in memory, not the store: counting in the store would itself write on every
 * refusal. Several servers on one database each allow the bound, which still turns a flood into
 * a trickle.
 */
export class AuditBudget {
  readonly #limits: AuditedActionLimits;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(limits: AuditedActionLimits) {
    for (const [name, value] of Object.entries(limits))
      if (!(value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && value >= 1)))
        throw new ConfigurationError(
          `limits.audited.${name}: a whole number ≥ 1 or Infinity, not ${String(value)}`,
        );
    this.#limits = limits;
  }

  /** Takes one unit of `principal`'s budget for `action` at `now`, or says when one frees. */
  take(action: AuditedAction, tenant: string, principal: string, now: number): BudgetAnswer {
    const limit = action === 'read' ? this.#limits.readsPerMinute : this.#limits.refusalsPerMinute;
    if (limit === Number.POSITIVE_INFINITY) return { kind: 'ok' };
    const key = `${action}\u0000${tenant}\u0000${principal}`;
    let window = this.#windows.get(key);
    if (!window || now - window.start >= WINDOW_MS || now < window.start) {
      if (this.#windows.size >= SWEEP_AT) this.#sweep(now);
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= limit)
      return { kind: 'rate_limited', retryAfterMs: window.start + WINDOW_MS - now, limit };
    window.count += 1;
    return { kind: 'ok' };
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (now - window.start >= WINDOW_MS) this.#windows.delete(key);
  }
}

/** The limits an engine's `limits.audited` option resolves to. */
export function resolveAuditedLimits(
  option: Partial<AuditedActionLimits> | false | undefined,
): AuditedActionLimits {
  if (option === false)
    return { refusalsPerMinute: Number.POSITIVE_INFINITY, readsPerMinute: Number.POSITIVE_INFINITY };
  return { ...DEFAULT_AUDITED_LIMITS, ...option };
}

/** A refusal the budget answered instead of auditing it. */
export interface OverBudget {
  readonly reason: 'rate_limited';
  readonly limit: 'agent_reads' | 'principal_refusals';
  readonly message: string;
  readonly retryAfterMs: number;
}

/** Takes one unit of the budget, or the `rate_limited` answer (with nothing to audit) when spent. */
export function overBudget(
  budget: AuditBudget,
  action: AuditedAction,
  { tenant, principal }: { readonly tenant: string; readonly principal: string },
  now: number,
): OverBudget | undefined {
  const answer = budget.take(action, tenant, principal, now);
  if (answer.kind === 'ok') return undefined;
  const what = action === 'read' ? 'reads' : 'refused decisions';
  const seconds = Math.max(1, Math.ceil(answer.retryAfterMs / 1000));
  return {
    reason: 'rate_limited',
    limit: action === 'read' ? 'agent_reads' : 'principal_refusals',
    message: `more than ${answer.limit} ${what} in a minute; retry in ${seconds} s`,
    retryAfterMs: answer.retryAfterMs,
  };
}
