import type { ProposalLimitsOption } from '../src/engine/index.js';

/**
 * Proposal quotas for benchmarks: one agent proposes thousands a second here, far past the
 * defaults. Raised, not off, so every figure includes the quota check a real deployment pays.
 */
export const BENCH_LIMITS: ProposalLimitsOption = Object.freeze({
  perAgent: { proposalsPerMinute: 100_000_000, pending: 100_000_000 },
  perTenant: { proposalsPerMinute: 100_000_000, pending: 100_000_000 },
});
