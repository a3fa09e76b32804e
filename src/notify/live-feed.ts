import type { AuditEvent } from '../audit/event.js';
import { redact } from '../audit/export.js';
import type { Engine } from '../engine/create-engine.js';
import { type LifecycleEvent, lifecycleEventOf } from './lifecycle-event.js';
import { titleOf } from './outbox-writer.js';

/**
 * One lifecycle event as the live feed (`GET /api/v1/events`) sends it: its id is the audit
 * event's per-tenant `seq`, so a client resumes after the last id it saw.
 */
export interface LiveEvent {
  readonly seq: number;
  readonly type: LifecycleEvent['type'];
  readonly data: {
    readonly proposalId: string;
    readonly operation: string;
    /** The status this event announces (`pending`, `approved`, …, `reconciled`). */
    readonly status: string;
    /** For `reconciled`: where the provider's answer settled it. */
    readonly resolution?: string;
    readonly short: string;
    /** The redacted preview's title (model-produced text: data, never markup). */
    readonly title: string;
    /** When the step happened (ISO 8601). */
    readonly at: string;
  };
}

/** Where a feed stands: the last seq read, and the event with that seq (a reconciliation's first half). */
export interface FeedPosition {
  readonly afterSeq: number;
  readonly previous: AuditEvent | undefined;
}

/** One read of the feed: the events to send, and the position to read from next. */
export interface FeedRead {
  readonly events: readonly LiveEvent[];
  readonly position: FeedPosition;
  /** True when the read stopped at its limit: read again at once. */
  readonly more: boolean;
}

/** What the feed needs of the engine. */
export type FeedEngine = Pick<Engine, 'auditSince' | 'get' | 'operations'>;

/**
 * Reads a tenant's lifecycle events after `position` from its audit chain (every tenant has one,
 * notifications configured or not), through the notifications' own step→event mapping.
 * `afterSeq` undefined starts at the chain's head.
 */
export async function readLiveEvents(
  engine: FeedEngine,
  tenant: string,
  position: { readonly afterSeq?: number; readonly previous?: AuditEvent | undefined },
  limit = 200,
): Promise<FeedRead> {
  const read = await engine.auditSince(tenant, {
    ...(position.afterSeq !== undefined ? { afterSeq: position.afterSeq } : {}),
    limit,
  });
  const events: LiveEvent[] = [];
  let previous = position.previous;
  for (const event of read.events) {
    // A reconciliation records `reconciled` then its outcome, at consecutive seqs in one transaction.
    const earlier = previous && previous.seq === event.seq - 1 ? [previous] : [];
    previous = event;
    const lifecycle = lifecycleEventOf(event, earlier);
    if (!lifecycle) continue;
    const proposal = await engine.get(tenant, event.proposalId);
    if (!proposal) continue;
    const operation = engine.operations.get(proposal.operation);
    const preview = operation ? redact(proposal.preview, operation.fields, '$') : proposal.preview;
    events.push({
      seq: event.seq,
      type: lifecycle.type,
      data: {
        proposalId: proposal.id,
        operation: proposal.operation,
        status: lifecycle.status,
        ...(lifecycle.type === 'proposal.outcome' && lifecycle.resolution
          ? { resolution: lifecycle.resolution }
          : {}),
        short: proposal.short,
        title: titleOf(preview, proposal.operation),
        at: new Date(event.at).toISOString(),
      },
    });
  }
  return {
    events,
    position: { afterSeq: read.lastSeq, previous },
    more: read.events.length === limit,
  };
}
