import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createLifecycleMetrics, createTracingObserver } from '../../src/observability/index.js';
import { approver, type Harness, harness, proposePayment, viewer } from '../support/engine.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const value = (text: string, line: string) =>
  Number(
    text
      .split('\n')
      .find((l) => l.startsWith(line))
      ?.slice(line.length)
      .trim(),
  );

describe('Prometheus metrics from the lifecycle', () => {
  it('counts proposals, decisions, refusals by reason, outcomes, reconciliations and time to decision', async () => {
    const metrics = createLifecycleMetrics();
    h = await harness({ observers: [metrics.observer] });
    const paid = await proposePayment(h.engine, 'acme', 'inv-104');
    h.clock.advance(90_000);
    await h.engine.proposals.approve({
      tenant: 'acme',
      proposalId: paid.id,
      approver: viewer(),
      seenDigest: paid.digest,
    });
    await h.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: paid.id,
      approver: approver(),
      seenDigest: paid.digest,
    });
    h.world.provider.failWhen(() => true, 'timeout_after_commit');
    const lost = await proposePayment(h.engine, 'acme', 'inv-106');
    await h.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: lost.id,
      approver: approver(),
      seenDigest: lost.digest,
    });
    const declined = await proposePayment(h.engine, 'acme', 'inv-107');
    await h.engine.proposals.decline({ tenant: 'acme', proposalId: declined.id, actor: approver() });

    const text = await metrics.registry.metrics();
    expect(value(text, 'countersign_proposals_total{operation="invoice.pay"}')).toBe(3);
    expect(value(text, 'countersign_decisions_total{operation="invoice.pay",decision="approved"}')).toBe(2);
    expect(value(text, 'countersign_decisions_total{operation="invoice.pay",decision="declined"}')).toBe(1);
    expect(value(text, 'countersign_refusals_total{reason="forbidden"}')).toBe(1);
    expect(value(text, 'countersign_outcomes_total{operation="invoice.pay",outcome="succeeded"}')).toBe(1);
    expect(value(text, 'countersign_needs_reconciliation_total{operation="invoice.pay"}')).toBe(1);
    expect(
      value(
        text,
        'countersign_time_to_decision_seconds_bucket{le="60",operation="invoice.pay",decision="approved"}',
      ),
    ).toBe(1);
    expect(
      value(
        text,
        'countersign_time_to_decision_seconds_bucket{le="300",operation="invoice.pay",decision="approved"}',
      ),
    ).toBe(2);
  });

  it('counts proposals a quota refused, by limit, beside the refusals by reason', async () => {
    const metrics = createLifecycleMetrics();
    h = await harness({
      observers: [metrics.observer],
      onRateLimited: metrics.rateLimited,
      limits: { perAgent: { pending: 1 } },
    });
    await proposePayment(h.engine, 'acme', 'inv-104');
    await expect(proposePayment(h.engine, 'acme', 'inv-105')).rejects.toThrow(/rate_limited/);
    const text = await metrics.registry.metrics();
    expect(value(text, 'countersign_proposals_total{operation="invoice.pay"}')).toBe(1);
    expect(value(text, 'countersign_refusals_total{reason="rate_limited"}')).toBe(1);
    expect(value(text, 'countersign_proposals_rate_limited_total{limit="agent_pending"}')).toBe(1);
  });
});

describe('OpenTelemetry spans', () => {
  it('one span per step with the proposal id, attempt id and short hash', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    const observer = await createTracingObserver();
    expect(observer).toBeDefined();
    h = await harness({ observers: [observer!] });
    const p = await proposePayment(h.engine);
    await h.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: p.id,
      approver: approver(),
      seenDigest: p.digest,
    });
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual([
      'countersign.proposed',
      'countersign.approved',
      'countersign.claimed',
      'countersign.command',
      'countersign.outcome',
    ]);
    for (const s of spans) {
      expect(s.attributes['countersign.proposal_id']).toBe(p.id);
      expect(s.attributes['countersign.short_hash']).toBe(p.short);
    }
    expect(spans[2]?.attributes['countersign.attempt_id']).toMatch(/^att_/);
    trace.disable();
  });
});
