import { writeFileSync } from 'node:fs';
import { DRAFTS_TABLE } from '../../../src/demo/demo-world.js';
import type { AuditEvent, Engine, Store } from '../../../src/index.js';
import type { AttemptRecord, ProposalRecord } from '../../../src/store/index.js';
import type { RawSql } from '../../support/backends.js';
import { type Kind, proposalInput, TENANT } from './world.js';

/** A proposal a suite made, with what its page showed. */
export interface Made {
  readonly id: string;
  readonly digest: string;
  readonly kind: Kind;
}

/** Proposes one proposal per entry of `kinds` (the i-th external one pays invoice `offset + i`). */
export async function proposeMany(
  engine: Engine,
  kinds: readonly Kind[],
  runId: string,
  offset = 0,
): Promise<Made[]> {
  const made: Made[] = [];
  for (const [i, kind] of kinds.entries()) {
    const result = await engine.proposals.propose(proposalInput(kind, offset + i, runId));
    if (result.kind !== 'proposed')
      throw new Error(`expected a proposal, got ${result.kind}: ${result.modelMessage}`);
    made.push({ id: result.proposal.id, digest: result.proposal.digest, kind });
  }
  return made;
}

/** Writes targets for a worker's `--proposals FILE`. */
export function writeTargets(path: string, made: readonly Made[]): string {
  writeFileSync(path, JSON.stringify(made.map(({ id, digest }) => ({ id, digest }))));
  return path;
}

/** Everything stored about one proposal. */
export interface Stored {
  readonly record: ProposalRecord;
  readonly attempts: AttemptRecord[];
  readonly events: AuditEvent[];
}

/** Reads a proposal, its attempts and its audit events straight from the store. */
export async function stored(store: Store, id: string): Promise<Stored> {
  return store.transaction(async (tx) => {
    const record = await tx.getProposal(TENANT, id);
    if (!record) throw new Error(`proposal ${id} is lost: it is not in the store`);
    return {
      record,
      attempts: await tx.listAttempts(TENANT, id),
      events: await tx.listAudit(TENANT, { proposalId: id, limit: 10_000 }),
    };
  });
}

/** Local draft rows written per proposal id (the local operation's effect). */
export async function draftRows(sql: RawSql): Promise<Map<string, number>> {
  const rows = new Map<string, number>();
  try {
    for (const row of await sql.all(
      `SELECT proposal_id, COUNT(*) AS n FROM ${DRAFTS_TABLE} GROUP BY proposal_id`,
    )) {
      rows.set(String(row['proposal_id']), Number(row['n']));
    }
  } catch (error) {
    // The table exists only once a local effect ran.
    if (!/no such table|does not exist/.test(String(error))) throw error;
  }
  return rows;
}

/** The `outcome` kinds a proposal's audit trail recorded, in order. */
export function outcomeSteps(events: readonly AuditEvent[]): string[] {
  return events.filter((e) => e.step === 'outcome').map((e) => String(e.detail['outcome']));
}
