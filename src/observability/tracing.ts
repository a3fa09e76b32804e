import type { LifecycleObserver } from '../engine/audit-step.js';
import { displayHash } from '../canonical/digest.js';

// The slice of @opentelemetry/api this module uses, declared here so the package never requires it.
interface SpanLike {
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(endTime?: number): void;
}
interface TracerLike {
  startSpan(
    name: string,
    options?: { startTime?: number; attributes?: Record<string, string | number | boolean> },
  ): SpanLike;
}
interface TraceApiLike {
  trace: { getTracer(name: string, version?: string): TracerLike };
}

const SPAN_STEPS = new Set([
  'proposed',
  'approved',
  'claimed',
  'command',
  'outcome',
  'reconciled',
  'denied',
  'declined',
  'expired',
]);

/**
 * An engine observer that emits one OpenTelemetry span per lifecycle step (propose, approve,
 * execute and the rest) carrying the proposal id, attempt id, run id and short hash — when the
 * application has installed `@opentelemetry/api` and an SDK. Without it, returns `undefined` and
 * the engine runs without tracing.
 *
 * @example
 * const tracing = await createTracingObserver();
 * const engine = await createEngine({ store, operations, observers: tracing ? [tracing] : [] });
 */
export async function createTracingObserver(
  options: { api?: TraceApiLike; tracerName?: string } = {},
): Promise<LifecycleObserver | undefined> {
  let api = options.api;
  if (!api) {
    try {
      api = (await import('@opentelemetry/api' as string)) as TraceApiLike;
    } catch {
      return undefined;
    }
  }
  const tracer = api.trace.getTracer(options.tracerName ?? 'countersign');
  return (event, facts) => {
    if (!SPAN_STEPS.has(event.step)) return;
    const hash = event.digests.approved ?? event.digests.proposed ?? event.digests.seen;
    const attributes: Record<string, string | number | boolean> = {
      'countersign.proposal_id': event.proposalId,
      'countersign.run_id': event.runId,
      'countersign.tenant': event.tenant,
      'countersign.step': event.step,
    };
    if (facts.operation) attributes['countersign.operation'] = facts.operation;
    if (event.attemptId) attributes['countersign.attempt_id'] = event.attemptId;
    if (event.commandId) attributes['countersign.command_id'] = event.commandId;
    if (hash) attributes['countersign.short_hash'] = displayHash(hash);
    if (event.reason) attributes['countersign.reason'] = event.reason;
    const span = tracer.startSpan(`countersign.${event.step}`, { startTime: event.at, attributes });
    if (event.step === 'denied') span.setStatus({ code: 2, message: event.reason ?? 'denied' });
    span.end(event.at);
  };
}
