import { shortHash } from '../canonical/digest.js';
import { type DeepReadonly, freeze } from '../canonical/freeze.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import type { ProposalRecord } from '../store/records.js';
import type { LeaseClock } from './attempt-lease.js';
import type { ContractOf } from './operation-types.js';

/**
 * What a claimed attempt may execute: exactly the frozen, approved arguments (`Args`: as read,
 * deep read-only; {@link ContractOf} gives a typed engine's).
 */
export interface ExecutionContract<Kind extends string = string, Args = DeepReadonly<unknown>> {
  readonly tenant: string;
  readonly proposalId: string;
  readonly runId: string;
  readonly operation: Kind;
  readonly scopeVersion: number;
  readonly attemptId: string;
  readonly attemptNumber: number;
  readonly idempotencyKey: string;
  readonly digest: string;
  readonly short: string;
  readonly scopeDigest: string;
  readonly arguments: Args;
  readonly scope: DeepReadonly<unknown>;
}

/**
 * A stored proposal's arguments and scope as read by an approval whose integrity checks proved
 * both texts canonical: deep-frozen reads of exactly what is stored.
 */
export interface VerifiedParts {
  readonly arguments: DeepReadonly<unknown>;
  readonly scope: DeepReadonly<unknown>;
}

// The contracts this process claimed from verified records, with the arguments text they were
// read from: executing one of them needs no second parse of what the claim just checked.
const verifiedContracts = new WeakMap<ExecutionContract, string>();

/**
 * The stored arguments text a contract was claimed from, when this process claimed it after the
 * integrity checks (its `arguments` are then exactly that text, read and frozen); else undefined.
 */
export function verifiedArgumentsOf(contract: ExecutionContract): string | undefined {
  return verifiedContracts.get(contract);
}

/** The proposal row as a claim in this process wrote it, and when that claim's lease began. */
export interface ClaimedRecord {
  readonly record: ProposalRecord;
  readonly lease: LeaseClock;
}

// The contracts this process claimed, with the row as the claim's compare-and-set left it: an
// external execution starts from it instead of reading back the row its own claim just wrote.
const claimedRecords = new WeakMap<ExecutionContract, ClaimedRecord>();

/** The row a contract's claim wrote in this process (see {@link contractOf}), else undefined. */
export function claimedRecordOf(contract: ExecutionContract): ClaimedRecord | undefined {
  return claimedRecords.get(contract);
}

/** One attempt of a proposal: its id, its number and the idempotency key derived from both. */
export interface AttemptIdentity {
  readonly id: string;
  readonly number: number;
  readonly idempotencyKey: string;
}

/**
 * The execution contract of one attempt: exactly the stored, frozen arguments. `claimed` is the
 * row as this process's claim wrote it (the claim's own compare-and-set), kept for the execution.
 */
export function contractOf(
  record: ProposalRecord,
  attempt: AttemptIdentity,
  verified?: VerifiedParts,
  claimed?: ClaimedRecord,
): ExecutionContract {
  const contract: ExecutionContract = Object.freeze({
    tenant: record.tenant,
    proposalId: record.id,
    runId: record.runId,
    operation: record.operation,
    scopeVersion: record.scopeVersion,
    attemptId: attempt.id,
    attemptNumber: attempt.number,
    idempotencyKey: attempt.idempotencyKey,
    digest: record.digest,
    short: shortHash(record.digest),
    scopeDigest: record.scopeDigest,
    arguments: verified ? verified.arguments : freeze<unknown>(parseStoredJson(record.argumentsJson)),
    scope: verified ? verified.scope : freeze<unknown>(parseStoredJson(record.scopeJson)),
  });
  if (verified) verifiedContracts.set(contract, record.argumentsJson);
  if (claimed) claimedRecords.set(contract, claimed);
  return contract;
}
