import type { AuditEvent, AuditStep } from '../audit/event.js';
import type { EngineContext } from './engine-context.js';
import { type AuditLine, auditEvents, toAuditLine } from './queries.js';

/**
 * Steps anyone allowed to try can record over and over (a refused approval, a replayed one). They
 * are collapsed in a timeline so they can never bury a decision.
 */
export const REPEATABLE_STEPS: readonly AuditStep[] = Object.freeze(['denied', 'replayed']);

/** Repeated events of one step, by one actor, for one reason, between two other events. */
export interface RepeatedEvents {
  readonly kind: 'repeated';
  readonly step: AuditStep;
  readonly actor: string;
  readonly reason: string | null;
  /** How many events (2 or more). */
  readonly count: number;
  readonly first: AuditLine;
  readonly last: AuditLine;
}

/** One entry of a timeline: an event, or a run of repeated events collapsed into one. */
export type TimelineEntry = { readonly kind: 'event'; readonly line: AuditLine } | RepeatedEvents;

/** A proposal's audit events for an operator: every decision, and repeated events collapsed. */
export interface ProposalTimeline {
  /** In chain order (a collapsed run sits at its first event). */
  readonly entries: readonly TimelineEntry[];
  /** How many audit events the entries stand for. */
  readonly eventCount: number;
}

interface Group {
  count: number;
  readonly first: AuditEvent;
  last: AuditEvent;
}

/**
 * The timeline of one proposal: every event except the repeatable steps ({@link REPEATABLE_STEPS})
 * as itself, and between two such events, the repeatable ones grouped by step, actor and reason
 * (count, first, last). Its size depends on the lifecycle, not on how many refusals an agent sent,
 * so the approval, claim and outcome are always on the first screen. Repeated events are read page
 * by page and only counted.
 */
export async function proposalTimeline(
  ctx: Pick<EngineContext, 'store'>,
  tenant: string,
  proposalId: string,
): Promise<ProposalTimeline> {
  const kept: AuditLine[] = [];
  for await (const e of auditEvents(ctx, tenant, { proposalId, exceptSteps: REPEATABLE_STEPS }))
    kept.push(toAuditLine(e));
  const groups = new Map<string, Group>();
  let segment = 0;
  let eventCount = kept.length;
  for await (const e of auditEvents(ctx, tenant, { proposalId, steps: REPEATABLE_STEPS })) {
    eventCount++;
    // Both reads are in chain order: the segment is how many kept events came before this one.
    while (segment < kept.length && kept[segment]!.seq < e.seq) segment++;
    const key = JSON.stringify([segment, e.step, e.actor, e.reason]);
    const group = groups.get(key);
    if (group) {
      group.count++;
      group.last = e;
    } else groups.set(key, { count: 1, first: e, last: e });
  }
  const entries: TimelineEntry[] = [
    ...kept.map((line) => ({ kind: 'event' as const, line })),
    ...[...groups.values()].map(
      (g): TimelineEntry =>
        g.count === 1
          ? { kind: 'event', line: toAuditLine(g.first) }
          : {
              kind: 'repeated',
              step: g.first.step,
              actor: g.first.actor,
              reason: g.first.reason,
              count: g.count,
              first: toAuditLine(g.first),
              last: toAuditLine(g.last),
            },
    ),
  ];
  const seqOf = (entry: TimelineEntry) => (entry.kind === 'event' ? entry.line.seq : entry.first.seq);
  entries.sort((a, b) => seqOf(a) - seqOf(b));
  return { entries, eventCount };
}
