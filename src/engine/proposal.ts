import { canonicalize } from '../canonical/canonicalize.js';
import { digest, displayHash, sha256Hex } from '../canonical/digest.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import type { DeepReadonly } from '../canonical/freeze.js';
import { seal } from '../canonical/seal.js';
import type { ProposalFacts } from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { ApprovalRecord, ProposalRecord, ProposalStatus } from '../store/records.js';
import type { ProposalOf } from './operation-types.js';
import type { ProposalRoute } from './routing.js';

/**
 * The public, read-only view of a proposal. Every JSON part is deep-frozen. A typed engine gives
 * {@link ProposalOf}: one of these per registered kind, discriminated on `operation`. The type
 * parameters are the parts as read (already deep read-only: `ProposalOf` applies `DeepReadonly`),
 * which keeps a typed proposal assignable to this plain one.
 */
export interface Proposal<
  Args = unknown,
  Preview = unknown,
  Result = unknown,
  Kind extends string = string,
  Request = unknown,
> {
  readonly id: string;
  readonly tenant: string;
  readonly runId: string;
  readonly section: string | null;
  readonly resource: string;
  readonly requestedBy: string;
  /** The operator whose edit produced this proposal; like the proposer, they do not approve it. */
  readonly editedBy: string | null;
  readonly operation: Kind;
  readonly scopeVersion: number;
  readonly viewVersion: number;
  /** The model's request as the operation's strict request schema parsed it. */
  readonly request: Request;
  readonly arguments: Args;
  readonly scope: DeepReadonly<unknown>;
  readonly preview: Preview;
  /** The full contract digest (SHA-256 hex) a human approves. */
  readonly digest: string;
  /**
   * First 12 hex characters of {@link digest}: what logs, the console and audit lines show
   * (`invalid:…` if the stored digest was tampered into something else, see `displayHash`).
   */
  readonly short: string;
  readonly scopeDigest: string;
  readonly status: ProposalStatus;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly supersedes: string | null;
  readonly supersededBy: string | null;
  readonly decidedBy: string | null;
  readonly decidedAt: Date | null;
  readonly approvalKind: 'exact' | 'grant' | null;
  readonly grantId: string | null;
  readonly decisionNote: string | null;
  readonly attempts: number;
  readonly outcome: Outcome<Result> | null;
  /**
   * The frozen approval policy and who has approved this digest so far ("1 of 2"). For a proposal
   * decided by one human approval, `given` holds that approver; a grant's approval is not listed.
   */
  readonly approvals: ProposalApprovals;
  /**
   * The route it was given when it was created (see {@link ProposalRoute}): only the route's group
   * decides it. Null when no route matched: every approver of the tenant may.
   */
  readonly route: ProposalRoute | null;
}

/** Who must approve a proposal, and who has. */
export interface ProposalApprovals {
  readonly required: number;
  /** Roles an approver must hold one of; empty for any approver of the tenant. */
  readonly roles: readonly string[];
  readonly given: readonly { readonly by: string; readonly at: Date }[];
}

/**
 * The frozen approval policy of a stored proposal: one approval by anyone for formats 1 and 2. A
 * stored policy that does not parse reads as one approval by anyone, so pages that list it still
 * render; approval refuses such a record (`corrupt_approval_record`) before anything counts.
 */
export function policyOf(record: Pick<ProposalRecord, 'policyJson'>): {
  readonly required: number;
  readonly roles: readonly string[];
} {
  if (record.policyJson === null) return { required: 1, roles: [] };
  try {
    const parsed = parseStoredJson(record.policyJson) as { required?: unknown; roles?: unknown };
    const { required, roles } = parsed;
    if (
      typeof required === 'number' &&
      Number.isSafeInteger(required) &&
      required >= 1 &&
      Array.isArray(roles) &&
      roles.every((r): r is string => typeof r === 'string')
    ) {
      return { required, roles };
    }
  } catch {
    // Falls through: see above.
  }
  return { required: 1, roles: [] };
}

/**
 * The fields a contract digest covers: everything a human approves, bound to its run, its place
 * (tenant, section, resource) and who asked for it (proposer, editor). Which fields count depends
 * on the stored format: format 1 (0.1) bound neither section nor people; it is still verified
 * exactly as it was written.
 */
export interface ContractBody {
  readonly formatVersion: number;
  readonly operation: string;
  readonly scopeVersion: number;
  readonly viewVersion: number;
  readonly tenant: string;
  readonly section: string | null;
  readonly resource: string;
  readonly requestedBy: string;
  readonly editedBy: string | null;
  readonly runId: string;
  readonly scopeDigest: string;
  readonly arguments: unknown;
  readonly preview: unknown;
  /** The frozen approval policy (format 3); formats 1 and 2 never bound one. */
  readonly approvals: { readonly required: number; readonly roles: readonly string[] } | null;
}

/** The fields a contract digest covers in the body's own stored format. */
function formatBody(body: ContractBody): object {
  if (body.formatVersion === 1) {
    const { formatVersion, section, requestedBy, editedBy, approvals, ...format1 } = body;
    return format1;
  }
  if (body.formatVersion === 2) {
    const { approvals, ...format2 } = body;
    return format2;
  }
  // The format version is itself digested, so a record rewritten to claim format 1 (whose digest
  // ignores the section) no longer matches its stored digest.
  return body;
}

/** The contract digest (full SHA-256 hex) of a proposal's frozen parts, per its stored format. */
export function contractDigest(body: ContractBody): string {
  return digest(formatBody(body)).sha256;
}

/**
 * {@link contractDigest} of a body whose arguments and preview are given as canonical JSON text
 * (what a record stores), without parsing and canonicalizing them again: the body is
 * canonicalized with a placeholder for each, and their texts are put in its place. Equal to
 * `contractDigest` with the parsed values whenever the texts are canonical; a text that is not
 * (edited in the database) gives another digest, so it no longer matches.
 */
export function contractDigestOfCanonical(
  body: Omit<ContractBody, 'arguments' | 'preview'>,
  argumentsJson: string,
  previewJson: string,
): string {
  const full: ContractBody = {
    formatVersion: body.formatVersion,
    operation: body.operation,
    scopeVersion: body.scopeVersion,
    viewVersion: body.viewVersion,
    tenant: body.tenant,
    section: body.section,
    resource: body.resource,
    requestedBy: body.requestedBy,
    editedBy: body.editedBy,
    runId: body.runId,
    scopeDigest: body.scopeDigest,
    arguments: 0,
    preview: 0,
    approvals: body.approvals,
  };
  const placeholders = canonicalize(formatBody(full));
  // Outside a key, a quote inside a canonical string is always escaped: each member is found once.
  const text = placeholders
    .replace('"arguments":0', () => `"arguments":${argumentsJson}`)
    .replace('"preview":0', () => `"preview":${previewJson}`);
  return sha256Hex(text);
}

/** The keyed seal of a contract digest, binding it to the proposal id. */
export function contractSeal(id: string, contract: string, key: string | Uint8Array): string {
  return seal({ id, digest: contract }, key);
}

/**
 * Recomputes the contract digest from exactly what a record stores: its arguments and preview as
 * the canonical text they were stored as (a text edited into another form no longer matches).
 */
export function recomputeContractDigest(record: ProposalRecord): string {
  return contractDigestOfCanonical(
    {
      formatVersion: record.formatVersion,
      operation: record.operation,
      scopeVersion: record.scopeVersion,
      viewVersion: record.viewVersion,
      tenant: record.tenant,
      section: record.section,
      resource: record.resource,
      requestedBy: record.requestedBy,
      editedBy: record.editedBy,
      runId: record.runId,
      scopeDigest: record.scopeDigest,
      approvals: record.formatVersion >= 3 ? policyOf(record) : null,
    },
    record.argumentsJson,
    record.previewJson,
  );
}

/** Parses stored JSON text, deep-frozen as it is parsed (no second canonicalization and parse). */
export function frozenJson(text: string): unknown {
  return parseStoredJson(text);
}

/**
 * The public view of a stored proposal. Given `now`, a pending proposal past its expiry reads
 * `expired` even before the sweep has stored it so: it can no longer be approved.
 */
export function toProposal(
  record: ProposalRecord,
  now?: number,
  approvals: readonly ApprovalRecord[] = [],
  route: ProposalRoute | null = null,
): Proposal {
  const policy = policyOf(record);
  const given =
    approvals.length > 0
      ? approvals.map((a) => ({ by: a.approver, at: new Date(a.at) }))
      : record.approvalKind === 'exact' && record.decidedBy !== null && record.decidedAt !== null
        ? [{ by: record.decidedBy, at: new Date(record.decidedAt) }]
        : [];
  return {
    id: record.id,
    tenant: record.tenant,
    runId: record.runId,
    section: record.section,
    resource: record.resource,
    requestedBy: record.requestedBy,
    editedBy: record.editedBy,
    operation: record.operation,
    scopeVersion: record.scopeVersion,
    viewVersion: record.viewVersion,
    request: frozenJson(record.requestJson),
    arguments: frozenJson(record.argumentsJson),
    scope: frozenJson(record.scopeJson),
    preview: frozenJson(record.previewJson),
    digest: record.digest,
    // A tampered stored digest must not take every page that lists the proposal down with it;
    // approval refuses such a record (`corrupt_approval_record`).
    short: displayHash(record.digest),
    scopeDigest: record.scopeDigest,
    status:
      record.status === 'pending' && now !== undefined && now >= record.expiresAt ? 'expired' : record.status,
    createdAt: new Date(record.createdAt),
    expiresAt: new Date(record.expiresAt),
    supersedes: record.supersedes,
    supersededBy: record.supersededBy,
    decidedBy: record.decidedBy,
    decidedAt: record.decidedAt === null ? null : new Date(record.decidedAt),
    approvalKind: record.approvalKind,
    grantId: record.grantId,
    decisionNote: record.decisionNote,
    attempts: record.currentAttempt,
    outcome: record.outcomeJson === null ? null : (frozenJson(record.outcomeJson) as Outcome),
    approvals: Object.freeze({
      required: policy.required,
      roles: Object.freeze([...policy.roles]),
      given: Object.freeze(given.map((g) => Object.freeze(g))),
    }),
    route,
  };
}

/** The facts of a stored proposal an operation's `toScope` and `commandScope` are given. */
export function proposalFacts(record: ProposalRecord): ProposalFacts {
  return {
    tenant: record.tenant,
    section: record.section,
    resource: record.resource,
    requestedBy: record.requestedBy,
    runId: record.runId,
    operation: record.operation,
  };
}
