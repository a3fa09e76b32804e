import { ConfigurationError } from '../canonical/errors.js';
import type { ProposalCountQuery, ProposalCounts, Store, StoreReader } from '../store/store.js';
import type { Clock, Logger } from './engine-context.js';

/** How much one principal (or one tenant) may propose. */
export interface ProposalLimit {
  /** Proposals created in any sliding 60-second window (counted from the store, every status). */
  readonly proposalsPerMinute: number;
  /** Proposals waiting for a decision at once (counted from the store). */
  readonly pending: number;
}

/** The limits an engine holds proposals to; `false` turns one level off. */
export interface ProposalLimits {
  /** Per proposing agent (`requestedBy`) within its tenant. */
  readonly perAgent: ProposalLimit | false;
  /** Per tenant, over all its agents. */
  readonly perTenant: ProposalLimit | false;
}

/**
 * The engine's `limits` option: `false` turns quotas off; otherwise each level is the default,
 * `false`, or the default with some fields overridden (`Infinity` lifts one field).
 *
 * @example
 * createEngine({ store, operations, limits: { perAgent: { pending: 200 }, perTenant: false } });
 */
export type ProposalLimitsOption =
  | false
  | {
      readonly perAgent?: Partial<ProposalLimit> | false;
      readonly perTenant?: Partial<ProposalLimit> | false;
    };

/**
 * On by default. An agent proposes a few times per conversation turn and a turn takes seconds, so
 * 30 a minute (one every 2 s, sustained) is far above honest use and far below a loop; 50 cards
 * waiting from one agent is more than a reviewer works through before the agent should stop. A
 * tenant gets ten agents' worth: 300 a minute, 1,000 pending.
 */
export const DEFAULT_PROPOSAL_LIMITS: ProposalLimits = Object.freeze({
  perAgent: Object.freeze({ proposalsPerMinute: 30, pending: 50 }),
  perTenant: Object.freeze({ proposalsPerMinute: 300, pending: 1000 }),
});

/**
 * Which limit refused: a proposal quota (`agent_rate`, `agent_pending`, `tenant_rate`,
 * `tenant_pending`), or the audited-action budget (`agent_reads`: read-tool calls;
 * `principal_refusals`: refused decisions).
 */
export type RateLimitKind =
  | 'agent_rate'
  | 'agent_pending'
  | 'tenant_rate'
  | 'tenant_pending'
  | 'agent_reads'
  | 'principal_refusals';

/**
 * A proposal refused by a quota before anything was parsed or stored. `modelMessage` is safe to
 * send back to the model and says how long to wait; `retryAfterMs` is the same figure for HTTP's
 * `Retry-After`. Not audited (it would flood the chain the limit protects); logged as a warning.
 */
export interface RateLimited {
  readonly kind: 'rate_limited';
  readonly reason: 'rate_limited';
  readonly limit: RateLimitKind;
  readonly retryAfterMs: number;
  readonly modelMessage: string;
}

const WINDOW_MS = 60_000;

/** `atMost` for a level's counts: one past its larger limit, or none when a limit is lifted (Infinity). */
function countCap(limit: ProposalLimit): number | undefined {
  const largest = Math.max(limit.pending, limit.proposalsPerMinute);
  return Number.isSafeInteger(largest) ? largest + 1 : undefined;
}
/** Whether counts (with the proposals in flight) leave room for one more within `limit`. */
function fitsOneMore(limit: ProposalLimit, counts: ProposalCounts, inFlight: number): boolean {
  return (
    counts.pending + inFlight + 1 <= limit.pending &&
    counts.created + inFlight + 1 <= limit.proposalsPerMinute
  );
}

// A pending slot frees when a human decides or the proposal expires; neither has a date, so the
// model is told to come back after a minute rather than poll.
const PENDING_RETRY_MS = 60_000;
const MIN_RETRY_MS = 1_000;

function checkLimit(name: string, value: number): number {
  if (value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && value > 0)) return value;
  throw new ConfigurationError(`limits: ${name} must be a positive whole number or Infinity`);
}

function resolveLevel(
  name: string,
  option: Partial<ProposalLimit> | false | undefined,
  fallback: ProposalLimit | false,
): ProposalLimit | false {
  if (option === false || fallback === false) return false;
  const merged = { ...fallback, ...option };
  return Object.freeze({
    proposalsPerMinute: checkLimit(`${name}.proposalsPerMinute`, merged.proposalsPerMinute),
    pending: checkLimit(`${name}.pending`, merged.pending),
  });
}

/** The engine's limits from its `limits` option: defaults, per-level and per-field overrides. */
export function resolveProposalLimits(option: ProposalLimitsOption | undefined): ProposalLimits {
  if (option === false) return Object.freeze({ perAgent: false, perTenant: false });
  return Object.freeze({
    perAgent: resolveLevel('perAgent', option?.perAgent, DEFAULT_PROPOSAL_LIMITS.perAgent),
    perTenant: resolveLevel('perTenant', option?.perTenant, DEFAULT_PROPOSAL_LIMITS.perTenant),
  });
}

// Proposals admitted by this process whose propose call has not returned: the store cannot count
// them yet. `released` is read before the store so that a proposal released while the count is
// in flight is counted at most twice (refusing early), never zero times (letting a burst through).
interface InFlight {
  reserved: number;
  released: number;
  readers: number;
}

/** Who proposes: the two keys quotas are held against. */
export interface QuotaSubject {
  readonly tenant: string;
  readonly requestedBy: string;
}

/** Admits proposals within an engine's limits. One per engine. */
export interface ProposalQuota {
  readonly limits: ProposalLimits;
  /**
   * Runs `propose` when the subject is within every limit, else answers `rate_limited` without
   * calling it. Counts come from the store (so they hold across processes and restarts) plus the
   * proposals this process admitted that are still being proposed (so a concurrent burst cannot
   * pass the check all at once).
   */
  admit<T>(subject: QuotaSubject, propose: () => Promise<T>): Promise<T | RateLimited>;
}

interface Check {
  readonly kind: Exclude<RateLimitKind, 'agent_reads' | 'principal_refusals'>;
  readonly limit: number;
  readonly count: number;
  readonly oldestCreatedAt: number | null;
}

/** Builds the quota of one engine. */
export function proposalQuota(deps: {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly limits: ProposalLimits;
  readonly onRateLimited?: (refused: RateLimited, subject: QuotaSubject) => void;
}): ProposalQuota {
  const { store, clock, logger, limits, onRateLimited } = deps;
  const inFlight = new Map<string, InFlight>();
  const entry = (key: string): InFlight => {
    let e = inFlight.get(key);
    if (!e) {
      e = { reserved: 0, released: 0, readers: 0 };
      inFlight.set(key, e);
    }
    return e;
  };
  const prune = (key: string, e: InFlight) => {
    if (e.readers === 0 && e.reserved === e.released) inFlight.delete(key);
  };

  const retryAfter = (check: Check, now: number): number => {
    if (check.kind === 'agent_pending' || check.kind === 'tenant_pending') return PENDING_RETRY_MS;
    const freesAt = check.oldestCreatedAt === null ? now : check.oldestCreatedAt + WINDOW_MS;
    return Math.max(MIN_RETRY_MS, freesAt - now);
  };

  const refusal = (check: Check, retryAfterMs: number): RateLimited => {
    const seconds = Math.ceil(retryAfterMs / 1000);
    const messages: Record<Check['kind'], string> = {
      agent_rate: `Too many proposals: at most ${check.limit} per minute from one agent. Nothing was proposed. Wait ${seconds} s, then propose again only if it is still needed.`,
      agent_pending: `You already have ${check.limit} proposals waiting for a human decision, the most allowed. Nothing was proposed. Do not propose more until some are approved or declined; wait at least ${seconds} s.`,
      tenant_rate: `This workspace is receiving too many proposals (at most ${check.limit} per minute). Nothing was proposed. Wait ${seconds} s, then propose again only if it is still needed.`,
      tenant_pending: `This workspace has ${check.limit} proposals waiting for a human decision, the most allowed. Nothing was proposed. Wait at least ${seconds} s before proposing again.`,
    };
    return {
      kind: 'rate_limited',
      reason: 'rate_limited',
      limit: check.kind,
      retryAfterMs,
      modelMessage: messages[check.kind],
    };
  };

  const checksOf = (
    level: 'agent' | 'tenant',
    limit: ProposalLimit,
    counts: ProposalCounts,
    pendingInFlight: number,
  ): Check[] => [
    {
      kind: `${level}_pending`,
      limit: limit.pending,
      count: counts.pending + pendingInFlight,
      oldestCreatedAt: null,
    },
    {
      kind: `${level}_rate`,
      limit: limit.proposalsPerMinute,
      count: counts.created + pendingInFlight,
      oldestCreatedAt: counts.oldestCreatedAt,
    },
  ];

  return Object.freeze({
    limits,
    admit: async <T>(subject: QuotaSubject, propose: () => Promise<T>): Promise<T | RateLimited> => {
      const { tenant, requestedBy } = subject;
      // Bad subjects are propose's to reject (a ConfigurationError), not a quota's to count.
      if (typeof tenant !== 'string' || typeof requestedBy !== 'string') return propose();
      const levels = [
        { level: 'agent' as const, limit: limits.perAgent, key: JSON.stringify([tenant, requestedBy]) },
        { level: 'tenant' as const, limit: limits.perTenant, key: JSON.stringify([tenant]) },
      ].flatMap((l) =>
        l.limit === false ? [] : [{ level: l.level, key: l.key, limit: l.limit, flight: entry(l.key) }],
      );
      if (levels.length === 0) return propose();

      const seen = levels.map((l) => {
        l.flight.readers++;
        return l.flight.released;
      });
      const now = clock.now();
      // The window is (now - 60 s, now]: a proposal leaves it exactly when retryAfter says.
      const createdSince = now - WINDOW_MS + 1;
      const countOf = (tx: StoreReader, l: (typeof levels)[number], exact: boolean) => {
        // Knowing a limit is passed is enough: the count never costs more than the limit.
        const query: { -readonly [K in keyof ProposalCountQuery]: ProposalCountQuery[K] } = {
          createdSince,
          pendingAt: now,
        };
        if (l.level === 'agent') query.requestedBy = requestedBy;
        const atMost = countCap(l.limit);
        if (atMost !== undefined) query.atMost = atMost;
        if (!exact) query.upperBound = true;
        return tx.countProposals(tenant, query);
      };
      const countAll = (exact: boolean) =>
        store.read(async (tx) => {
          const tenantLevel = levels.findIndex((l) => l.level === 'tenant');
          if (tenantLevel < 0 || levels.length === 1)
            return Promise.all(levels.map((l) => countOf(tx, l, exact)));
          // An agent's proposals are some of its tenant's, and so are its in-flight ones: when the
          // tenant is within its own limits (so its counts were not cut short) and below the
          // agent's, so is the agent, and one count does. Otherwise both are counted, as before.
          const tenant = levels[tenantLevel]!;
          const agent = levels[1 - tenantLevel]!;
          const tenantCounts = await countOf(tx, tenant, exact);
          const inFlight = tenant.flight.reserved - seen[tenantLevel]!;
          const agentCounts =
            fitsOneMore(tenant.limit, tenantCounts, inFlight) &&
            fitsOneMore(agent.limit, tenantCounts, inFlight)
              ? tenantCounts
              : await countOf(tx, agent, exact);
          return tenantLevel === 0 ? [tenantCounts, agentCounts] : [agentCounts, tenantCounts];
        });
      const violations = (counts: readonly ProposalCounts[]) =>
        levels
          .flatMap((l, i) => checksOf(l.level, l.limit, counts[i]!, l.flight.reserved - seen[i]!))
          .filter((c) => c.count + 1 > c.limit);
      let counts: ProposalCounts[];
      try {
        // An upper bound (the per-second counters alone) admits almost every proposal; only one it
        // would refuse is counted exactly, and only the exact count refuses (and dates the retry).
        counts = await countAll(false);
        if (violations(counts).length > 0) counts = await countAll(true);
      } finally {
        for (const l of levels) l.flight.readers--;
      }
      // From here to the reservation nothing awaits, so concurrent calls see each other's reservations.
      const violated = violations(counts);
      if (violated.length > 0) {
        for (const l of levels) prune(l.key, l.flight);
        const worst = violated
          .map((check) => ({ check, wait: retryAfter(check, now) }))
          .reduce((a, b) => (b.wait > a.wait ? b : a));
        const refused = refusal(worst.check, worst.wait);
        logger.warn(
          {
            tenant,
            requestedBy,
            reason: 'rate_limited',
            limit: refused.limit,
            retryAfterMs: refused.retryAfterMs,
          },
          'proposal refused: rate limited',
        );
        try {
          onRateLimited?.(refused, subject);
        } catch (error) {
          // A metrics hook must not turn a named refusal into a 500.
          logger.error({ err: error }, 'onRateLimited threw');
        }
        return refused;
      }
      for (const l of levels) l.flight.reserved++;
      try {
        return await propose();
      } finally {
        for (const l of levels) {
          l.flight.released++;
          prune(l.key, l.flight);
        }
      }
    },
  });
}
