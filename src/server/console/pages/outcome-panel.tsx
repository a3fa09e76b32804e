import type { Child } from 'hono/jsx';
import type { Proposal } from '../../../engine/proposal.js';
import { statusPath } from '../../api/proposal-json.js';
import type { ModelText } from '../model-text.js';
import { UserText } from '../render-text.js';
import { Value } from '../render-value.js';

/** Props of {@link OutcomePanel}. */
export interface OutcomePanelProps {
  readonly proposal: Proposal;
  /** What the agent was told, as the handback text. */
  readonly handback: ModelText;
  readonly csrf: string;
  readonly mayReconcile: boolean;
}

/**
 * What happened when the proposal executed: succeeded (with its result), revision required
 * (with the safe reason), needs reconciliation (with a reconcile button), or a terminal failure
 * (with its correlation id). Nothing while nothing has executed.
 */
export function OutcomePanel(input: OutcomePanelProps) {
  const { proposal } = input;
  const outcome = proposal.outcome;
  if (proposal.status === 'executing' && !outcome) {
    return (
      <section class="card outcome" aria-labelledby="outcome-h">
        <h2 id="outcome-h">Outcome</h2>
        <p class="headline">Executing…</p>
        <p>Attempt {proposal.attempts} is running. Reload for its outcome.</p>
      </section>
    );
  }
  if (!outcome) return null;
  const told = (
    <p class="hint">
      Handed back to the agent: <UserText text={input.handback} />
    </p>
  );
  let content: Child;
  switch (outcome.kind) {
    case 'succeeded':
      content = (
        <>
          <p class="headline">Succeeded</p>
          <p>
            The approved contract <span class="hash">{proposal.short}</span> was executed once.
          </p>
          {outcome.result !== null && outcome.result !== undefined ? (
            <div class="event-detail">
              <Value value={outcome.result} />
            </div>
          ) : (
            ''
          )}
          {told}
        </>
      );
      break;
    case 'revision_required':
      content = (
        <>
          <p class="headline">Revision required: nothing was executed</p>
          <p>
            <UserText text={outcome.reason} />
          </p>
          <p class="muted">
            A fact changed after the review. The agent must propose again; the old approval is not reused.
          </p>
          {told}
        </>
      );
      break;
    case 'needs_reconciliation':
      content = (
        <>
          <p class="headline">Needs reconciliation</p>
          <p>
            The provider did not confirm the call, so it may or may not have happened. It is never retried
            blindly: reconciling looks the attempt up at the provider by its idempotency key.
          </p>
          <p class="muted">
            Status path <code>{statusPath(proposal.id)}</code>
          </p>
          {input.mayReconcile && proposal.status === 'needs_reconciliation' ? (
            <form method="post" action={`/proposals/${proposal.id}/reconcile`}>
              <input type="hidden" name="csrf" value={input.csrf} />
              <button class="secondary" type="submit">
                Reconcile with the provider
              </button>
            </form>
          ) : (
            ''
          )}
          {told}
        </>
      );
      break;
    case 'terminal_failure':
      content = (
        <>
          <p class="headline">Failed: will not be retried</p>
          <p>
            <UserText text={outcome.message} />
          </p>
          <p>
            Correlation id <code>{outcome.correlationId}</code>
            {outcome.reason ? (
              <>
                {' '}
                · reason <code>{outcome.reason}</code>
              </>
            ) : (
              ''
            )}
          </p>
          {told}
        </>
      );
      break;
  }
  return (
    <section class={`card outcome ${outcome.kind}`} aria-labelledby="outcome-h">
      <h2 id="outcome-h">Outcome</h2>
      {content}
    </section>
  );
}
