import type { AuditDigests } from '../../../audit/event.js';
import { displayHash, isSha256Hex } from '../../../canonical/digest.js';

/** One digest as a reviewer reads it: what it is, its short hash, and whether it is a digest at all. */
export interface ShownHash {
  /** e.g. `contract`, `approved scope`, `requested scope`, `seen contract`. */
  readonly label: string;
  readonly short: string;
  /** False when the stored value is not a SHA-256 digest (it shows as `invalid:…`). */
  readonly valid: boolean;
}

/**
 * What one audit event says about digests, like compared with like: a contract digest on its own,
 * or two digests of the same kind side by side and whether they are equal.
 */
export type HashFact =
  | { readonly kind: 'single'; readonly hash: ShownHash }
  | {
      readonly kind: 'compare';
      readonly left: ShownHash;
      readonly right: ShownHash;
      /** Both are valid digests and the same one. */
      readonly equal: boolean;
    };

function shown(label: string, value: unknown): ShownHash {
  return { label, short: displayHash(value), valid: isSha256Hex(value) };
}

function compare(left: ShownHash, right: ShownHash, a: unknown, b: unknown): HashFact {
  return { kind: 'compare', left, right, equal: left.valid && right.valid && a === b };
}

/**
 * The digest facts of one audit event. In every event `proposed`, `seen` and `approved` are
 * contract digests (what a human approves) and `requested` is the scope digest the command guard
 * rebuilt from the real downstream request, so:
 * - the requested scope is compared with the approved scope (the event's `approvedScope` detail,
 *   else `approvedScope` given: the proposal's own scope digest), never with the contract;
 * - the digest an approver saw is compared with the proposal's contract;
 * - the contract digest is shown once, on its own (twice only if an event names two different ones).
 */
export function eventHashFacts(
  digests: AuditDigests,
  detail: Readonly<Record<string, unknown>>,
  approvedScope?: string,
): HashFact[] {
  const facts: HashFact[] = [];
  const d = digests as Readonly<Record<string, unknown>>;
  const has = (key: keyof AuditDigests) => Object.hasOwn(d, key) && d[key] !== undefined;
  const contracts = [...new Set((['proposed', 'approved'] as const).filter(has).map((k) => d[k]))];
  const contract = contracts[0];
  if (has('seen')) {
    facts.push(
      contract === undefined
        ? { kind: 'single', hash: shown('seen contract', d['seen']) }
        : compare(shown('seen contract', d['seen']), shown('contract', contract), d['seen'], contract),
    );
    for (const other of contracts.slice(1)) facts.push({ kind: 'single', hash: shown('contract', other) });
  } else {
    for (const c of contracts) facts.push({ kind: 'single', hash: shown('contract', c) });
  }
  if (has('requested')) {
    const fromDetail = Object.hasOwn(detail, 'approvedScope') ? detail['approvedScope'] : undefined;
    const approved = fromDetail ?? approvedScope;
    facts.push(
      approved === undefined
        ? { kind: 'single', hash: shown('requested scope', d['requested']) }
        : compare(
            shown('approved scope', approved),
            shown('requested scope', d['requested']),
            approved,
            d['requested'],
          ),
    );
  }
  return facts;
}
