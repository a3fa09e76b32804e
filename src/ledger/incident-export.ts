import { digest, displayHash } from '../canonical/digest.js';
import { childPath, fieldPattern, indexPath } from '../canonical/json-path.js';
import { own } from '../canonical/own.js';
import { parseJson } from '../canonical/parse-json.js';
import type { FieldRules } from '../canonical/scope-diff.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { AttemptRecord, ProposalRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { AuditEvent } from '../audit/event.js';
import { type AuditVerification, verifyAudit } from './verify-audit.js';

/** A digest as the bundle shows it: in full, and the short hash operators compare by eye. */
export interface DigestPair {
  readonly sha256: string;
  readonly short: string;
}

/** An audit event exactly as stored (its hashes can be recomputed), plus its digests' short hashes. */
export interface IncidentEvent extends AuditEvent {
  readonly short: {
    readonly proposed?: string;
    readonly seen?: string;
    readonly approved?: string;
    readonly requested?: string;
  };
}

/** One requested scope the executor built from a real downstream request. Only its digest is stored. */
export interface RequestedScope {
  /** `command`: the guard allowed it and a command was created; `denied`: the guard refused it. */
  readonly source: 'command' | 'denied';
  readonly attemptId: string | null;
  readonly commandId: string | null;
  readonly at: number;
  /** The requested scope's digest, or null when it could not be built (an invalid requested scope). */
  readonly digest: DigestPair | null;
  /** Whether it equals the approved scope digest; null when unknown. */
  readonly equalsApproved: boolean | null;
  /**
   * The requested scope itself when it is known: equal to the approved one (sanitized the same
   * way). Otherwise null: only its digest, diff lines and issues were recorded.
   */
  readonly scope: unknown;
  readonly reason: string | null;
  /** Field-level differences from the approved scope, redacted by the engine. */
  readonly diff: readonly string[];
  readonly issues: readonly string[];
}

/** Whether an external (or local) effect occurred, in one word. */
export type ExternalEffect = 'yes' | 'no' | 'unknown';

/**
 * The incident handoff: everything a team needs to investigate one proposal, in one JSON bundle.
 * Scopes and the preview are sanitized by the operation's redaction rules when the operation is
 * known; digests always refer to the stored, unredacted values.
 */
export interface IncidentBundle {
  readonly format: 'countersign.incident.v1';
  readonly exportedAt: string;
  readonly proposal: {
    readonly id: string;
    readonly tenant: string;
    readonly runId: string;
    readonly operation: string;
    readonly resource: string;
    readonly section: string | null;
    readonly requestedBy: string;
    readonly status: ProposalRecord['status'];
    readonly createdAt: string;
    readonly expiresAt: string;
    readonly decidedBy: string | null;
    readonly decidedAt: string | null;
    readonly approvalKind: 'exact' | 'grant' | null;
    readonly grantId: string | null;
    readonly supersedes: string | null;
    readonly supersededBy: string | null;
    readonly contractDigest: DigestPair;
  };
  /** How the values below were sanitized. */
  readonly redaction: { readonly rules: 'operation' | 'none'; readonly note: string };
  readonly scopes: {
    readonly proposed: {
      readonly scopeVersion: number;
      readonly scope: unknown;
      readonly digest: DigestPair;
      /** The contract digest the `proposed` audit event recorded. */
      readonly recordedContractDigest: DigestPair | null;
    };
    readonly viewed: {
      readonly viewVersion: number;
      /** The view model a human reviewed. */
      readonly preview: unknown;
      readonly digest: DigestPair;
      /** The contract digests the approvers' pages showed (from approval and refusal events). */
      readonly seenDigests: readonly DigestPair[];
    };
    /** Null when no approval claimed the proposal. */
    readonly approved: {
      readonly scopeVersion: number;
      readonly scope: unknown;
      readonly digest: DigestPair;
      readonly contractDigest: DigestPair | null;
      readonly by: string;
      readonly reason: string | null;
      readonly grantId: string | null;
      readonly at: number;
    } | null;
    readonly requested: readonly RequestedScope[];
  };
  /** The executor's decision: its reason code and the stored outcome. */
  readonly executor: {
    readonly ran: boolean;
    /** `approved` when the guard allowed a command; the refusal or outcome reason otherwise; null when it never ran. */
    readonly reason: string | null;
    readonly outcome: Outcome['kind'] | null;
    readonly message: string | null;
    readonly correlationId: string | null;
  };
  /** Every refusal recorded for this proposal (approval-time and execution-time), in order. */
  readonly refusals: readonly {
    readonly step: string;
    readonly reason: string | null;
    readonly actor: string;
    readonly attemptId: string | null;
    readonly at: number;
  }[];
  readonly attempts: readonly {
    readonly id: string;
    readonly number: number;
    readonly status: AttemptRecord['status'];
    readonly idempotencyKey: string;
    readonly commandId: string | null;
    readonly startedAt: number;
    readonly finishedAt: number | null;
  }[];
  readonly attemptIds: readonly string[];
  readonly commandIds: readonly string[];
  readonly audit: {
    readonly events: readonly IncidentEvent[];
    /** The tenant's whole chain, verified (with seals when a key was given). */
    readonly verification: AuditVerification;
  };
  readonly externalEffect: ExternalEffect;
  /** One plain sentence saying why. */
  readonly externalEffectStatement: string;
}

/** What to export. */
export interface ExportIncidentOptions {
  readonly proposalId: string;
  /** The proposal's tenant; when absent every tenant of the store is searched. */
  readonly tenant?: string;
  /** The server's seal key: the audit chain's seals are verified too. Never written to the bundle. */
  readonly sealKey?: string | Uint8Array;
  /** The application's operations: their redaction rules sanitize scopes and preview. */
  readonly operations?: readonly AnyOperation[];
  /** Milliseconds since the epoch for `exportedAt` (tests); default now. */
  readonly now?: number;
}

/** The bundle, or no such proposal. */
export type ExportIncidentResult =
  | { readonly kind: 'exported'; readonly bundle: IncidentBundle }
  | { readonly kind: 'not_found'; readonly message: string };

const EXPORT_PAGE = 5_000;

function pair(sha256: string): DigestPair {
  return { sha256, short: displayHash(sha256) };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Exports the incident handoff for one proposal: the sanitized proposed, viewed (preview),
 * approved and requested scopes with their versions and digests, the executor's reason, every
 * attempt and command id, the proposal's audit events with short hashes, the tenant's audit chain
 * verification, and a plain statement of whether an external effect occurred (`yes`, `no`, or
 * `unknown` while reconciliation is pending).
 *
 * @example
 * const result = await exportIncident(store, { proposalId: 'prp_…', operations: [payInvoice] });
 * if (result.kind === 'exported') writeFileSync('incident.json', JSON.stringify(result.bundle, null, 2));
 */
export async function exportIncident(
  store: Store,
  options: ExportIncidentOptions,
): Promise<ExportIncidentResult> {
  const record = await findProposal(store, options.proposalId, options.tenant);
  if (!record)
    return {
      kind: 'not_found',
      message: `no proposal ${options.proposalId}${options.tenant ? ` in tenant ${options.tenant}` : ''}`,
    };
  const { events, attempts } = await store.transaction(async (tx) => {
    // Every event, page by page: a bundle that dropped the events after a cap could miss the outcome.
    const all: AuditEvent[] = [];
    for (;;) {
      const page = await tx.listAudit(record.tenant, {
        proposalId: record.id,
        afterSeq: all[all.length - 1]?.seq ?? 0,
        limit: EXPORT_PAGE,
      });
      all.push(...page);
      if (page.length < EXPORT_PAGE) break;
    }
    return { events: all, attempts: await tx.listAttempts(record.tenant, record.id) };
  });
  const verification = await verifyAudit(store, {
    tenant: record.tenant,
    ...(options.sealKey ? { sealKey: options.sealKey } : {}),
  });
  const operation = options.operations?.find((o) => o.kind === record.operation);
  const rules: FieldRules | undefined = operation?.fields;
  const sanitize = (value: unknown): unknown => (rules ? redact(value, rules, '$') : value);
  const scope = parseJson(record.scopeJson);
  const preview = parseJson(record.previewJson);
  const approvedEvent = events.find((e) => e.step === 'approved');
  const requested = requestedScopes(events, record, sanitize(scope));
  const commandIds = unique([...attempts.map((a) => a.commandId), ...events.map((e) => e.commandId)]);
  const outcome = record.outcomeJson ? (parseJson(record.outcomeJson) as Outcome) : null;
  const effect = decideEffect(record, events, commandIds, outcome, operation?.effect);
  const bundle: IncidentBundle = {
    format: 'countersign.incident.v1',
    exportedAt: iso(options.now ?? Date.now()),
    proposal: {
      id: record.id,
      tenant: record.tenant,
      runId: record.runId,
      operation: record.operation,
      resource: record.resource,
      section: record.section,
      requestedBy: record.requestedBy,
      status: record.status,
      createdAt: iso(record.createdAt),
      expiresAt: iso(record.expiresAt),
      decidedBy: record.decidedBy,
      decidedAt: record.decidedAt === null ? null : iso(record.decidedAt),
      approvalKind: record.approvalKind,
      grantId: record.grantId,
      supersedes: record.supersedes,
      supersededBy: record.supersededBy,
      contractDigest: pair(record.digest),
    },
    redaction: operation
      ? {
          rules: 'operation',
          note: `scopes and preview redacted by the field rules of ${operation.kind}; digests cover the stored, unredacted values`,
        }
      : {
          rules: 'none',
          note: `operation ${record.operation} was not given to the export: scopes and preview are the stored canonical values, unredacted`,
        },
    scopes: {
      proposed: {
        scopeVersion: record.scopeVersion,
        scope: sanitize(scope),
        digest: pair(record.scopeDigest),
        recordedContractDigest: digestOf(
          events.find((e) => e.step === 'proposed' || e.step === 'edited')?.digests.proposed,
        ),
      },
      viewed: {
        viewVersion: record.viewVersion,
        preview: sanitize(preview),
        digest: pair(digest(preview).sha256),
        seenDigests: unique(events.map((e) => e.digests.seen)).map(pair),
      },
      approved: approvedEvent
        ? {
            scopeVersion: record.scopeVersion,
            scope: sanitize(scope),
            digest: pair(record.scopeDigest),
            contractDigest: digestOf(approvedEvent.digests.approved),
            by: approvedEvent.actor,
            reason: approvedEvent.reason,
            grantId:
              typeof approvedEvent.detail['grantId'] === 'string' ? approvedEvent.detail['grantId'] : null,
            at: approvedEvent.at,
          }
        : null,
      requested,
    },
    executor: executorOf(events, outcome),
    refusals: events
      .filter(
        (e) => e.step === 'denied' || e.step === 'replayed' || e.step === 'expired' || e.step === 'declined',
      )
      .map((e) => ({ step: e.step, reason: e.reason, actor: e.actor, attemptId: e.attemptId, at: e.at })),
    attempts: attempts.map((a) => ({
      id: a.id,
      number: a.number,
      status: a.status,
      idempotencyKey: a.idempotencyKey,
      commandId: a.commandId,
      startedAt: a.startedAt,
      finishedAt: a.finishedAt,
    })),
    attemptIds: unique([...attempts.map((a) => a.id), ...events.map((e) => e.attemptId)]),
    commandIds,
    audit: { events: events.map(withShortHashes), verification },
    externalEffect: effect.answer,
    externalEffectStatement: effect.statement,
  };
  return { kind: 'exported', bundle };
}

async function findProposal(
  store: Store,
  proposalId: string,
  tenant: string | undefined,
): Promise<ProposalRecord | undefined> {
  if (tenant !== undefined) return store.read((tx) => tx.getProposal(tenant, proposalId));
  // An operator holding the database looks across tenants: every proposal has a `proposed` event.
  const tenants = await store.read((tx) => tx.auditTenants());
  for (const t of tenants) {
    const record = await store.read((tx) => tx.getProposal(t, proposalId));
    if (record) return record;
  }
  return undefined;
}

function unique(values: readonly (string | null | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v.length > 0))];
}

function digestOf(sha256: string | undefined): DigestPair | null {
  return sha256 ? pair(sha256) : null;
}

function withShortHashes(event: AuditEvent): IncidentEvent {
  const short: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.digests)) short[k] = displayHash(v);
  return { ...event, short };
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function requestedScopes(
  events: readonly AuditEvent[],
  record: ProposalRecord,
  approvedScope: unknown,
): RequestedScope[] {
  const out: RequestedScope[] = [];
  for (const e of events) {
    // Execution-time refusals carry an attempt; approval-time ones (stale_view…) never built a requested scope.
    if (e.step !== 'command' && !(e.step === 'denied' && e.attemptId)) continue;
    const sha = e.digests.requested;
    const approvedScopeDigest =
      typeof e.detail['approvedScope'] === 'string' ? e.detail['approvedScope'] : record.scopeDigest;
    const equal = sha ? sha === approvedScopeDigest : null;
    out.push({
      source: e.step === 'command' ? 'command' : 'denied',
      attemptId: e.attemptId,
      commandId: e.commandId,
      at: e.at,
      digest: digestOf(sha),
      equalsApproved: equal,
      scope: equal ? approvedScope : null,
      reason: e.step === 'command' ? 'approved' : e.reason,
      diff: stringList(e.detail['diff']),
      issues: stringList(e.detail['issues']),
    });
  }
  return out;
}

function executorOf(events: readonly AuditEvent[], outcome: Outcome | null): IncidentBundle['executor'] {
  const ran = events.some((e) => e.step === 'claimed');
  const denial = [...events].reverse().find((e) => e.step === 'denied' && e.attemptId);
  const command = events.some((e) => e.step === 'command');
  const outcomeReason =
    outcome?.kind === 'terminal_failure'
      ? (outcome.reason ?? null)
      : outcome?.kind === 'revision_required'
        ? 'revision_required'
        : null;
  const reason = denial?.reason ?? outcomeReason ?? (command ? 'approved' : null);
  const message =
    outcome?.kind === 'terminal_failure'
      ? outcome.message
      : outcome?.kind === 'revision_required'
        ? outcome.reason
        : null;
  return {
    ran,
    reason: ran ? reason : null,
    outcome: outcome?.kind ?? null,
    message,
    correlationId: outcome?.kind === 'terminal_failure' ? outcome.correlationId : null,
  };
}

function decideEffect(
  record: ProposalRecord,
  events: readonly AuditEvent[],
  commandIds: readonly string[],
  outcome: Outcome | null,
  effect: 'local' | 'external' | undefined,
): { answer: ExternalEffect; statement: string } {
  const reconciled = [...events].reverse().find((e) => e.step === 'reconciled');
  const commands = commandIds.join(', ');
  if (reconciled) {
    const provider = reconciled.detail['provider'];
    if (provider === 'succeeded') {
      return {
        answer: 'yes',
        statement: `Reconciliation found attempt ${reconciled.attemptId} (command ${reconciled.commandId ?? commands}) at the provider: the external effect happened.`,
      };
    }
    if (provider === 'not_found') {
      return {
        answer: 'no',
        statement: `Reconciliation found no record of attempt ${reconciled.attemptId} at the provider: nothing happened downstream.`,
      };
    }
  }
  if (record.status === 'needs_reconciliation') {
    return {
      answer: 'unknown',
      statement: `Command ${commands || '(unrecorded)'} was sent but the provider's answer was lost; reconciliation is pending. Treat the effect as possible until the provider is asked.`,
    };
  }
  if (record.status === 'executing') {
    return {
      answer: 'unknown',
      statement: commandIds.length
        ? `Attempt ${record.currentAttempt} is still executing after command ${commands}; its outcome is not recorded yet.`
        : `Attempt ${record.currentAttempt} is still executing and has issued no command yet; export again when it finishes.`,
    };
  }
  if (commandIds.length === 0) {
    const why = noCommandReason(record, events, outcome, effect);
    return {
      answer: 'no',
      statement: `No command was ever issued for this proposal${why}, so nothing reached a downstream system.`,
    };
  }
  if (outcome?.kind === 'succeeded') {
    return {
      answer: 'yes',
      statement: `Command ${commands} succeeded: the ${effect ?? "operation's"} effect happened.`,
    };
  }
  if (outcome?.kind === 'terminal_failure') {
    return {
      answer: 'no',
      statement: `After command ${commands} the executor reported a definite failure (${outcome.message}): it states nothing happened.`,
    };
  }
  return {
    answer: 'unknown',
    statement: `Command ${commands} was issued and no outcome says what happened.`,
  };
}

function noCommandReason(
  record: ProposalRecord,
  events: readonly AuditEvent[],
  outcome: Outcome | null,
  effect: 'local' | 'external' | undefined,
): string {
  const denial = [...events].reverse().find((e) => e.step === 'denied' && e.attemptId);
  if (denial) return ` (the command guard refused the request as ${denial.reason})`;
  if (outcome?.kind === 'revision_required')
    return ' (revalidation required a new proposal before any command)';
  if (outcome?.kind === 'terminal_failure') {
    return effect === 'local'
      ? ' (the local effect failed and was rolled back with its transaction)'
      : ' (the executor failed before sending any command)';
  }
  switch (record.status) {
    case 'pending':
      return ' (it is still pending approval)';
    case 'declined':
    case 'expired':
    case 'superseded':
      return ` (it was ${record.status})`;
    default:
      return '';
  }
}

/** Replaces every value whose field pattern has a redactor with its redacted text (set members one by one). */
export function redact(value: unknown, rules: FieldRules, path: string): unknown {
  const rule = own(rules, fieldPattern(path));
  if (rule?.redact) {
    const redactor = rule.redact;
    return Array.isArray(value) && rule.set ? value.map((m) => redactor(m)) : redactor(value);
  }
  if (Array.isArray(value)) return value.map((item, i) => redact(item, rules, indexPath(path, i)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: redact(child, rules, childPath(path, key)),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
