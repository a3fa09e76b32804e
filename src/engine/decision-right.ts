import type { Actor } from '../operation/actor.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { EngineContext } from './engine-context.js';
import type { Proposal } from './proposal.js';
import { type ProposalRoute, routeRefusal } from './routing.js';

/** A decision an operator takes on a proposal. */
export type DecisionAction = 'approve' | 'decline' | 'edit' | 'reconcile';

/** Why the engine would refuse an actor a decision, whatever the proposal's state. */
export type DecisionRefusalReason =
  | 'not_found'
  | 'forbidden'
  | 'separation_of_duties'
  | 'already_approved'
  | 'unknown_operation';

/**
 * Whether the engine lets an actor take a decision on a proposal, judged on who the actor is (the
 * proposal's state — status, expiry, the digest seen — is checked by the decision itself). A
 * refusal names the reason the decision would be refused with.
 */
export type DecisionRight =
  | { readonly kind: 'allowed' }
  | { readonly kind: 'refused'; readonly reason: DecisionRefusalReason; readonly message: string };

/** What the checks read of a proposal: the same from a stored record and from a {@link Proposal}. */
export interface DecisionFacts {
  readonly tenant: string;
  readonly operation: string;
  readonly scope: unknown;
  readonly requestedBy: string;
  readonly editedBy: string | null;
  /** The proposal's frozen approval policy. */
  readonly policy: { readonly required: number; readonly roles: readonly string[] };
  /** Who has approved so far (for a quorum). */
  readonly approvedBy: readonly string[];
  /** The route it was given (only its group's members decide it), or null when unrouted. */
  readonly route: ProposalRoute | null;
}

/** The facts the checks read, from a public proposal (its approvals so far included). */
export function factsOf(proposal: Proposal): DecisionFacts {
  return {
    tenant: proposal.tenant,
    operation: proposal.operation,
    scope: proposal.scope,
    requestedBy: proposal.requestedBy,
    editedBy: proposal.editedBy,
    policy: proposal.approvals,
    approvedBy: proposal.approvals.given.map((g) => g.by),
    route: proposal.route,
  };
}

const ALLOWED: DecisionRight = Object.freeze({ kind: 'allowed' });

/** True when the actor is an operator of the tenant with a role that may decide. */
export function mayDecide(ctx: EngineContext, actor: Actor, tenant: string): boolean {
  return (
    actor.tenant === tenant &&
    actor.kind === 'operator' &&
    actor.roles.some((r) => ctx.approverRoles.includes(r))
  );
}

/**
 * Four eyes: the principal who proposed a proposal never approves it, nor does the operator whose
 * edit produced it unless the operation or the engine allows that (each such approval is audited).
 */
export function separationOfDuties(
  ctx: EngineContext,
  actor: Actor,
  facts: Pick<DecisionFacts, 'requestedBy' | 'editedBy'>,
  operation: AnyOperation | undefined,
):
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'ok'; readonly editor: boolean } {
  if (actor.id === facts.requestedBy) {
    return { kind: 'refused', message: 'the proposing principal cannot approve its own proposal' };
  }
  if (facts.editedBy !== null && actor.id === facts.editedBy) {
    if (ctx.allowEditorApproval || operation?.allowEditorApproval) return { kind: 'ok', editor: true };
    return {
      kind: 'refused',
      message: 'the operator who edited this proposal cannot approve it; another approver must',
    };
  }
  return { kind: 'ok', editor: false };
}

/**
 * Who may approve, in the order `approve` checks it: an operator of the tenant with an approver
 * role that the operation authorizes (`forbidden`), holding one of the frozen policy's roles
 * (`forbidden`), a member of the group of the proposal's route when it has one (`forbidden`),
 * neither the proposer nor — unless allowed — the editor (`separation_of_duties`), and never the
 * editor toward a quorum. `editor` tells the claim that the editor approved.
 */
export function approvalRight(
  ctx: EngineContext,
  actor: Actor,
  facts: Omit<DecisionFacts, 'approvedBy'>,
): { readonly kind: 'allowed'; readonly editor: boolean } | Extract<DecisionRight, { kind: 'refused' }> {
  const operation = ctx.operations.get(facts.operation);
  if (!mayDecide(ctx, actor, facts.tenant) || (operation && !operation.authorize(actor, facts.scope))) {
    return { kind: 'refused', reason: 'forbidden', message: 'not allowed to approve this operation' };
  }
  const { roles } = facts.policy;
  if (roles.length > 0 && !actor.roles.some((r) => roles.includes(r))) {
    return {
      kind: 'refused',
      reason: 'forbidden',
      message: `approving this proposal needs one of the roles ${roles.join(', ')}`,
    };
  }
  const routed = routeRefusal(facts.route, actor.id);
  if (routed !== undefined) return { kind: 'refused', reason: 'forbidden', message: routed };
  const duties = separationOfDuties(ctx, actor, facts, operation);
  if (duties.kind === 'refused')
    return { kind: 'refused', reason: 'separation_of_duties', message: duties.message };
  // The proposer and the editor never count toward a quorum, whatever allows the editor alone.
  if (duties.editor && facts.policy.required > 1) {
    return {
      kind: 'refused',
      reason: 'separation_of_duties',
      message:
        'the operator who edited this proposal never counts toward its approvals; other approvers must',
    };
  }
  return { kind: 'allowed', editor: duties.editor };
}

/**
 * The engine's one answer to "may this actor take this decision on this proposal?", for a console
 * or API deciding which buttons to show: the checks `approve`, `decline`, `edit` and `reconcile`
 * run on the actor, with the reason each would refuse with.
 */
export function decisionRight(
  ctx: EngineContext,
  actor: Actor,
  facts: DecisionFacts,
  action: DecisionAction,
): DecisionRight {
  if (actor.tenant !== facts.tenant)
    return { kind: 'refused', reason: 'not_found', message: 'no such proposal' };
  const operation = ctx.operations.get(facts.operation);
  if (action === 'approve') {
    const right = approvalRight(ctx, actor, facts);
    if (right.kind === 'refused') return right;
    if (facts.policy.required > 1 && facts.approvedBy.includes(actor.id)) {
      return {
        kind: 'refused',
        reason: 'already_approved',
        message: 'you already approved this proposal; another approver must',
      };
    }
  } else if (!(action === 'reconcile' && actor.kind === 'system') && !mayDecide(ctx, actor, facts.tenant)) {
    return { kind: 'refused', reason: 'forbidden', message: `not allowed to ${action} this proposal` };
  } else if (action !== 'reconcile') {
    const routed = routeRefusal(facts.route, actor.id);
    if (routed !== undefined) return { kind: 'refused', reason: 'forbidden', message: routed };
  }
  if (!operation && action !== 'decline') {
    return {
      kind: 'refused',
      reason: 'unknown_operation',
      message: `operation ${facts.operation} is not registered`,
    };
  }
  return ALLOWED;
}
