import { parseStoredJson } from '../canonical/stored-json.js';
import type { Actor } from '../operation/actor.js';
import type { DenialReason } from '../operation/reasons.js';
import { mayDecide } from './decision-right.js';
import type { ProposalRecord } from '../store/records.js';
import { inTransaction } from './audit-step.js';
import { refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';
import { type FreezeFacts, freezeProposal, type InvalidRequest, invalidRequest } from './freeze-proposal.js';
import { toProposal } from './proposal.js';
import { proposalRouteOf, routeNewProposal, routeOf, routeRefusal } from './routing.js';
import type { Operations, ProposalOf } from './operation-types.js';

/** An operator changes editable request fields of a pending proposal. */
export interface EditInput {
  readonly tenant: string;
  readonly proposalId: string;
  readonly editor: Actor;
  /** New values for the operation's `editable` request fields only. */
  readonly changes: Readonly<Record<string, unknown>>;
}

/** A NEW pending proposal that supersedes the old one; or why not. */
export type EditResult<Ops extends Operations = Operations> =
  | { readonly kind: 'edited'; readonly proposal: ProposalOf<Ops>; readonly superseded: string }
  | InvalidRequest
  | { readonly kind: 'not_editable'; readonly reason: DenialReason; readonly message: string };

/**
 * Edit is a new freeze: the changed request runs through the operation's `prepare` again, gets a
 * new digest, the old proposal becomes `superseded`, and approval is required again. A tenant whose
 * audit chain cannot take the events edits nothing: `corrupt_audit_chain`.
 */
export async function edit(ctx: EngineContext, input: EditInput): Promise<EditResult> {
  const record =
    input.editor.tenant === input.tenant
      ? await ctx.store.read((tx) => tx.getProposal(input.tenant, input.proposalId))
      : undefined;
  if (!record) return { kind: 'not_editable', reason: 'not_found', message: 'no such proposal' };
  const operation = ctx.operations.get(record.operation);
  if (!mayDecide(ctx, input.editor, record.tenant)) {
    return { kind: 'not_editable', reason: 'forbidden', message: 'not allowed to edit this proposal' };
  }
  if (!operation) {
    return {
      kind: 'not_editable',
      reason: 'unknown_operation',
      message: `operation ${record.operation} is not registered`,
    };
  }
  const unknown = Object.keys(input.changes).filter((k) => !operation.editable.includes(k));
  if (unknown.length > 0) {
    return invalidRequest(
      unknown.map((k) => ({
        path: `$.changes.${k}`,
        message: `not an editable field (editable: ${operation.editable.join(', ') || 'none'})`,
      })),
    );
  }
  const request = { ...(parseStoredJson(record.requestJson) as Record<string, unknown>), ...input.changes };
  const facts: FreezeFacts = {
    tenant: record.tenant,
    section: record.section,
    // An operation that names its resource names it again from the edited arguments.
    resource: operation.resourceOf ? null : record.resource,
    requestedBy: record.requestedBy,
    runId: record.runId,
    operation: record.operation,
  };
  const frozen = await freezeProposal(ctx, operation, request, {
    facts,
    links: { supersedes: record.id, editedBy: input.editor.id },
  });
  if (frozen.kind !== 'frozen') return frozen;
  const next = frozen.record;
  return refusingCorruptChain(
    ctx,
    () => supersede(ctx, input, record, next),
    (refused): EditResult => ({ kind: 'not_editable', reason: refused.reason, message: refused.message }),
  );
}

/** Supersedes `record` with its edited revision `next` in one transaction, audited on both. */
function supersede(
  ctx: EngineContext,
  input: EditInput,
  record: ProposalRecord,
  next: ProposalRecord,
): Promise<EditResult> {
  return inTransaction(ctx, async (t): Promise<EditResult> => {
    const { now } = t;
    const routed = routeRefusal(await routeOf(t.tx, record.tenant, record.id), input.editor.id);
    if (routed !== undefined) return { kind: 'not_editable', reason: 'forbidden', message: routed };
    if (now >= record.expiresAt)
      return { kind: 'not_editable', reason: 'expired', message: 'the proposal already expired' };
    const applied = await t.tx.updateProposal(
      record.tenant,
      record.id,
      { status: 'pending' },
      {
        status: 'superseded',
        supersededBy: next.id,
        decidedBy: input.editor.id,
        decidedAt: now,
        updatedAt: now,
      },
    );
    if (!applied) {
      const current = await t.tx.getProposal(record.tenant, record.id);
      const status = current?.status;
      const reason: DenialReason =
        status === 'declined' || status === 'superseded' || status === 'expired' ? status : 'replayed';
      return { kind: 'not_editable', reason, message: `the proposal is ${status}` };
    }
    await t.tx.insertProposal(next);
    // The new revision is routed by the routes as they are now (its amount may have changed).
    const route = await routeNewProposal(t.tx, next);
    await t.record({
      tenant: record.tenant,
      proposalId: record.id,
      operation: record.operation,
      proposedAt: record.createdAt,
      runId: record.runId,
      step: 'edited',
      actor: input.editor.id,
      reason: 'superseded',
      digests: { proposed: record.digest },
      detail: { supersededBy: next.id, newDigest: next.digest, fields: Object.keys(input.changes).sort() },
    });
    await t.record({
      tenant: next.tenant,
      proposalId: next.id,
      operation: next.operation,
      proposedAt: next.createdAt,
      runId: next.runId,
      step: 'proposed',
      actor: input.editor.id,
      digests: { proposed: next.digest },
      detail: {
        operation: next.operation,
        supersedes: record.id,
        supersedesDigest: record.digest,
        scopeVersion: next.scopeVersion,
        viewVersion: next.viewVersion,
        ...(route ? { route: route.routeName, group: route.group } : {}),
      },
    });
    const nextRoute = route ? proposalRouteOf(route, await t.tx.listGroups(next.tenant)) : null;
    return { kind: 'edited', proposal: toProposal(next, undefined, [], nextRoute), superseded: record.id };
  });
}
