import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { createEngine } from '../../src/index.js';
import { parseJson } from '../../src/canonical/index.js';
import { decodeProposalRecord, StoredFormatError } from '../../src/store/proposal-format.js';
import type { ProposalRecord } from '../../src/store/records.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { approver, ManualClock } from '../support/engine.js';

const FIXTURES = join(import.meta.dirname, '../fixtures');
const read = (path: string) => parseJson(readFileSync(path, 'utf8'));

async function approveStored(record: ProposalRecord) {
  const store = new SqliteStore({ path: ':memory:' });
  const engine = await createEngine({
    store,
    operations: demoOperations(demoWorld()),
    clock: new ManualClock(record.createdAt),
  });
  await store.transaction((tx) => tx.insertProposal(record));
  const result = await engine.proposals.approveAndExecute({
    tenant: record.tenant,
    proposalId: record.id,
    approver: approver(record.tenant),
    seenDigest: record.digest,
  });
  await engine.close();
  return result;
}

describe('stored proposal format 1 (fixture kept forever)', () => {
  it('decodes, and its digest still verifies: it is approved and executed as it was', async () => {
    const record = decodeProposalRecord(read(join(FIXTURES, 'proposal-format-v1.json')));
    const result = await approveStored(record);
    expect(result.kind === 'completed' && result.outcome.kind).toBe('succeeded');
  });
});

describe('stored proposal format 2 (fixture kept forever): section, proposer and editor bound', () => {
  it('decodes, and its digest still verifies: it is approved and executed as it was', async () => {
    const record = decodeProposalRecord(read(join(FIXTURES, 'proposal-format-v2.json')));
    expect(record).toMatchObject({ formatVersion: 2, section: 'payables', editedBy: null });
    const result = await approveStored(record);
    expect(result.kind === 'completed' && result.outcome.kind).toBe('succeeded');
  });

  it('the same record with another section is never approved: corrupt_approval_record', async () => {
    const record = decodeProposalRecord(read(join(FIXTURES, 'proposal-format-v2.json')));
    const result = await approveStored({ ...record, section: 'treasury' });
    expect(result).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
  });

  it('a format-1 record does not carry an editor', () => {
    const raw = read(join(FIXTURES, 'proposal-format-v1.json')) as Record<string, unknown>;
    expect(decodeProposalRecord(raw).editedBy).toBeNull();
    expect(() => decodeProposalRecord({ ...raw, editedBy: 'user:ada@acme.test' })).toThrow(StoredFormatError);
  });
});

describe('stored proposal format 3 (fixture kept forever): the approval policy is frozen and bound', () => {
  const v3 = () => decodeProposalRecord(read(join(FIXTURES, 'proposal-format-v3.json')));

  it('decodes, verifies, waits at 1 of 2, and the second approver executes it as it was', async () => {
    const record = v3();
    expect(record).toMatchObject({ formatVersion: 3, policyJson: '{"required":2,"roles":[]}' });
    const store = new SqliteStore({ path: ':memory:' });
    const engine = await createEngine({
      store,
      operations: demoOperations(demoWorld()),
      clock: new ManualClock(record.createdAt),
    });
    await store.transaction((tx) => tx.insertProposal(record));
    const approve = (name: string) =>
      engine.proposals.approveAndExecute({
        tenant: record.tenant,
        proposalId: record.id,
        approver: approver(record.tenant, name),
        seenDigest: record.digest,
      });
    expect(await approve('ada')).toMatchObject({ kind: 'awaiting_approvals', required: 2 });
    const second = await approve('bob');
    await engine.close();
    expect(second.kind === 'completed' && second.outcome.kind).toBe('succeeded');
  });

  it('the same record with a lowered quorum is never approved: corrupt_approval_record', async () => {
    const result = await approveStored({ ...v3(), policyJson: '{"required":1,"roles":[]}' });
    expect(result).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
  });

  it('format 3 needs its policy; formats 1 and 2 never carry one (null columns are set aside)', () => {
    const raw = read(join(FIXTURES, 'proposal-format-v3.json')) as Record<string, unknown>;
    expect(() => decodeProposalRecord({ ...raw, policyJson: null })).toThrow(StoredFormatError);
    expect(() => decodeProposalRecord({ ...raw, policyJson: '{"required":0,"roles":[]}' })).toThrow(
      StoredFormatError,
    );
    const v2 = read(join(FIXTURES, 'proposal-format-v2.json')) as Record<string, unknown>;
    expect(decodeProposalRecord({ ...v2, policyJson: null }).policyJson).toBeNull();
    expect(() => decodeProposalRecord({ ...v2, policyJson: '{"required":2,"roles":[]}' })).toThrow(
      StoredFormatError,
    );
  });
});

describe('invalid stored records are refused', () => {
  const decodeFailures = [
    'unknown-format-version.json',
    'missing-scope-digest.json',
    'extra-field.json',
    'string-scope-version.json',
  ];
  it('every invalid fixture is accounted for', () => {
    expect(readdirSync(join(FIXTURES, 'invalid')).sort()).toEqual(
      [...decodeFailures, 'tampered-arguments.json'].sort(),
    );
  });

  it.each(decodeFailures)('%s fails to decode with the field named', (name) => {
    expect(() => decodeProposalRecord(read(join(FIXTURES, 'invalid', name)))).toThrow(StoredFormatError);
  });

  it('a tampered argument decodes but is never approved: corrupt_approval_record', async () => {
    const record = decodeProposalRecord(read(join(FIXTURES, 'invalid', 'tampered-arguments.json')));
    const result = await approveStored(record);
    expect(result).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
  });
});
