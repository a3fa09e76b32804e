import { timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/store.js';
import { auditChainer, eventLeafHash, GENESIS, linkHash, sealChainHash } from '../audit/chain.js';
import type { AuditEvent, ChainHead } from '../audit/event.js';

/** Why an event failed verification. */
export type AuditProblem =
  | 'leaf_mismatch'
  | 'chain_mismatch'
  | 'sequence_gap'
  | 'seal_mismatch'
  | 'seal_missing'
  | 'head_mismatch'
  | 'behind_checkpoint'
  | 'duplicate_event';

/** The result of verifying one tenant's chain (or all of them). */
export type AuditVerification =
  | {
      readonly kind: 'intact';
      readonly tenants: number;
      readonly events: number;
      /** Events committed but not yet chained (see `src/ledger/`), when there are any: normally none between requests. */
      readonly queued?: number;
    }
  | {
      readonly kind: 'broken';
      readonly tenant: string;
      /** The first bad event's sequence number (or the expected one, for a gap). */
      readonly seq: number;
      readonly eventId: string | null;
      readonly problem: AuditProblem;
      readonly message: string;
    };

function sealsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/**
 * Checks a sequence of one tenant's events, in order: every leaf hash recomputed from the
 * event's fields, every link to the previous event, no sequence gaps, every seal when a key is
 * given. Reports the first bad event.
 */
export function verifyEvents(
  tenant: string,
  events: Iterable<AuditEvent>,
  options: { readonly sealKey?: string | Uint8Array; readonly from?: ChainHead } = {},
): AuditVerification & { readonly head?: ChainHead } {
  let previous = options.from?.chainHash ?? GENESIS;
  let expectedSeq = (options.from?.seq ?? 0) + 1;
  let count = 0;
  for (const event of events) {
    const broken = (problem: AuditProblem, message: string) =>
      ({ kind: 'broken', tenant, seq: event.seq, eventId: event.id, problem, message }) as const;
    if (event.seq !== expectedSeq) {
      return {
        kind: 'broken',
        tenant,
        seq: expectedSeq,
        eventId: event.id,
        problem: 'sequence_gap',
        message: `expected event #${expectedSeq}, found #${event.seq} (${event.id})`,
      };
    }
    if (eventLeafHash(event) !== event.leafHash)
      return broken('leaf_mismatch', `event #${event.seq} (${event.id}) was changed`);
    const link = linkHash(previous, event.leafHash);
    if (link !== event.chainHash)
      return broken('chain_mismatch', `event #${event.seq} (${event.id}) does not follow its predecessor`);
    if (options.sealKey) {
      if (!event.seal) return broken('seal_missing', `event #${event.seq} (${event.id}) has no seal`);
      if (!sealsEqual(event.seal, sealChainHash(event.chainHash, options.sealKey))) {
        return broken(
          'seal_mismatch',
          `event #${event.seq} (${event.id}) has a seal the server key did not make`,
        );
      }
    }
    previous = event.chainHash;
    expectedSeq++;
    count++;
  }
  return { kind: 'intact', tenants: 1, events: count, head: { seq: expectedSeq - 1, chainHash: previous } };
}

/**
 * Verifies every tenant's audit chain in a store, including that the stored head matches the last
 * event (a deleted tail is caught when the head survives; against a head kept elsewhere, use
 * `checkpoint`).
 */
export async function verifyAudit(
  store: Store,
  options: {
    readonly sealKey?: string | Uint8Array;
    readonly tenant?: string;
    readonly checkpoint?: ChainHead & { readonly tenant: string };
  } = {},
): Promise<AuditVerification> {
  const tenants = options.tenant ? [options.tenant] : await store.read((tx) => tx.auditTenants());
  const chainer = auditChainer(options.sealKey);
  let events = 0;
  let queued = 0;
  for (const tenant of tenants) {
    const all: AuditEvent[] = [];
    await store.read(async (tx) => {
      let afterSeq = 0;
      for (;;) {
        const page = await tx.listAudit(tenant, { afterSeq, limit: 5_000 });
        all.push(...page);
        if (page.length < 5_000) break;
        afterSeq = page[page.length - 1]!.seq;
      }
    });
    const result = verifyEvents(tenant, all, options.sealKey ? { sealKey: options.sealKey } : {});
    if (result.kind === 'broken') return result;
    // Every event is chained once: a second event with the same id is a replayed copy (the store's
    // unique index refuses one, unless whoever inserted it dropped the index first).
    const chainedAt = new Map<string, number>();
    for (const event of all) {
      const first = chainedAt.get(event.id);
      if (first !== undefined) {
        return {
          kind: 'broken',
          tenant,
          seq: event.seq,
          eventId: event.id,
          problem: 'duplicate_event',
          message: `event #${event.seq} repeats event #${first} (${event.id}): it was chained twice`,
        };
      }
      chainedAt.set(event.id, event.seq);
    }
    const head = await store.read((tx) => tx.auditHead(tenant));
    const last = all[all.length - 1];
    if (head && (head.seq !== (last?.seq ?? 0) || head.chainHash !== (last?.chainHash ?? GENESIS))) {
      return {
        kind: 'broken',
        tenant,
        seq: (last?.seq ?? 0) + 1,
        eventId: null,
        problem: 'head_mismatch',
        message: `the chain head says #${head.seq} but the last event is #${last?.seq ?? 0}: events were removed or added`,
      };
    }
    // The head is written in the same commit as the events it ends: events without one mean it was
    // removed (every append of the tenant is then refused, corrupt_audit_chain, until it is back).
    if (!head && last) {
      return {
        kind: 'broken',
        tenant,
        seq: last.seq + 1,
        eventId: null,
        problem: 'head_mismatch',
        message: `no chain head is stored but the last event is #${last.seq}: the head was removed`,
      };
    }
    const cp = options.checkpoint;
    if (cp && cp.tenant === tenant) {
      const at = all.find((e) => e.seq === cp.seq);
      if (!at || at.chainHash !== cp.chainHash) {
        return {
          kind: 'broken',
          tenant,
          seq: cp.seq,
          eventId: at?.id ?? null,
          problem: 'behind_checkpoint',
          message: `checkpoint #${cp.seq} is not in the chain: it was truncated or rewritten`,
        };
      }
    }
    const waiting = await store.read((tx) => tx.listQueuedAudit(tenant, 100_000));
    const forged = options.sealKey ? waiting.find((q) => !chainer.acceptsQueued(q.event, q.seal)) : undefined;
    if (forged) {
      return {
        kind: 'broken',
        tenant,
        seq: (last?.seq ?? 0) + 1,
        eventId: forged.event.id,
        problem: forged.seal ? 'seal_mismatch' : 'seal_missing',
        message: `queued event ${forged.event.id} (not yet chained) ${forged.seal ? 'has a seal the server key did not make' : 'has no seal'}: it was not written by the server`,
      };
    }
    const replayed = waiting.find((q) => chainedAt.has(q.event.id));
    if (replayed) {
      return {
        kind: 'broken',
        tenant,
        seq: (last?.seq ?? 0) + 1,
        eventId: replayed.event.id,
        problem: 'duplicate_event',
        message: `queued event ${replayed.event.id} (not yet chained) copies event #${chainedAt.get(replayed.event.id)}, already chained: it was inserted again by hand`,
      };
    }
    events += all.length;
    queued += waiting.length;
  }
  return { kind: 'intact', tenants: tenants.length, events, ...(queued > 0 ? { queued } : {}) };
}
