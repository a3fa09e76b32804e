import { Counter, Histogram, Registry } from 'prom-client';
import type { AuditEvent } from '../audit/event.js';
import type { LifecycleObserver, StepFacts } from '../engine/audit-step.js';
import type { RateLimited } from '../engine/proposal-quota.js';

/** Prometheus metrics of the lifecycle, fed by an engine observer. */
export interface LifecycleMetrics {
  /** Pass to `createEngine({ observers: [metrics.observer] })`. */
  readonly observer: LifecycleObserver;
  /** Pass to `createEngine({ onRateLimited: metrics.rateLimited })`: counts proposals a quota refused. */
  readonly rateLimited: (refused: RateLimited) => void;
  /** Serve `await registry.metrics()` at `/metrics` (content type `registry.contentType`). */
  readonly registry: Registry;
}

/**
 * Counters and histograms for operators: proposals by operation, decisions and outcomes by
 * operation, refusals by reason, time to decision, approvals per grant, and executions that need
 * reconciliation. Labels never carry tenant data beyond operation kinds, reasons and grant ids.
 *
 * @example
 * const metrics = createLifecycleMetrics();
 * const engine = await createEngine({ store, operations, observers: [metrics.observer] });
 * app.get('/metrics', async (c) => c.text(await metrics.registry.metrics()));
 */
export function createLifecycleMetrics(
  options: { registry?: Registry; prefix?: string } = {},
): LifecycleMetrics {
  const registry = options.registry ?? new Registry();
  const prefix = options.prefix ?? 'countersign_';
  const proposals = new Counter({
    name: `${prefix}proposals_total`,
    help: 'Proposals created, by operation.',
    labelNames: ['operation'],
    registers: [registry],
  });
  const decisions = new Counter({
    name: `${prefix}decisions_total`,
    help: 'Decisions on proposals (approved, approved_by_grant, declined, expired, superseded), by operation.',
    labelNames: ['operation', 'decision'],
    registers: [registry],
  });
  const refusals = new Counter({
    name: `${prefix}refusals_total`,
    help: 'Refusals by reason code.',
    labelNames: ['reason'],
    registers: [registry],
  });
  const outcomes = new Counter({
    name: `${prefix}outcomes_total`,
    help: 'Execution outcomes by operation and kind.',
    labelNames: ['operation', 'outcome'],
    registers: [registry],
  });
  const reconciliation = new Counter({
    name: `${prefix}needs_reconciliation_total`,
    help: 'Executions whose provider response was lost and that need reconciliation, by operation.',
    labelNames: ['operation'],
    registers: [registry],
  });
  const grantApprovals = new Counter({
    name: `${prefix}grant_approvals_total`,
    help: 'Proposals approved by each grant.',
    labelNames: ['grant'],
    registers: [registry],
  });
  const timeToDecision = new Histogram({
    name: `${prefix}time_to_decision_seconds`,
    help: 'Seconds from proposal to decision, by operation and decision.',
    labelNames: ['operation', 'decision'],
    buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
    registers: [registry],
  });

  const decided = (event: AuditEvent, facts: StepFacts, decision: string) => {
    const operation = facts.operation ?? 'unknown';
    decisions.inc({ operation, decision });
    if (facts.proposedAt !== undefined)
      timeToDecision.observe({ operation, decision }, Math.max(0, (event.at - facts.proposedAt) / 1000));
  };

  const observer: LifecycleObserver = (event, facts) => {
    const operation = facts.operation ?? 'unknown';
    switch (event.step) {
      case 'proposed':
        proposals.inc({ operation });
        return;
      case 'approved': {
        decided(event, facts, event.reason ?? 'approved');
        const grantId = event.detail['grantId'];
        if (typeof grantId === 'string') grantApprovals.inc({ grant: grantId });
        return;
      }
      case 'declined':
      case 'expired':
        decided(event, facts, event.step);
        if (event.reason && event.reason !== event.step) refusals.inc({ reason: event.reason });
        return;
      case 'edited':
        decided(event, facts, 'superseded');
        return;
      case 'denied':
      case 'replayed':
        refusals.inc({ reason: event.reason ?? event.step });
        return;
      case 'outcome': {
        const outcome = typeof event.detail['outcome'] === 'string' ? event.detail['outcome'] : 'unknown';
        outcomes.inc({ operation, outcome });
        if (outcome === 'needs_reconciliation') reconciliation.inc({ operation });
        return;
      }
      default:
        return;
    }
  };
  const rateLimitedTotal = new Counter({
    name: `${prefix}proposals_rate_limited_total`,
    help: 'Proposals refused by a quota (never audited), by limit: agent_rate, agent_pending, tenant_rate, tenant_pending.',
    labelNames: ['limit'],
    registers: [registry],
  });
  const rateLimited = (refused: RateLimited) => {
    refusals.inc({ reason: refused.reason });
    rateLimitedTotal.inc({ limit: refused.limit });
  };
  return { observer, rateLimited, registry };
}
