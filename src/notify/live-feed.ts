import type { AuditEvent } from '../audit/event.js';
import { redact } from '../ledger/incident-export.js';
import type { Engine } from '../engine/create-engine.js';
import type { Proposal } from '../engine/proposal.js';
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
    /** Who took the step (the proposing agent, the deciding operator, `system:…`). */
    readonly actor: string;
    /**
     * The approval rule and where it stands: `required` approvals, `given` so far (for
     * `proposal.approval_given`, counting the one it announces, by `actor`).
     */
    readonly approvals: { readonly required: number; readonly given: number };
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

// The count the engine audited for a quorum step; else the proposal's approvals as read now.
function approvalsAt(event: AuditEvent, proposal: Proposal): { required: number; given: number } {
  const { given, required } = event.detail;
  if (
    (event.step === 'partially_approved' || event.step === 'approved') &&
    typeof given === 'number' &&
    typeof required === 'number'
  )
    return { required, given };
  if (event.step === 'approved' && Array.isArray(event.detail['approvers']) && typeof required === 'number')
    return { required, given: event.detail['approvers'].length };
  return { required: proposal.approvals.required, given: proposal.approvals.given.length };
}

/** What the feed needs of the engine. */
export type FeedEngine = Pick<Engine, 'audit' | 'proposals' | 'operations'>;

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
  const read = await engine.audit.since(tenant, {
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
    const proposal = await engine.proposals.get(tenant, event.proposalId);
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
        actor: event.actor,
        approvals: approvalsAt(event, proposal),
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
