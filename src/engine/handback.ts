import type { Outcome } from '../operation/outcome.js';
import type { EngineContext } from './engine-context.js';
import { listProposals } from './queries.js';

/** What the next model turn may learn about one proposal of its run. */
export interface HandbackItem {
  readonly proposalId: string;
  readonly operation: string;
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
  return page.items.map((p) => {
    const operation = ctx.operations.get(p.operation);
    let text: string;
    if (p.outcome && operation) text = operation.handback(p.outcome as Outcome);
    else if (p.status === 'pending') text = 'Waiting for a human decision.';
    else if (p.status === 'declined')
      text = `A human declined it${p.decisionNote ? `: ${p.decisionNote}` : '.'}`;
    else if (p.status === 'superseded')
      text = `An operator edited it; the new proposal is ${p.supersededBy}.`;
    else if (p.status === 'expired') text = 'It expired before anyone approved it.';
    else text = 'It is executing.';
    return { proposalId: p.id, operation: p.operation, short: p.short, status: p.status, text };
  });
}

/** The handback items as one block of text for a system or user message. */
export function formatHandback(items: readonly HandbackItem[]): string {
  if (items.length === 0) return 'No proposals in this run yet.';
  return items.map((i) => `- ${i.operation} ${i.proposalId} (${i.short}): ${i.status}. ${i.text}`).join('\n');
}
