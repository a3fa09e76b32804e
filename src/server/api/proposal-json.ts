import type { AuditLine } from '../../engine/queries.js';
import type { Proposal } from '../../engine/proposal.js';
import type { Outcome } from '../../operation/outcome.js';
import { findTextHazards } from '../../operation/text-hazards.js';

/** Where a client checks on a proposal over this API (a route of the server, never stored). */
export function statusPath(proposalId: string): string {
  return `/api/v1/proposals/${encodeURIComponent(proposalId)}`;
}

/**
 * A stored outcome as the API returns it: a `needs_reconciliation` outcome gains the status path
 * here, at read time, so the stored outcome stays independent of the server that shows it.
 */
export function outcomeJson(proposalId: string, outcome: Outcome): Record<string, unknown> {
  return outcome.kind === 'needs_reconciliation'
    ? { kind: outcome.kind, statusPath: statusPath(proposalId) }
    : { ...outcome };
}

/** A proposal as the API returns it: everything an agent or operator client needs, never the executable arguments. */
export function proposalJson(
  proposal: Proposal,
  extra: { readonly handback: string; readonly handbackLanguage: string; readonly approvalUrl: string },
) {
  return {
    id: proposal.id,
    operation: proposal.operation,
    status: proposal.status,
    runId: proposal.runId,
    resource: proposal.resource,
    section: proposal.section,
    requestedBy: proposal.requestedBy,
    editedBy: proposal.editedBy,
    scopeVersion: proposal.scopeVersion,
    viewVersion: proposal.viewVersion,
    digest: proposal.digest,
    short: proposal.short,
    preview: proposal.preview,
    // What a client rendering the preview itself must mark: hidden code points, mixed-script words.
    textHazards: [
      ...findTextHazards(proposal.preview, '$'),
      ...findTextHazards(proposal.resource, 'resource'),
    ],
    request: proposal.request,
    createdAt: proposal.createdAt.toISOString(),
    expiresAt: proposal.expiresAt.toISOString(),
    supersedes: proposal.supersedes,
    supersededBy: proposal.supersededBy,
    decidedBy: proposal.decidedBy,
    decidedAt: proposal.decidedAt?.toISOString() ?? null,
    decisionNote: proposal.decisionNote,
    approvalKind: proposal.approvalKind,
    approvals: { ...approvalsJson(proposal.approvals), roles: proposal.approvals.roles },
    route: routeJson(proposal.route),
    outcome: proposal.outcome === null ? null : outcomeJson(proposal.id, proposal.outcome),
    handback: extra.handback,
    handbackLanguage: extra.handbackLanguage,
    approvalUrl: extra.approvalUrl,
  };
}

/**
 * The route a proposal was given (group, channel, escalation), or null when unrouted. Its group's
 * members are not listed: an agent reads proposals too.
 */
export function routeJson(route: Proposal['route']) {
  if (route === null) return null;
  return {
    id: route.id,
    name: route.name,
    group: route.group,
    channel: route.channel,
    escalation: route.escalation && {
      at: route.escalation.at.toISOString(),
      group: route.escalation.group,
      channel: route.escalation.channel,
    },
    escalatedAt: route.escalatedAt?.toISOString() ?? null,
  };
}

/** Who must approve and who has ("1 of 2"): `{ required, given: [{ by, at }] }`. */
export function approvalsJson(approvals: {
  readonly required: number;
  readonly given: readonly { readonly by: string; readonly at: Date }[];
}) {
  return {
    required: approvals.required,
    given: approvals.given.map((g) => ({ by: g.by, at: g.at.toISOString() })),
  };
}

/** An audit event as the API returns it, with its short hashes. */
export function auditLineJson(line: AuditLine) {
  return {
    seq: line.seq,
    id: line.id,
    step: line.step,
    at: new Date(line.at).toISOString(),
    actor: line.actor,
    reason: line.reason,
    runId: line.runId,
    attemptId: line.attemptId,
    commandId: line.commandId,
    digests: line.digests,
    short: line.short,
    detail: line.detail,
    chainHash: line.chainHash,
  };
}
