import type { Outcome } from '../operation/outcome.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { EngineContext } from './engine-context.js';
import type { Proposal } from './proposal.js';
import { listProposals } from './queries.js';

/** What the next model turn may learn about one proposal of its run (`Kind`: a typed engine's kinds). */
export interface HandbackItem<Kind extends string = string> {
  readonly proposalId: string;
  readonly operation: Kind;
  readonly short: string;
  readonly status: string;
  /** Safe text from the operation's `handback` (or a fixed sentence for undecided states). */
  readonly text: string;
}

/**
 * The bounded handback context for the next model turn of a run: one safe sentence per proposal of
 * that run, newest first, at most `limit`. Text comes from the application, never from the model.
 */
export async function handback(
  ctx: EngineContext,
  input: { tenant: string; runId: string; limit?: number },
): Promise<HandbackItem[]> {
  const page = await listProposals(ctx, input.tenant, { runId: input.runId, limit: input.limit ?? 20 });
  return page.items.map((p) => ({
    proposalId: p.id,
    operation: p.operation,
    short: p.short,
    status: p.status,
    text: proposalHandback(ctx.operations.get(p.operation), p),
  }));
}

/**
 * The safe handback sentence of one proposal: the operation's own text for an outcome, a fixed
 * sentence for the states without one.
 */
export function proposalHandback(operation: AnyOperation | undefined, p: Proposal): string {
  if (p.outcome && operation) return operation.handback(p.outcome as Outcome);
  switch (p.status) {
    case 'pending':
      return 'Waiting for a human decision.';
    case 'declined':
      return `A human declined it${p.decisionNote ? `: ${p.decisionNote}` : '.'}`;
    case 'superseded':
      return `An operator edited it; the new proposal is ${p.supersededBy}.`;
    case 'expired':
      return 'It expired before anyone approved it.';
    default:
      return 'It is executing.';
  }
}

/** The handback items as one block of text for a system or user message. */
export function formatHandback(items: readonly HandbackItem[]): string {
  if (items.length === 0) return 'No proposals in this run yet.';
  return items.map((i) => `- ${i.operation} ${i.proposalId} (${i.short}): ${i.status}. ${i.text}`).join('\n');
}
