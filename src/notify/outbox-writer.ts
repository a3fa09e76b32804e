import { randomBytes } from 'node:crypto';
import { redact } from '../ledger/incident-export.js';
import { canonicalize } from '../canonical/canonicalize.js';
import { shortHash } from '../canonical/digest.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import type { StepWriter } from '../engine/audit-step.js';
import type { AnyOperation } from '../operation/define-operation.js';
import { formatMoney } from '../operation/money.js';
import type { ProposalRecord, ProposalRouteRecord } from '../store/records.js';
import { type NotificationChannel, outboxOf } from '../store/sql-outbox.js';
import { checkDeliverySealKey, sealDelivery } from './delivery-seal.js';
import { asksForDecision, type LifecycleEvent, lifecycleEventOf } from './lifecycle-event.js';
import {
  approvalsAt,
  highImpactFields,
  type NotificationApprovals,
  type NotificationField,
} from './notification-facts.js';

/** An amount found in a preview: exact minor units, currency, and full-precision text. */
export interface NotificationAmount {
  readonly minor: number;
  readonly currency: string;
  readonly display: string;
}

/**
 * What every channel is told about one lifecycle event. Ids, status and hashes, the preview as the
 * operation's redaction rules show it, never arguments, scopes or secrets. The approval URL is
 * added at delivery from the server's public URL, so it is never stored.
 */
export interface NotificationPayload {
  readonly type: LifecycleEvent['type'];
  /** When the step happened (ISO 8601). */
  readonly timestamp: string;
  readonly data: {
    readonly eventId: string;
    readonly tenant: string;
    readonly proposalId: string;
    readonly runId: string;
    readonly operation: string;
    /** The status this event announces (`pending`, `approved`, …, `reconciled`). */
    readonly status: string;
    /** For `reconciled`: where the provider's answer settled it (`succeeded`, `terminal_failure`). */
    readonly resolution?: string;
    readonly reason: string | null;
    readonly actor: string;
    readonly requestedBy: string;
    /** The operator whose edit produced the proposal (they do not approve it), or null. */
    readonly editedBy: string | null;
    /**
     * The approval rule and where it stands: `{ required: 2, given: 1, approvers: [who], roles }`.
     * On `proposal.approval_given` it counts the approval just given (by `actor`); on an outcome,
     * `approvers` are who decided it.
     */
    readonly approvals: NotificationApprovals;
    readonly digest: string;
    readonly short: string;
    readonly title: string;
    readonly amount: NotificationAmount | null;
    /** The fields an approver must not miss (amount, destination, recipients…), redacted, as text. */
    readonly highImpact: readonly NotificationField[];
    readonly createdAt: string;
    readonly expiresAt: string;
    readonly supersedes: string | null;
    readonly supersededBy: string | null;
    readonly preview: unknown;
    /**
     * The route the proposal was given, or null when unrouted (every approver is notified). `group`
     * and `channel` are where this notification goes: the escalation's once it was escalated.
     */
    readonly route: NotificationRoute | null;
  };
}

/** Where a routed proposal's notification goes (see `engine.routes`). */
export interface NotificationRoute {
  readonly id: string;
  readonly name: string;
  readonly group: string;
  readonly channel: string | null;
  readonly escalated: boolean;
}

/** The route a notification names, from a proposal's recorded route (the escalation's once escalated). */
export function notificationRoute(route: ProposalRouteRecord | undefined): NotificationRoute | null {
  if (!route) return null;
  const escalated = route.escalatedAt !== null && route.escalationGroup !== null;
  return {
    id: route.routeId,
    name: route.routeName,
    group: escalated ? (route.escalationGroup ?? route.group) : route.group,
    channel: escalated ? route.escalationChannel : route.channel,
    escalated,
  };
}

/** What {@link notificationOutbox} writes. */
export interface OutboxWriterOptions {
  /**
   * The channels configured: one delivery per channel and event (email: `proposal.created` and
   * `proposal.approval_given` for the approvers who may decide, `proposal.outcome` for those who
   * approved).
   */
  readonly channels: readonly NotificationChannel[];
  /** The engine's operations: their field rules redact the preview. */
  readonly operations: readonly AnyOperation[];
  /**
   * The engine's seal key (32+ bytes): each delivery is sealed with it (see `sealDelivery`), and a
   * dispatcher given the same key sends no row without a valid seal. Without it rows are unsealed.
   */
  readonly sealKey?: string | Uint8Array;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first money value at the top of a preview (`{ minor, currency }`), if any. */
export function amountOf(preview: unknown): NotificationAmount | null {
  if (!isRecord(preview)) return null;
  for (const value of Object.values(preview)) {
    if (
      isRecord(value) &&
      Number.isSafeInteger(value['minor']) &&
      typeof value['currency'] === 'string' &&
      /^[A-Z]{3}$/.test(value['currency'])
    ) {
      const minor = value['minor'] as number;
      return { minor, currency: value['currency'], display: formatMoney(minor, value['currency']) };
    }
  }
  return null;
}

/** The one-line title of a (redacted) preview: its `title`, else `fallback` (the operation). */
export function titleOf(preview: unknown, fallback: string): string {
  return isRecord(preview) && typeof preview['title'] === 'string' && preview['title'].trim() !== ''
    ? preview['title']
    : fallback;
}

/** The payload of one event about one proposal (as stored after the step), with its approvals then. */
export function notificationPayload(
  event: { readonly id: string; readonly at: number; readonly actor: string; readonly reason: string | null },
  lifecycle: LifecycleEvent,
  record: ProposalRecord,
  operation: AnyOperation | undefined,
  approvals: NotificationApprovals,
  route: NotificationRoute | null = null,
): NotificationPayload {
  const stored = parseStoredJson(record.previewJson);
  const preview = operation ? redact(stored, operation.fields, '$') : stored;
  return {
    type: lifecycle.type,
    timestamp: new Date(event.at).toISOString(),
    data: {
      eventId: event.id,
      tenant: record.tenant,
      proposalId: record.id,
      runId: record.runId,
      operation: record.operation,
      status: lifecycle.status,
      ...(lifecycle.type === 'proposal.outcome' && lifecycle.resolution
        ? { resolution: lifecycle.resolution }
        : {}),
      reason: event.reason,
      actor: event.actor,
      requestedBy: record.requestedBy,
      editedBy: record.editedBy,
      approvals,
      digest: record.digest,
      short: shortHash(record.digest),
      title: titleOf(preview, record.operation),
      amount: amountOf(preview),
      highImpact: highImpactFields(preview, operation),
      createdAt: new Date(record.createdAt).toISOString(),
      expiresAt: new Date(record.expiresAt).toISOString(),
      supersedes: record.supersedes,
      supersededBy: record.supersededBy,
      preview,
      route,
    },
  };
}

/**
 * Which events are mailed: a new proposal, an approval toward a quorum, an escalation and a
 * reminder (to the approvers who may still decide it), and an outcome (to the people who approved it; none after a grant).
 */
function mailed(lifecycle: LifecycleEvent, approvals: NotificationApprovals): boolean {
  if (lifecycle.type === 'proposal.outcome') return approvals.approvers.length > 0;
  return asksForDecision(lifecycle.type);
}

/** A new delivery id. */
export function deliveryId(): string {
  return `dlv_${randomBytes(12).toString('hex')}`;
}

/**
 * The step writer that puts each lifecycle event into the notification outbox, in the transaction
 * of the step that caused it: committed with it, rolled back with it. Pass it to `createEngine`'s
 * `stepWriters`; a dispatcher delivers what it wrote. With `sealKey`, each row is sealed.
 *
 * @throws {ConfigurationError} when `sealKey` is shorter than 32 bytes.
 */
export function notificationOutbox(options: OutboxWriterOptions): StepWriter {
  const operations = new Map(options.operations.map((o) => [o.kind, o]));
  const channels = [...new Set(options.channels)];
  const { sealKey } = options;
  if (sealKey !== undefined) checkDeliverySealKey(sealKey);
  return async (tx, event, earlier) => {
    if (channels.length === 0) return;
    const lifecycle = lifecycleEventOf(event, earlier);
    if (!lifecycle) return;
    const record = await tx.getProposal(event.tenant, event.proposalId);
    if (!record) return;
    const approvals = await approvalsAt(tx, event, record, sealKey);
    const [route] = await tx.listProposalRoutes(record.tenant, [record.id]);
    const payloadJson = canonicalize(
      notificationPayload(
        event,
        lifecycle,
        record,
        operations.get(record.operation),
        approvals,
        notificationRoute(route),
      ),
    );
    // Inserts only: the claim's row locking does not apply here.
    const outbox = outboxOf(tx, {});
    for (const channel of channels) {
      if (channel === 'email' && !mailed(lifecycle, approvals)) continue;
      const sealed = {
        tenant: event.tenant,
        id: deliveryId(),
        eventId: event.id,
        channel,
        type: lifecycle.type,
        proposalId: event.proposalId,
        payloadJson,
        createdAt: event.at,
      };
      await outbox.insert({
        ...sealed,
        seal: sealKey === undefined ? null : sealDelivery(sealed, sealKey),
        status: 'pending',
        attempts: 0,
        nextAt: event.at,
        leaseUntil: null,
        leaseOwner: null,
        lastError: null,
        lastAttemptAt: null,
        deliveredAt: null,
        retryFrom: event.at,
      });
    }
  };
}
