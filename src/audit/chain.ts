import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalize, canonicalString, DEFAULT_MAX_DEPTH } from '../canonical/canonicalize.js';
import { sha256Hex } from '../canonical/digest.js';
import type { AuditEvent, AuditEventDraft, ChainHead, QueuedAuditEvent } from './event.js';

// Leaf and node hashes are domain-separated as in Certificate Transparency (RFC 6962): a leaf is
// hashed with a 0x00 prefix, a chain link with 0x01, so no event can pose as a link or vice versa.
const NODE = Buffer.from([0x01]);
// A queued event's seal covers its body under a third prefix, so it can pose as neither.
const QUEUED = Buffer.from([0x02]);
/** The chain hash before a tenant's first event. */
export const GENESIS = '0'.repeat(64);

type EventBodyFields = AuditEventDraft & { readonly id: string; readonly seq: number };

/** The keys of an {@link eventBody}: one list for the body and for its canonical form. */
const BODY_KEYS = [
  'id',
  'seq',
  'tenant',
  'proposalId',
  'attemptId',
  'runId',
  'step',
  'actor',
  'reason',
  'digests',
  'commandId',
  'detail',
  'at',
] as const satisfies readonly (keyof EventBodyFields)[];

/** The fields of an event that its leaf hash covers (everything but the hashes themselves). */
export function eventBody(event: EventBodyFields): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of BODY_KEYS) body[key] = event[key];
  return body;
}

// The members of an event body in canonical (UTF-16 code unit) order, each with its `"key":` text.
const BODY_MEMBERS = [...BODY_KEYS]
  .sort()
  .map((key, i) => ({ key, prefix: `${i === 0 ? '{' : ','}${JSON.stringify(key)}:` }));

const NESTED = { maxDepth: DEFAULT_MAX_DEPTH - 1 };

/**
 * The canonical JSON of {@link eventBody}, written member by member: its keys are fixed, so only
 * `digests` and `detail` go through {@link canonicalize}. `undefined` for anything but the types an
 * event holds (the caller then canonicalizes the generic way, which refuses it with its reason).
 */
function canonicalEventBody(event: EventBodyFields): string | undefined {
  let out = '';
  for (const { key, prefix } of BODY_MEMBERS) {
    const value: unknown = event[key];
    let text: string | undefined;
    if (typeof value === 'string') text = canonicalString(value);
    else if (typeof value === 'number') text = value - value === 0 ? `${value}` : undefined;
    else if (value === null) text = 'null';
    else if (typeof value === 'object') text = nestedText(value);
    if (text === undefined) return undefined;
    out += prefix + text;
  }
  return `${out}}`;
}

/** A member's canonical JSON one level below the body (the body's depth limit), or undefined. */
function nestedText(value: object): string | undefined {
  try {
    return canonicalize(value, NESTED);
  } catch {
    // Refused again by the generic path, whose error names the member's path within the body.
    return undefined;
  }
}

/** The leaf hash of an event: {@link leafHash} of its {@link eventBody}, without building the body. */
export function eventLeafHash(event: EventBodyFields): string {
  const text = canonicalEventBody(event);
  return text === undefined ? leafHash(eventBody(event)) : sha256Hex(`\u0000${text}`);
}

/** SHA-256 of 0x00 ‖ canonical event body. */
export function leafHash(body: Record<string, unknown>): string {
  // Canonical text is well-formed UTF-16, so '\0' + text is exactly the bytes 0x00 ‖ UTF-8(text).
  return sha256Hex(`\u0000${canonicalize(body)}`);
}

/** SHA-256 of 0x01 ‖ previous chain hash ‖ leaf hash (both as raw bytes). */
export function linkHash(previous: string, leaf: string): string {
  if (previous.length === 64 && leaf.length === 64) {
    // One buffer and a one-shot hash; `write` decodes hex exactly as Buffer.from does.
    const bytes = Buffer.allocUnsafe(65);
    bytes[0] = 0x01;
    const first = bytes.write(previous, 1, 'hex');
    const second = bytes.write(leaf, 1 + first, 'hex');
    return sha256Hex(bytes.subarray(0, 1 + first + second));
  }
  return createHash('sha256')
    .update(NODE)
    .update(Buffer.from(previous, 'hex'))
    .update(Buffer.from(leaf, 'hex'))
    .digest('hex');
}

/** HMAC-SHA-256 of a chain hash with the server key. */
export function sealChainHash(chainHash: string, key: string | Uint8Array): string {
  return createHmac('sha256', key).update(Buffer.from(chainHash, 'hex')).digest('hex');
}

/** Links a draft to the head of its tenant's chain. */
export function chainEvent(
  head: ChainHead | undefined,
  draft: AuditEventDraft,
  id: string,
  sealKey: string | Uint8Array | undefined,
): AuditEvent {
  const seq = (head?.seq ?? 0) + 1;
  // Built member by member: in V8 an object spread followed by more members costs microseconds.
  const event = {
    tenant: draft.tenant,
    proposalId: draft.proposalId,
    attemptId: draft.attemptId,
    runId: draft.runId,
    step: draft.step,
    actor: draft.actor,
    reason: draft.reason,
    digests: draft.digests,
    commandId: draft.commandId,
    detail: draft.detail,
    at: draft.at,
    id,
    seq,
    leafHash: '',
    chainHash: '',
    seal: null as string | null,
  };
  event.leafHash = eventLeafHash(event);
  event.chainHash = linkHash(head?.chainHash ?? GENESIS, event.leafHash);
  if (sealKey) event.seal = sealChainHash(event.chainHash, sealKey);
  return event;
}

/**
 * How a store links events to a tenant's chain: the engine's seal key in one object, so a store can
 * chain events another process queued (see `Store`), and refuse queued rows the key did not seal.
 */
export interface AuditChainer {
  /** Links an event to the head of its tenant's chain: sequence, leaf and chain hash, seal. */
  link(head: ChainHead | undefined, event: QueuedAuditEvent): AuditEvent;
  /** The keyed seal of an event waiting to be chained; null without a key. */
  queueSeal(event: QueuedAuditEvent): string | null;
  /** Whether a queued event carries the seal the key makes (always true without a key). */
  acceptsQueued(event: QueuedAuditEvent, seal: string | null): boolean;
}

/** The {@link AuditChainer} of a seal key (or of none: events unsealed, every queued event accepted). */
export function auditChainer(sealKey: string | Uint8Array | undefined): AuditChainer {
  const queueSeal = (event: QueuedAuditEvent): string | null => {
    if (!sealKey) return null;
    const { seq: _, ...body } = eventBody({ ...event, seq: 0 });
    return createHmac('sha256', sealKey).update(QUEUED).update(canonicalize(body)).digest('hex');
  };
  return {
    link: (head, event) => chainEvent(head, event, event.id, sealKey),
    queueSeal,
    acceptsQueued: (event, seal) => {
      const expected = queueSeal(event);
      if (expected === null) return true;
      return (
        seal !== null &&
        seal.length === expected.length &&
        timingSafeEqual(Buffer.from(seal), Buffer.from(expected))
      );
    },
  };
}
