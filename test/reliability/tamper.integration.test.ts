import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventBody, leafHash, linkHash } from '../../src/audit/chain.js';
import type { AuditEvent } from '../../src/audit/event.js';
import { runCli } from '../../src/cli/run-cli.js';
import { contractDigest } from '../../src/engine/proposal.js';
import {
  type AuditVerification,
  createEngine,
  digest,
  type Engine,
  type Store,
  verifyAudit,
} from '../../src/index.js';
import { canonicalize, parseJson } from '../../src/canonical/index.js';
import { auditFromRow } from '../../src/store/sql-audit.js';
import { AUDIT_COLUMNS } from '../../src/store/sql-columns.js';
import {
  BACKENDS,
  type Backend,
  createBackend,
  EMBEDDED_POSTGRES,
  type RawSql,
} from '../support/backends.js';
import { proposeMany } from './support/inspect.js';
import { reportFigure } from './support/report.js';
import { LARGE, SIZES } from './support/sizes.js';
import {
  operator,
  proposalInput,
  reliabilityOperations,
  reliabilityWorld,
  TENANT,
  RELIABILITY_LIMITS,
} from './support/world.js';

const SEAL_KEY = 'reliability-suite-seal-key-0123456789abcdef';
const EVENTS = 1_000;
const BASE_TIMEOUT = LARGE ? 30 * 60_000 : 180_000;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COLUMNS = AUDIT_COLUMNS.map(([, column]) => column);

type Row = Record<string, unknown>;

/** One change to one stored value, and how to put it back. */
interface Mutation {
  readonly label: string;
  readonly column: string;
  readonly value: unknown;
}

/** A verification that did not throw, or the exception it threw. */
type Checked = AuditVerification | { readonly kind: 'threw'; readonly message: string };

async function check(store: Store, sealKey?: string): Promise<Checked> {
  try {
    return await verifyAudit(store, sealKey ? { sealKey } : {});
  } catch (error) {
    return {
      kind: 'threw',
      message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
}

function flipHex(value: string): string {
  const last = value.at(-1);
  return value.slice(0, -1) + (last === '0' ? '1' : '0');
}

/** Every change of one row that must be detected: each covered column changed, nullable ones also emptied. */
function mutationsOf(row: Row): Mutation[] {
  const text = (column: string) => String(row[column]);
  const digests = parseJson(text('digests_json')) as Record<string, string>;
  const firstDigest = Object.keys(digests)[0];
  const changedDigests = firstDigest
    ? { ...digests, [firstDigest]: flipHex(digests[firstDigest]!) }
    : { seen: '0'.repeat(64) };
  const out: Mutation[] = [
    { label: 'tenant moved', column: 'tenant', value: `${TENANT}-moved` },
    { label: 'seq renumbered', column: 'seq', value: Number(row['seq']) + 1_000_000 },
    { label: 'id changed', column: 'id', value: `${text('id')}x` },
    { label: 'proposal id changed', column: 'proposal_id', value: `${text('proposal_id')}x` },
    {
      label: 'attempt id changed',
      column: 'attempt_id',
      value: row['attempt_id'] === null ? 'att_forged' : `${text('attempt_id')}x`,
    },
    { label: 'run id changed', column: 'run_id', value: `${text('run_id')}x` },
    { label: 'step changed', column: 'step', value: row['step'] === 'outcome' ? 'command' : 'outcome' },
    { label: 'actor changed', column: 'actor', value: 'user:mallory@acme.test' },
    {
      label: 'reason changed',
      column: 'reason',
      value: row['reason'] === 'approved' ? 'approved_by_grant' : 'approved',
    },
    { label: 'digest changed', column: 'digests_json', value: JSON.stringify(changedDigests) },
    {
      label: 'command id changed',
      column: 'command_id',
      value: row['command_id'] === null ? 'cmd_forged' : `${text('command_id')}x`,
    },
    {
      label: 'detail changed',
      column: 'detail_json',
      value: JSON.stringify({ ...(parseJson(text('detail_json')) as object), forged: true }),
    },
    { label: 'time changed', column: 'at', value: Number(row['at']) + 1 },
    { label: 'leaf hash changed', column: 'leaf_hash', value: flipHex(text('leaf_hash')) },
    { label: 'chain hash changed', column: 'chain_hash', value: flipHex(text('chain_hash')) },
  ];
  for (const column of ['attempt_id', 'reason', 'command_id'])
    if (row[column] !== null) out.push({ label: `${column} emptied`, column, value: null });
  return out;
}

function keyOf(m: Mutation, row: Row): { tenant: unknown; seq: unknown } {
  return {
    tenant: m.column === 'tenant' ? m.value : row['tenant'],
    seq: m.column === 'seq' ? m.value : row['seq'],
  };
}

async function setColumn(
  sql: RawSql,
  where: { tenant: unknown; seq: unknown },
  column: string,
  value: unknown,
): Promise<void> {
  const changed = await sql.run(
    `UPDATE countersign_audit_events SET ${column} = ? WHERE tenant = ? AND seq = ?`,
    [value, where.tenant, where.seq],
  );
  if (changed !== 1) throw new Error(`tampering missed its row: ${column} at ${String(where.seq)}`);
}

async function insertRow(sql: RawSql, row: Row): Promise<void> {
  await sql.run(
    `INSERT INTO countersign_audit_events (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
    COLUMNS.map((c) => row[c]),
  );
}

async function deleteRow(sql: RawSql, seq: unknown): Promise<void> {
  await sql.run('DELETE FROM countersign_audit_events WHERE tenant = ? AND seq = ?', [TENANT, seq]);
}

/** Renumbers every event from `from` on by `by`, through negative numbers so no two rows ever share a key. */
async function shift(sql: RawSql, from: number, by: number): Promise<void> {
  await sql.run('UPDATE countersign_audit_events SET seq = -(seq + ?) WHERE tenant = ? AND seq >= ?', [
    by,
    TENANT,
    from,
  ]);
  await sql.run('UPDATE countersign_audit_events SET seq = -seq WHERE tenant = ? AND seq < 0', [TENANT]);
}

async function rows(sql: RawSql): Promise<Row[]> {
  return sql.all('SELECT * FROM countersign_audit_events WHERE tenant = ? ORDER BY seq', [TENANT]);
}

/** Indices of the rows to tamper with: all of them in the large run, else first, last and evenly spaced. */
function sample(count: number, wanted: number): number[] {
  if (wanted >= count) return Array.from({ length: count }, (_, i) => i);
  const picked = new Set<number>([0, count - 1]);
  for (let i = 1; picked.size < wanted; i++) picked.add(Math.floor((i * count) / wanted) % count);
  return [...picked].sort((a, b) => a - b);
}

/**
 * Fills the audit log of {@link TENANT} with real lifecycle events (payments proposed, approved,
 * executed; declines; replays; edits) and pads it with refused approvals to exactly `events`.
 */
async function fillAudit(engine: Engine, store: Store, events: number): Promise<void> {
  const head = async () => (await store.transaction((tx) => tx.auditHead(TENANT)))?.seq ?? 0;
  let i = 0;
  while ((await head()) < events - 12) {
    const [made] = await proposeMany(engine, [i % 6 === 5 ? 'local' : 'external'], `run-tamper-${i % 9}`, i);
    const p = made!;
    if (i % 7 === 3)
      await engine.proposals.decline({
        tenant: TENANT,
        proposalId: p.id,
        actor: operator('dora'),
        reason: 'not this month',
      });
    else if (i % 6 === 5 && i % 4 === 1)
      await engine.proposals.edit({
        tenant: TENANT,
        proposalId: p.id,
        editor: operator('eve'),
        changes: { body: 'Edited body.' },
      });
    else {
      await engine.proposals.approveAndExecute({
        tenant: TENANT,
        proposalId: p.id,
        approver: operator('ada'),
        seenDigest: p.digest,
      });
      if (i % 5 === 0)
        await engine.proposals.approve({
          tenant: TENANT,
          proposalId: p.id,
          approver: operator('bob'),
          seenDigest: p.digest,
        });
    }
    i++;
  }
  const [pad] = await proposeMany(engine, ['external'], 'run-tamper-pad', i);
  while ((await head()) < events) {
    await engine.proposals.approve({
      tenant: TENANT,
      proposalId: pad!.id,
      approver: operator('carl'),
      seenDigest: '0'.repeat(64),
    });
  }
  // Another tenant's chain beside it: tampering with one must be found in that one.
  await engine.proposals.propose({
    ...proposalInput('external', 0, 'run-globex'),
    tenant: 'globex',
    request: { invoice_id: 'inv-104' },
    resource: 'invoice:inv-104',
    requestedBy: 'agent:globex-assistant',
  });
}

async function cli(
  argv: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  let out = '';
  try {
    const code = await runCli(argv, {
      stdout: (t) => (out += t),
      stderr: (t) => (out += t),
      stdin: async () => '',
    });
    return { code, out };
  } finally {
    for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

for (const name of BACKENDS) {
  // The embedded PGlite fills the 1,000-event log several times slower than a server.
  const TIMEOUT = name === 'postgres' && EMBEDDED_POSTGRES ? 4 * BASE_TIMEOUT : BASE_TIMEOUT;
  describe(`tampering on ${name}`, () => {
    let backend: Backend;
    let store: Store;
    let engine: Engine;
    let sql: RawSql;

    beforeAll(async () => {
      backend = await createBackend(name);
      store = await backend.open();
      engine = await createEngine({
        limits: RELIABILITY_LIMITS,
        store,
        operations: reliabilityOperations(reliabilityWorld({ invoices: 400 })),
        sealKey: SEAL_KEY,
      });
      await fillAudit(engine, store, EVENTS);
      sql = await backend.sql();
    }, TIMEOUT);

    afterAll(async () => {
      await sql?.close();
      await engine?.close();
      await backend?.dispose();
    });

    it('starts from an intact, sealed 1,000-event log', async () => {
      const original = await rows(sql);
      expect(original).toHaveLength(EVENTS);
      expect(await check(store, SEAL_KEY)).toMatchObject({ kind: 'intact', tenants: 2 });
      const steps = new Set(original.map((r) => r['step']));
      for (const step of [
        'proposed',
        'approved',
        'claimed',
        'revalidated',
        'command',
        'outcome',
        'declined',
        'edited',
        'replayed',
        'denied',
      ])
        expect(steps).toContain(step);
    });

    it(
      'detects every single-column change of every sampled row, naming that row',
      async () => {
        const original = await rows(sql);
        const picked = sample(original.length, SIZES.tamperRows);
        const missed: string[] = [];
        let tried = 0;
        for (const index of picked) {
          const row = original[index]!;
          for (const m of mutationsOf(row)) {
            await setColumn(sql, { tenant: row['tenant'], seq: row['seq'] }, m.column, m.value);
            const result = await check(store);
            await setColumn(sql, keyOf(m, row), m.column, row[m.column]);
            tried++;
            if (result.kind !== 'broken' || result.tenant !== TENANT || result.seq !== Number(row['seq'])) {
              missed.push(
                `#${String(row['seq'])} ${m.label}: ${result.kind === 'broken' ? `named #${result.seq} of ${result.tenant}` : result.kind === 'threw' ? result.message : 'intact'}`,
              );
            }
          }
          // The seal column only means something with the server key.
          await setColumn(
            sql,
            { tenant: row['tenant'], seq: row['seq'] },
            'seal',
            flipHex(String(row['seal'])),
          );
          const forged = await check(store, SEAL_KEY);
          await setColumn(sql, { tenant: row['tenant'], seq: row['seq'] }, 'seal', row['seal']);
          tried++;
          if (
            forged.kind !== 'broken' ||
            forged.problem !== 'seal_mismatch' ||
            forged.seq !== Number(row['seq'])
          )
            missed.push(`#${String(row['seq'])} seal changed: ${forged.kind}`);
        }
        expect(await check(store, SEAL_KEY)).toMatchObject({ kind: 'intact' });
        reportFigure({
          suite: 'tamper',
          what: `single-column changes (${picked.length} rows × every covered column)`,
          backend: name,
          tried,
          held: tried - missed.length,
        });
        expect(missed).toEqual([]);
      },
      TIMEOUT,
    );

    it(
      'detects every deleted row, every swap of two rows’ contents and every inserted row',
      async () => {
        const original = await rows(sql);
        const picked = sample(original.length, SIZES.tamperRows);
        const missed: string[] = [];
        let tried = 0;
        const last = Number(original.at(-1)!['seq']);
        for (const index of picked) {
          const row = original[index]!;
          const seq = Number(row['seq']);
          // Delete.
          await deleteRow(sql, row['seq']);
          const deleted = await check(store);
          await insertRow(sql, row);
          tried++;
          const expectedSeq = seq === last ? last : seq;
          if (deleted.kind !== 'broken' || deleted.seq !== expectedSeq)
            missed.push(
              `delete #${seq}: ${deleted.kind === 'broken' ? `named #${deleted.seq}` : deleted.kind}`,
            );

          // Swap with the next row (the last swaps with the first): every column but the key.
          const other = original[(index + 1) % original.length]!;
          const content = COLUMNS.filter((c) => c !== 'tenant' && c !== 'seq');
          // Event ids are unique per tenant (an index): they trade places through a spare id.
          const place = async (aValue: Row, bValue: Row) => {
            for (const c of content) {
              if (c === 'id') await setColumn(sql, { tenant: TENANT, seq: row['seq'] }, c, 'evt_swapping');
              await setColumn(sql, { tenant: TENANT, seq: other['seq'] }, c, bValue[c]);
              await setColumn(sql, { tenant: TENANT, seq: row['seq'] }, c, aValue[c]);
            }
          };
          await place(other, row);
          const swapped = await check(store);
          await place(row, other);
          tried++;
          const first = Math.min(seq, Number(other['seq']));
          if (swapped.kind !== 'broken' || swapped.seq !== first)
            missed.push(
              `swap #${seq}↔#${String(other['seq'])}: ${swapped.kind === 'broken' ? `named #${swapped.seq}` : swapped.kind}`,
            );

          // Insert a copy of this row before it: every later row moves up by one.
          await shift(sql, seq, +1);
          await insertRow(sql, { ...row, id: `${String(row['id'])}-copy` });
          const inserted = await check(store);
          await deleteRow(sql, seq);
          await shift(sql, seq + 1, -1);
          tried++;
          if (inserted.kind !== 'broken' || inserted.seq !== seq)
            missed.push(
              `insert before #${seq}: ${inserted.kind === 'broken' ? `named #${inserted.seq}` : inserted.kind}`,
            );
        }
        // Appended after the head, with its hashes left as they were copied.
        await insertRow(sql, { ...original.at(-1)!, seq: last + 1, id: 'evt_appended' });
        const appended = await check(store);
        await deleteRow(sql, last + 1);
        tried++;
        if (appended.kind !== 'broken' || appended.seq !== last + 1)
          missed.push(`append #${last + 1}: ${appended.kind}`);

        expect(await check(store, SEAL_KEY)).toMatchObject({ kind: 'intact' });
        reportFigure({
          suite: 'tamper',
          what: `deletes, swaps, inserts (${picked.length} rows each, plus an append)`,
          backend: name,
          tried,
          held: tried - missed.length,
        });
        expect(missed).toEqual([]);
      },
      TIMEOUT,
    );

    it('an unreadable row is reported as that broken event, not as an exception (the CLI exits 1 naming it)', async () => {
      const original = await rows(sql);
      const row = original[Math.floor(original.length / 2)]!;
      const missed: string[] = [];
      for (const column of ['digests_json', 'detail_json']) {
        await setColumn(sql, { tenant: TENANT, seq: row['seq'] }, column, '{"unterminated');
        const result = await check(store);
        await setColumn(sql, { tenant: TENANT, seq: row['seq'] }, column, row[column]);
        if (result.kind !== 'broken' || result.seq !== Number(row['seq']))
          missed.push(`${column}: ${result.kind === 'threw' ? result.message : result.kind}`);
      }
      reportFigure({
        suite: 'tamper',
        what: 'unreadable JSON in a row',
        backend: name,
        tried: 2,
        held: 2 - missed.length,
      });
      expect(missed).toEqual([]);
    });

    it('detects a truncated tail (head rewritten to match) against an exported checkpoint', async () => {
      const original = await rows(sql);
      const checkpoint = await store.transaction((tx) => tx.auditHead(TENANT));
      if (!checkpoint) throw new Error('no head');
      const cut = original.slice(-10);
      for (const row of cut) await deleteRow(sql, row['seq']);
      const newLast = original.at(-11)!;
      await sql.run('UPDATE countersign_audit_heads SET seq = ?, chain_hash = ? WHERE tenant = ?', [
        newLast['seq'],
        newLast['chain_hash'],
        TENANT,
      ]);
      try {
        // Without a checkpoint kept elsewhere the shortened chain is consistent: that is why one is exported.
        expect(await check(store, SEAL_KEY)).toMatchObject({ kind: 'intact' });
        const result = await verifyAudit(store, { checkpoint: { tenant: TENANT, ...checkpoint } });
        expect(result).toMatchObject({ kind: 'broken', problem: 'behind_checkpoint', seq: checkpoint.seq });
        reportFigure({
          suite: 'tamper',
          what: 'truncated tail vs checkpoint',
          backend: name,
          tried: 1,
          held: result.kind === 'broken' ? 1 : 0,
        });
      } finally {
        for (const row of cut) await insertRow(sql, row);
        await sql.run('UPDATE countersign_audit_heads SET seq = ?, chain_hash = ? WHERE tenant = ?', [
          checkpoint.seq,
          checkpoint.chainHash,
          TENANT,
        ]);
      }
      expect(await check(store, SEAL_KEY)).toMatchObject({ kind: 'intact' });
    });

    it('catches a forgery that recomputes the plain leaf and chain hashes with the keyed seal', async () => {
      const original = await rows(sql);
      const at = Math.floor(original.length / 3);
      const events = original.map((r) => auditFromRow(r));
      const forged: AuditEvent[] = [];
      let previous = at === 0 ? '0'.repeat(64) : events[at - 1]!.chainHash;
      for (const [i, e] of events.slice(at).entries()) {
        const detail = i === 0 ? { ...e.detail, outcome: 'succeeded', forgedBy: 'mallory' } : e.detail;
        const leaf = leafHash(eventBody({ ...e, detail }));
        const chain = linkHash(previous, leaf);
        forged.push({ ...e, detail, leafHash: leaf, chainHash: chain });
        previous = chain;
      }
      const write = async (list: readonly AuditEvent[], seals: 'keep' | 'drop') => {
        for (const e of list) {
          await setColumn(sql, { tenant: TENANT, seq: e.seq }, 'detail_json', JSON.stringify(e.detail));
          await setColumn(sql, { tenant: TENANT, seq: e.seq }, 'leaf_hash', e.leafHash);
          await setColumn(sql, { tenant: TENANT, seq: e.seq }, 'chain_hash', e.chainHash);
          if (seals === 'drop') await setColumn(sql, { tenant: TENANT, seq: e.seq }, 'seal', null);
        }
        const head = list.at(-1)!;
        await sql.run('UPDATE countersign_audit_heads SET chain_hash = ? WHERE tenant = ?', [
          head.chainHash,
          TENANT,
        ]);
      };
      const results: Record<string, Checked> = {};
      try {
        await write(forged, 'keep');
        results['plain'] = await check(store);
        results['sealed'] = await check(store, SEAL_KEY);
        await write(forged, 'drop');
        results['sealsDropped'] = await check(store, SEAL_KEY);
      } finally {
        for (const r of original.slice(at)) {
          for (const c of ['detail_json', 'leaf_hash', 'chain_hash', 'seal'])
            await setColumn(sql, { tenant: TENANT, seq: r['seq'] }, c, r[c]);
        }
        await sql.run('UPDATE countersign_audit_heads SET chain_hash = ? WHERE tenant = ?', [
          original.at(-1)!['chain_hash'],
          TENANT,
        ]);
      }
      const seq = Number(original[at]!['seq']);
      // The plain hash chain alone cannot tell: anyone who can write the database can recompute it.
      expect(results['plain']).toMatchObject({ kind: 'intact' });
      expect(results['sealed']).toMatchObject({ kind: 'broken', problem: 'seal_mismatch', seq });
      expect(results['sealsDropped']).toMatchObject({ kind: 'broken', problem: 'seal_missing', seq });
      reportFigure({
        suite: 'tamper',
        what: 'forgery with recomputed plain hashes (seal kept / seals dropped)',
        backend: name,
        tried: 2,
        held: 2,
      });
      expect(await check(store, SEAL_KEY)).toMatchObject({ kind: 'intact' });
    });

    it('refuses approval of a proposal whose stored arguments, preview or scope changed: corrupt_approval_record', async () => {
      const unsealed = await createEngine({
        limits: RELIABILITY_LIMITS,
        store,
        operations: reliabilityOperations(reliabilityWorld({ invoices: 400 })),
        migrate: false,
      });
      const changes: readonly { column: string; change: (text: string) => string }[] = [
        {
          column: 'arguments_json',
          change: (t) =>
            t.replace(/"amount_minor":(\d+)/, (_, n: string) => `"amount_minor":${Number(n) + 1}`),
        },
        {
          column: 'arguments_json',
          change: (t) =>
            t.replace(/"destination_account_id":"[^"]+"/, '"destination_account_id":"acct-mallory"'),
        },
        {
          column: 'preview_json',
          change: (t) => t.replace(/"supplier":"[^"]+"/, '"supplier":"Someone Else"'),
        },
        {
          column: 'scope_json',
          change: (t) =>
            t.replace(/"amount_minor":(\d+)/, (_, n: string) => `"amount_minor":${Number(n) + 1}`),
        },
        { column: 'scope_digest', change: flipHex },
      ];
      const reasons: string[] = [];
      for (const [i, c] of changes.entries()) {
        const [p] = await proposeMany(unsealed, ['external'], 'run-corrupt', 300 + i);
        const [row] = await sql.all(
          `SELECT ${c.column} AS v FROM countersign_proposals WHERE tenant = ? AND id = ?`,
          [TENANT, p!.id],
        );
        const changed = c.change(String(row!['v']));
        expect(changed).not.toBe(row!['v']);
        await sql.run(`UPDATE countersign_proposals SET ${c.column} = ? WHERE tenant = ? AND id = ?`, [
          changed,
          TENANT,
          p!.id,
        ]);
        const result = await unsealed.proposals.approve({
          tenant: TENANT,
          proposalId: p!.id,
          approver: operator('ada'),
          seenDigest: p!.digest,
        });
        reasons.push(result.kind === 'not_approvable' ? result.reason : result.kind);
      }
      reportFigure({
        suite: 'tamper',
        what: 'stored arguments / preview / scope changed',
        backend: name,
        tried: changes.length,
        held: reasons.filter((r) => r === 'corrupt_approval_record').length,
      });
      expect(reasons).toEqual(changes.map(() => 'corrupt_approval_record'));
    });

    it('catches a re-hashed forgery of a proposal (every digest recomputed) by the seal', async () => {
      const [p] = await proposeMany(engine, ['external'], 'run-forgery', 320);
      const [row] = await sql.all('SELECT * FROM countersign_proposals WHERE tenant = ? AND id = ?', [
        TENANT,
        p!.id,
      ]);
      const r = row!;
      const args = {
        ...(parseJson(String(r['arguments_json'])) as Record<string, unknown>),
        destination_account_id: 'acct-mallory',
      };
      const scope = {
        ...(parseJson(String(r['scope_json'])) as Record<string, unknown>),
        destination_account_id: 'acct-mallory',
      };
      const preview = {
        ...(parseJson(String(r['preview_json'])) as Record<string, unknown>),
        destination_account_id: 'acct-mallory',
      };
      const scopeDigest = digest(scope).sha256;
      const forgedDigest = contractDigest({
        formatVersion: Number(r['format_version']),
        operation: String(r['operation']),
        scopeVersion: Number(r['scope_version']),
        viewVersion: Number(r['view_version']),
        tenant: TENANT,
        section: r['section'] === null ? null : String(r['section']),
        resource: String(r['resource']),
        requestedBy: String(r['requested_by']),
        editedBy: r['edited_by'] === null ? null : String(r['edited_by']),
        runId: String(r['run_id']),
        scopeDigest,
        arguments: args,
        preview,
        approvals:
          r['policy_json'] === null
            ? null
            : (parseJson(String(r['policy_json'])) as { required: number; roles: string[] }),
      });
      await sql.run(
        'UPDATE countersign_proposals SET arguments_json = ?, scope_json = ?, scope_digest = ?, preview_json = ?, digest = ? WHERE tenant = ? AND id = ?',
        [
          canonicalize(args),
          canonicalize(scope),
          scopeDigest,
          canonicalize(preview),
          forgedDigest,
          TENANT,
          p!.id,
        ],
      );
      // The page now shows the forged contract and its digest; the approver approves what they see.
      const sealed = await engine.proposals.approve({
        tenant: TENANT,
        proposalId: p!.id,
        approver: operator('ada'),
        seenDigest: forgedDigest,
      });
      expect(sealed).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
      // Without a seal key the recomputed digests are consistent: the seal is what catches it.
      const unsealed = await createEngine({
        limits: RELIABILITY_LIMITS,
        store,
        operations: reliabilityOperations(reliabilityWorld({ invoices: 400 })),
        migrate: false,
      });
      const naive = await unsealed.proposals.approve({
        tenant: TENANT,
        proposalId: p!.id,
        approver: operator('ada'),
        seenDigest: forgedDigest,
      });
      expect(naive.kind).toBe('claimed');
      reportFigure({
        suite: 'tamper',
        what: 're-hashed proposal forgery vs seal',
        backend: name,
        tried: 1,
        held: sealed.kind === 'not_approvable' ? 1 : 0,
      });
    });

    it.skipIf(name !== 'sqlite')(
      'countersign audit verify --db FILE exits 1 on sampled changes, and the checkpoint and seal checks work from the shell',
      async () => {
        const original = await rows(sql);
        const db = backend.location;
        expect((await cli(['audit', 'verify', '--db', db])).code).toBe(0);
        const picked = sample(original.length, SIZES.cliSamples);
        const codes: number[] = [];
        for (const index of picked) {
          const row = original[index]!;
          const m = mutationsOf(row)[index % 15]!;
          await setColumn(sql, { tenant: row['tenant'], seq: row['seq'] }, m.column, m.value);
          const run = await cli(['audit', 'verify', '--db', db]);
          await setColumn(sql, keyOf(m, row), m.column, row[m.column]);
          codes.push(run.code);
          expect(run.out).toContain(`#${String(row['seq'])}`);
        }
        expect(codes).toEqual(picked.map(() => 1));

        // The checkpoint printed by `countersign audit checkpoint`, kept elsewhere, catches a truncation.
        const printed = await cli(['audit', 'checkpoint', '--db', db]);
        expect(printed.code).toBe(0);
        const file = join(backend.location, '..', 'checkpoint.json');
        writeFileSync(file, printed.out);
        const cut = original.slice(-3);
        for (const row of cut) await deleteRow(sql, row['seq']);
        const newLast = original.at(-4)!;
        await sql.run('UPDATE countersign_audit_heads SET seq = ?, chain_hash = ? WHERE tenant = ?', [
          newLast['seq'],
          newLast['chain_hash'],
          TENANT,
        ]);
        const truncated = await cli(['audit', 'verify', '--db', db, '--checkpoint', file]);
        for (const row of cut) await insertRow(sql, row);
        await sql.run('UPDATE countersign_audit_heads SET seq = ?, chain_hash = ? WHERE tenant = ?', [
          original.at(-1)!['seq'],
          original.at(-1)!['chain_hash'],
          TENANT,
        ]);
        expect(truncated.code).toBe(1);
        expect(truncated.out).toContain('behind_checkpoint');

        // The real binary, with the server key in its environment, names a changed seal.
        const row = original[7]!;
        await setColumn(sql, { tenant: TENANT, seq: row['seq'] }, 'seal', flipHex(String(row['seal'])));
        const shell = spawnSync(
          process.execPath,
          ['--import', 'tsx', 'src/cli/main.ts', 'audit', 'verify', '--db', db],
          {
            cwd: ROOT,
            env: { ...process.env, COUNTERSIGN_SEAL_KEY: SEAL_KEY },
            encoding: 'utf8',
          },
        );
        await setColumn(sql, { tenant: TENANT, seq: row['seq'] }, 'seal', row['seal']);
        expect(shell.status).toBe(1);
        expect(shell.stdout).toContain('seal_mismatch');
        reportFigure({
          suite: 'tamper',
          what: 'CLI audit verify exit 1 (sampled changes, checkpoint, seal)',
          backend: name,
          tried: picked.length + 2,
          held: codes.filter((c) => c === 1).length + 2,
        });
      },
    );
  });
}
