import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoOperations, type DemoWorld, demoWorld } from '../../src/demo/demo-world.js';
import { type AnyOperation, defineOperation, exportIncident, type IncidentBundle } from '../../src/index.js';
import { approver, type Harness, harness, proposePayment } from '../support/engine.js';
import { cli } from '../support/cli.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(
  options: { world?: DemoWorld; operations?: AnyOperation[]; sealKey?: string } = {},
): Promise<Harness> {
  const world = options.world ?? demoWorld();
  h = await harness({
    world,
    ...(options.operations ? { operations: [...demoOperations(world), ...options.operations] } : {}),
    ...(options.sealKey ? { sealKey: options.sealKey } : {}),
  });
  return h;
}

async function bundleOf(
  x: Harness,
  proposalId: string,
  extra: { sealKey?: string; redact?: boolean } = {},
): Promise<IncidentBundle> {
  const result = await exportIncident(x.store, {
    proposalId,
    now: x.clock.now(),
    ...(extra.redact === false ? {} : { operations: [...x.engine.operations.values()] }),
    ...(extra.sealKey ? { sealKey: extra.sealKey } : {}),
  });
  if (result.kind !== 'exported') throw new Error(result.message);
  return result.bundle;
}

async function pay(x: Harness) {
  const proposal = await proposePayment(x.engine);
  const result = await x.engine.proposals.approveAndExecute({
    tenant: 'acme',
    proposalId: proposal.id,
    approver: approver(),
    seenDigest: proposal.digest,
  });
  if (result.kind !== 'completed') throw new Error(`not completed: ${result.kind}`);
  return { proposal, result };
}

const SHA = /^[0-9a-f]{64}$/;

describe('exportIncident: external effect yes / no / unknown, on a real SQLite store', () => {
  it('yes: a payment that succeeded; the bundle holds every scope, digest, id and event', async () => {
    const x = await start();
    const { proposal, result } = await pay(x);
    expect(result.outcome.kind).toBe('succeeded');
    const b = await bundleOf(x, proposal.id);

    expect(b.externalEffect).toBe('yes');
    expect(b.externalEffectStatement).toMatch(/^Command cmd_\w+ succeeded: the external effect happened\.$/);
    expect(b.format).toBe('countersign.incident.v1');
    expect(b.proposal).toMatchObject({
      id: proposal.id,
      tenant: 'acme',
      runId: 'run-1',
      operation: 'invoice.pay',
      status: 'succeeded',
      decidedBy: 'user:ada@acme.test',
    });
    expect(b.proposal.contractDigest).toEqual({ sha256: proposal.digest, short: proposal.short });

    // Proposed, viewed, approved: versions and digests (full + short), values redacted by the operation's rules.
    expect(b.scopes.proposed.scopeVersion).toBe(1);
    expect(b.scopes.proposed.digest).toEqual({
      sha256: proposal.scopeDigest,
      short: proposal.scopeDigest.slice(0, 12),
    });
    expect(b.scopes.proposed.recordedContractDigest?.sha256).toBe(proposal.digest);
    expect(b.scopes.proposed.scope).toMatchObject({
      amount_minor: 24_049,
      currency: 'USD',
      destination_account_id: '…er-7',
      tenant: 'acme',
    });
    expect(b.scopes.viewed.viewVersion).toBe(1);
    expect(b.scopes.viewed.preview).toMatchObject({
      destination_account_id: '…er-7',
      amount: { display: '240.49 USD' },
    });
    expect(b.scopes.viewed.digest.sha256).toMatch(SHA);
    expect(b.scopes.viewed.seenDigests).toEqual([{ sha256: proposal.digest, short: proposal.short }]);
    expect(b.scopes.approved).toMatchObject({
      scopeVersion: 1,
      digest: { sha256: proposal.scopeDigest },
      contractDigest: { sha256: proposal.digest },
      by: 'user:ada@acme.test',
      reason: 'approved',
      grantId: null,
    });
    expect(b.redaction.rules).toBe('operation');

    // Requested: rebuilt from the command event: its digest, equal to the approved scope's.
    expect(b.scopes.requested).toHaveLength(1);
    const requested = b.scopes.requested[0]!;
    expect(requested).toMatchObject({
      source: 'command',
      reason: 'approved',
      equalsApproved: true,
      digest: { sha256: proposal.scopeDigest },
    });
    expect(requested.scope).toEqual(b.scopes.approved?.scope);

    expect(b.executor).toEqual({
      ran: true,
      reason: 'approved',
      outcome: 'succeeded',
      message: null,
      correlationId: null,
    });
    expect(b.attempts).toHaveLength(1);
    expect(b.attemptIds).toEqual([b.attempts[0]!.id]);
    expect(b.commandIds).toEqual([b.attempts[0]!.commandId]);
    expect(requested.commandId).toBe(b.commandIds[0]);
    expect(b.attempts[0]!.idempotencyKey).toBe(`${proposal.id}.1`);

    expect(b.audit.events.map((e) => e.step)).toEqual([
      'proposed',
      'approved',
      'claimed',
      'revalidated',
      'command',
      'outcome',
    ]);
    const command = b.audit.events.find((e) => e.step === 'command')!;
    expect(command.short.requested).toBe(proposal.scopeDigest.slice(0, 12));
    expect(command.short.approved).toBe(proposal.short);
    expect(b.audit.verification).toEqual({ kind: 'intact', tenants: 1, events: 6 });
    // The bundle is JSON data through and through.
    expect(JSON.parse(JSON.stringify(b))).toEqual(b);
  });

  it('yes for a local effect committed with its outcome (the draft row), no provider involved', async () => {
    const x = await start();
    const proposed = await x.engine.proposals.propose({
      operation: 'email_broadcast.apply_draft',
      request: { broadcast_id: 'bc-spring', subject: 'Spring', body: 'Open now.' },
      tenant: 'acme',
      resource: 'broadcast:bc-spring',
      requestedBy: 'agent:acme-assistant',
      runId: 'run-e',
    });
    if (proposed.kind !== 'proposed') throw new Error(proposed.modelMessage);
    const done = await x.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: proposed.proposal.id,
      approver: approver(),
      seenDigest: proposed.proposal.digest,
    });
    expect(done).toMatchObject({ kind: 'completed', outcome: { kind: 'succeeded' } });
    const b = await bundleOf(x, proposed.proposal.id);
    expect(b.externalEffect).toBe('yes');
    expect(b.externalEffectStatement).toBe(
      `Command ${b.commandIds[0]} succeeded: the local effect happened.`,
    );
    // A local attempt keeps no command id of its own: the command event names it.
    expect(b.attempts[0]!.commandId).toBeNull();
    expect(b.scopes.requested[0]).toMatchObject({
      source: 'command',
      equalsApproved: true,
      commandId: b.commandIds[0],
    });
  });

  it('unknown while reconciliation is pending; yes once reconciliation finds the payment', async () => {
    const x = await start();
    x.world.provider.failWhen(() => true, 'timeout_after_commit');
    const { proposal, result } = await pay(x);
    expect(result.outcome.kind).toBe('needs_reconciliation');
    const pending = await bundleOf(x, proposal.id);
    expect(pending.externalEffect).toBe('unknown');
    expect(pending.externalEffectStatement).toContain(
      "was sent but the provider's answer was lost; reconciliation is pending",
    );
    expect(pending.executor.outcome).toBe('needs_reconciliation');
    expect(pending.commandIds).toHaveLength(1);

    const reconciled = await x.engine.proposals.reconcile({
      tenant: 'acme',
      proposalId: proposal.id,
      actor: approver(),
    });
    expect(reconciled).toMatchObject({ kind: 'reconciled', outcome: { kind: 'succeeded' } });
    const after = await bundleOf(x, proposal.id);
    expect(after.externalEffect).toBe('yes');
    expect(after.externalEffectStatement).toBe(
      `Reconciliation found attempt ${after.attemptIds[0]} (command ${after.commandIds[0]}) at the provider: the external effect happened.`,
    );
  });

  it('no once reconciliation finds nothing at the provider', async () => {
    const x = await start();
    x.world.provider.failWhen(() => true, 'timeout_before_commit');
    const { proposal, result } = await pay(x);
    expect(result.outcome.kind).toBe('needs_reconciliation');
    expect((await bundleOf(x, proposal.id)).externalEffect).toBe('unknown');
    await x.engine.proposals.reconcile({ tenant: 'acme', proposalId: proposal.id, actor: approver() });
    const b = await bundleOf(x, proposal.id);
    expect(b.externalEffect).toBe('no');
    expect(b.externalEffectStatement).toBe(
      `Reconciliation found no record of attempt ${b.attemptIds[0]} at the provider: nothing happened downstream.`,
    );
    expect(b.proposal.status).toBe('terminal_failure');
  });

  it('no for a proposal still pending, and for a declined one: no approval, no attempt, no command', async () => {
    const x = await start();
    const pending = await proposePayment(x.engine, 'acme', 'inv-104', 'run-p');
    const p = await bundleOf(x, pending.id);
    expect(p).toMatchObject({
      externalEffect: 'no',
      attempts: [],
      attemptIds: [],
      commandIds: [],
      scopes: { approved: null, requested: [] },
    });
    expect(p.externalEffectStatement).toBe(
      'No command was ever issued for this proposal (it is still pending approval), so nothing reached a downstream system.',
    );
    expect(p.executor).toEqual({
      ran: false,
      reason: null,
      outcome: null,
      message: null,
      correlationId: null,
    });

    const other = await proposePayment(x.engine, 'acme', 'inv-106', 'run-d');
    await x.engine.proposals.decline({
      tenant: 'acme',
      proposalId: other.id,
      actor: approver(),
      reason: 'not this month',
    });
    const d = await bundleOf(x, other.id);
    expect(d.externalEffect).toBe('no');
    expect(d.externalEffectStatement).toContain('(it was declined)');
  });

  it('no when the command guard refuses the request (scope_mismatch): the requested digest differs, the diff is named', async () => {
    // An executor that sends 10x the approved amount: the guard refuses it before any command exists.
    const request = z.strictObject({ amount_minor: z.number().int() });
    const tampering = defineOperation({
      kind: 'ledger.credit',
      scopeVersion: 1,
      effect: 'local',
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('ledger.credit'),
        amount_minor: z.number().int(),
      }),
      request,
      arguments: request,
      prepare: async (r) => ({ arguments: r, preview: { amount: r.amount_minor } }),
      execute: async (args, ctx) =>
        ctx.command({ amount_minor: args.amount_minor * 10 }, () => ({ ok: true })),
    });
    const x = await start({ operations: [tampering] });
    const proposed = await x.engine.proposals.propose({
      operation: 'ledger.credit',
      request: { amount_minor: 4000 },
      tenant: 'acme',
      resource: 'ledger:1',
      requestedBy: 'agent:acme-assistant',
      runId: 'run-t',
    });
    if (proposed.kind !== 'proposed') throw new Error(proposed.modelMessage);
    const done = await x.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: proposed.proposal.id,
      approver: approver(),
      seenDigest: proposed.proposal.digest,
    });
    expect(done).toMatchObject({
      kind: 'completed',
      outcome: { kind: 'terminal_failure', reason: 'scope_mismatch' },
    });

    const b = await bundleOf(x, proposed.proposal.id);
    expect(b.externalEffect).toBe('no');
    expect(b.externalEffectStatement).toBe(
      'No command was ever issued for this proposal (the command guard refused the request as scope_mismatch), so nothing reached a downstream system.',
    );
    expect(b.executor).toMatchObject({ ran: true, reason: 'scope_mismatch', outcome: 'terminal_failure' });
    expect(b.commandIds).toEqual([]);
    expect(b.scopes.requested).toHaveLength(1);
    expect(b.scopes.requested[0]).toMatchObject({
      source: 'denied',
      reason: 'scope_mismatch',
      equalsApproved: false,
      scope: null,
      diff: ['$.amount_minor: 4000 -> 40000'],
    });
    expect(b.scopes.requested[0]!.digest?.sha256).not.toBe(b.scopes.approved?.digest.sha256);
    expect(b.refusals).toEqual([
      expect.objectContaining({ step: 'denied', reason: 'scope_mismatch', attemptId: b.attemptIds[0] }),
    ]);
  });

  it('no when a local effect fails and is rolled back with its transaction', async () => {
    const request = z.strictObject({ note: z.string() });
    const failing = defineOperation({
      kind: 'note.write',
      scopeVersion: 1,
      effect: 'local',
      scope: z.strictObject({ tenant: z.string(), operation: z.literal('note.write'), note: z.string() }),
      request,
      arguments: request,
      prepare: async (r) => ({ arguments: r, preview: r }),
      execute: async (args, ctx) =>
        ctx.command(args, async () => {
          await ctx.transaction!.run('CREATE TABLE IF NOT EXISTS export_test_notes (note TEXT)');
          await ctx.transaction!.run('INSERT INTO export_test_notes (note) VALUES (?)', [args.note]);
          throw new Error('disk full after the insert');
        }),
    });
    const x = await start({ operations: [failing] });
    const proposed = await x.engine.proposals.propose({
      operation: 'note.write',
      request: { note: 'hello' },
      tenant: 'acme',
      resource: 'note:1',
      requestedBy: 'agent:acme-assistant',
      runId: 'run-l',
    });
    if (proposed.kind !== 'proposed') throw new Error(proposed.modelMessage);
    const done = await x.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: proposed.proposal.id,
      approver: approver(),
      seenDigest: proposed.proposal.digest,
    });
    expect(done).toMatchObject({ kind: 'completed', outcome: { kind: 'terminal_failure' } });
    const b = await bundleOf(x, proposed.proposal.id);
    expect(b.externalEffect).toBe('no');
    expect(b.externalEffectStatement).toBe(
      'No command was ever issued for this proposal (the local effect failed and was rolled back with its transaction), so nothing reached a downstream system.',
    );
    expect(b.attemptIds).toHaveLength(1);
    expect(b.executor.correlationId).toMatch(/^cor_/);
  });
});

describe('exportIncident: sanitizing, sealing, finding', () => {
  it('without the operation the values are exported as stored, and the bundle says so', async () => {
    const x = await start();
    const { proposal } = await pay(x);
    const b = await bundleOf(x, proposal.id, { redact: false });
    expect(b.redaction).toEqual({
      rules: 'none',
      note: 'operation invoice.pay was not given to the export: scopes and preview are the stored canonical values, unredacted',
    });
    expect(b.scopes.proposed.scope).toMatchObject({ destination_account_id: 'acct-supplier-7' });
  });

  it('with a seal key, the seals are verified and the key never reaches the bundle', async () => {
    const key = 'k'.repeat(40);
    const x = await start({ sealKey: key });
    const { proposal } = await pay(x);
    const b = await bundleOf(x, proposal.id, { sealKey: key });
    expect(b.audit.verification.kind).toBe('intact');
    expect(JSON.stringify(b)).not.toContain(key);
    const wrong = await bundleOf(x, proposal.id, { sealKey: 'w'.repeat(40) });
    expect(wrong.audit.verification).toMatchObject({
      kind: 'broken',
      problem: 'seal_mismatch',
      tenant: 'acme',
    });
  });

  it('a missing proposal, or one of another tenant, is not_found', async () => {
    const x = await start();
    const { proposal } = await pay(x);
    expect(await exportIncident(x.store, { proposalId: 'prp_nothing' })).toEqual({
      kind: 'not_found',
      message: 'no proposal prp_nothing',
    });
    expect((await exportIncident(x.store, { proposalId: proposal.id, tenant: 'globex' })).kind).toBe(
      'not_found',
    );
    expect((await exportIncident(x.store, { proposalId: proposal.id, tenant: 'acme' })).kind).toBe(
      'exported',
    );
  });
});

describe('countersign audit export', () => {
  it('writes the bundle to stdout; --demo redacts by the demo operations; --out writes a file', async () => {
    const x = await start();
    const { proposal } = await pay(x);
    const plain = await cli(['audit', 'export', proposal.id, '--db', x.dbPath]);
    expect(plain.code).toBe(0);
    expect(plain.err).toBe('');
    const bundle = JSON.parse(plain.out) as IncidentBundle;
    expect(bundle.proposal.id).toBe(proposal.id);
    expect(bundle.externalEffect).toBe('yes');
    expect(bundle.redaction.rules).toBe('none');

    const redacted = JSON.parse(
      (await cli(['audit', 'export', proposal.id, '--db', x.dbPath, '--demo'])).out,
    ) as IncidentBundle;
    expect(redacted.redaction.rules).toBe('operation');
    expect(redacted.scopes.approved?.scope).toMatchObject({ destination_account_id: '…er-7' });

    const file = join(x.dbPath, '..', 'incident.json');
    const written = await cli([
      'audit',
      'export',
      proposal.id,
      '--db',
      x.dbPath,
      '--out',
      file,
      '--tenant',
      'acme',
    ]);
    expect(written).toEqual({ code: 0, out: `wrote ${file}: ${proposal.id} externalEffect=yes\n`, err: '' });
    expect((JSON.parse(readFileSync(file, 'utf8')) as IncidentBundle).commandIds).toEqual(bundle.commandIds);
  });

  it('--config FILE takes the redaction rules (and the store) from the server config module', async () => {
    const x = await start();
    const { proposal } = await pay(x);
    const examples = fileURLToPath(new URL('../../src/demo/demo-world.ts', import.meta.url));
    const config = join(x.dbPath, '..', 'countersign.config.ts');
    writeFileSync(
      config,
      `import { demoOperations, demoWorld } from ${JSON.stringify(examples)};\nexport const operations = demoOperations(demoWorld());\n`,
    );
    const r = await cli(['audit', 'export', proposal.id, '--config', config, '--db', x.dbPath]);
    expect(r.code).toBe(0);
    const b = JSON.parse(r.out) as IncidentBundle;
    expect(b.redaction.rules).toBe('operation');
    expect(b.scopes.viewed.preview).toMatchObject({ destination_account_id: '…er-7' });
    expect(
      (await cli(['audit', 'export', proposal.id, '--config', config, '--demo', '--db', x.dbPath])).code,
    ).toBe(2);
  });

  it('exit 1 for an unknown proposal, 2 without --db', async () => {
    const x = await start();
    expect(await cli(['audit', 'export', 'prp_nothing', '--db', x.dbPath])).toEqual({
      code: 1,
      out: '',
      err: 'countersign audit export: no proposal prp_nothing\n',
    });
    const noDb = await cli(['audit', 'export', 'prp_nothing']);
    expect(noDb.code).toBe(2);
    expect(noDb.err).toContain('--db FILE or --store LOCATION is required');
  });
});
