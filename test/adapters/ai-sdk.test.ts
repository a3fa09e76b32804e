import { generateText, stepCountIs } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scriptedLanguageModel } from '../../examples/ai-sdk/scripted-language-model.js';
import {
  type AgentBinding,
  BindingError,
  bindingContext,
  handbackMessages,
  proposalTools,
  stopAtProposal,
} from '../../src/adapters/ai-sdk/index.js';
import { forgeNextAuditEvent } from '../support/forge-audit.js';
import { type AdapterHarness, adapterHarness } from './support/adapter-harness.js';
import { plannedScript, type TurnPlan } from './support/planned-script.js';

let h: AdapterHarness;
beforeEach(async () => {
  h = await adapterHarness();
});
afterEach(async () => {
  await h.close();
});

async function turn(runId: string, prompt: string, plan: TurnPlan, binding?: AgentBinding) {
  const { script, views } = plannedScript({ [prompt]: plan });
  const result = await generateText({
    model: scriptedLanguageModel(script),
    tools: proposalTools(h.engine, binding ?? h.binding(runId)),
    stopWhen: [stepCountIs(5), stopAtProposal],
    prompt,
  });
  return { result, views };
}

const pay = (invoice_id: string, extra: Record<string, unknown> = {}) => ({
  name: 'propose_invoice_pay',
  arguments: { invoice_id, ...extra },
});
const credit = (amount_minor: number) => ({
  name: 'propose_credit_issue',
  arguments: { customer_id: 'cus-81', amount_minor, currency: 'USD' },
});

describe('countersign/ai-sdk', () => {
  it('proposes from execute, stops at the proposal; an operator approves; the executor runs once; the next turn learns the outcome', async () => {
    const { result } = await turn('run-1', 'Pay invoice inv-104', { calls: [pay('inv-104')] });
    expect(result.steps).toHaveLength(1);
    const [proposal] = await h.proposals();
    expect(result.toolResults[0]?.output).toContain(
      `Proposal ${proposal?.id} (short hash ${proposal?.short}) created: "Pay Northwind Paper Co. 240.49 USD".`,
    );
    expect(h.executions()).toBe(0);

    expect((await h.approve(proposal!.id, proposal!.digest)).kind).toBe('completed');
    expect(h.executions()).toBe(1);

    const { script, views } = plannedScript({ 'Did it go through?': { calls: [], answer: 'Paid.' } });
    const next = await generateText({
      model: scriptedLanguageModel(script),
      tools: proposalTools(h.engine, h.binding('run-2')),
      allowSystemInMessages: true,
      messages: [
        ...(await handbackMessages(h.engine, { tenant: 'acme', runId: 'run-1' })),
        { role: 'user', content: 'Did it go through?' },
      ],
    });
    expect(next.text).toBe('Paid.');
    expect(views[0]?.system).toContain(
      `invoice.pay ${proposal?.id} (${proposal?.short}): succeeded. Approved by a human; the application executed it. The invoice was paid (payment pay_1).`,
    );
  });

  it('reads the binding from the call context when built once at startup (experimental_context in ai 5 and 6, toolsContext in ai 7)', async () => {
    const tools = proposalTools(h.engine, (context: { runId: string }) => h.binding(context.runId));
    for (const [runId, invoice] of [
      ['run-a', 'inv-104'],
      ['run-b', 'inv-105'],
    ] as const) {
      const { script } = plannedScript({ [`Pay invoice ${invoice}`]: { calls: [pay(invoice)] } });
      const result = await generateText({
        model: scriptedLanguageModel(script),
        tools,
        ...bindingContext(tools, { runId }),
        stopWhen: [stepCountIs(5), stopAtProposal],
        prompt: `Pay invoice ${invoice}`,
      });
      expect(String(result.toolResults[0]?.output)).toMatch(/^Proposal prp_[0-9a-z]+ \(short hash/);
    }
    const made = (await h.proposals()).map((p) => [
      p.runId,
      (p.request as { invoice_id: string }).invoice_id,
    ]);
    expect(made.sort()).toEqual([
      ['run-a', 'inv-104'],
      ['run-b', 'inv-105'],
    ]);
  });

  it('returns invalid_request naming an extra key; the model corrects itself in the next step; nothing executes', async () => {
    const { result, views } = await turn('run-1', 'Pay invoice inv-104', {
      calls: [pay('inv-104', { amount_minor: 1 }), pay('inv-104')],
    });
    expect(views[1]?.toolResults[0]).toBe(
      'The request was not accepted: $.amount_minor: unknown field. Correct these fields and try again.',
    );
    expect(result.steps).toHaveLength(2);
    expect(await h.proposals()).toHaveLength(1);
    expect(h.executions()).toBe(0);
  });

  it('refuses an old approval for a changed amount (stale_view) and a tampered record (corrupt_approval_record)', async () => {
    await turn('run-1', 'Credit 40.00', { calls: [credit(4_000)] });
    const [first] = await h.proposals();
    expect((await h.approve(first!.id, first!.digest)).kind).toBe('completed');
    await turn('run-2', 'Make it 400.00', { calls: [credit(40_000)] });
    const changed = (await h.proposals()).find((p) => p.id !== first!.id)!;
    expect(await h.approve(changed.id, first!.digest)).toMatchObject({
      kind: 'not_approvable',
      reason: 'stale_view',
    });
    h.tamper(changed.id, '{"amount_minor":4000,"currency":"USD","customer_id":"cus-81"}');
    expect(await h.approve(changed.id, changed.digest)).toMatchObject({
      kind: 'not_approvable',
      reason: 'corrupt_approval_record',
    });
    expect(h.credits).toHaveLength(1);
  });

  it('under a standing grant the reply says it was executed and how it ended, and the loop stops there', async () => {
    await h.grantPayment('inv-104');
    const { result } = await turn('run-grant', 'Pay invoice inv-104', { calls: [pay('inv-104')] });
    const [proposal] = await h.proposals();
    expect(proposal?.status).toBe('succeeded');
    expect(result.steps).toHaveLength(1);
    expect(result.toolResults[0]?.output).toBe(
      `Proposal ${proposal?.id} (short hash ${proposal?.short}) created: "Pay Northwind Paper Co. 240.49 USD". Status: approved by a standing grant; it was executed and succeeded. Do not propose it again.`,
    );

    await h.grantPayment('inv-107');
    h.world.provider.failWhen(() => true, 'decline');
    const failed = await turn('run-grant-2', 'Pay invoice inv-107', { calls: [pay('inv-107')] });
    expect((await h.proposals()).find((p) => p.id !== proposal?.id)?.status).toBe('terminal_failure');
    expect(failed.result.toolResults[0]?.output).toContain(
      'Status: approved by a standing grant; it failed and will not be retried.',
    );
    expect(h.executions()).toBe(2);
  });

  it('a refusal (resource_mismatch) does not stop the loop: the model reads the reason and answers', async () => {
    const { result, views } = await turn(
      'run-1',
      'Pay invoice inv-104',
      { calls: [pay('inv-104')], answer: 'I may only pay inv-105.' },
      { ...h.binding('run-1'), resource: 'invoice:inv-105' },
    );
    expect(views[1]?.toolResults[0]).toBe(
      'The request was not accepted: $.resource: the request acts on invoice:inv-104, not invoice:inv-105; the resource is named by the operation. Correct these fields and try again.',
    );
    expect(result.text).toBe('I may only pay inv-105.');
    expect(await h.proposals()).toHaveLength(0);
  });

  it('a binding error reaches the application: generateText rejects with it (stopAtProposal), the hook sees it, no second model call', async () => {
    const seen: BindingError[] = [];
    const tools = proposalTools(
      h.engine,
      (context) => h.binding((context as { runId?: string } | undefined)?.runId as string),
      { onBindingError: (error) => seen.push(error) },
    );
    for (const context of [undefined, { runId: 'null' }]) {
      const { script, views } = plannedScript({ 'Pay invoice inv-104': { calls: [pay('inv-104')] } });
      const failure = await generateText({
        model: scriptedLanguageModel(script),
        tools,
        stopWhen: [stepCountIs(5), stopAtProposal],
        prompt: 'Pay invoice inv-104',
        ...(context ? bindingContext(tools, context) : {}),
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(BindingError);
      expect(failure).toMatchObject({ field: 'runId', reason: context ? 'placeholder' : 'missing' });
      expect(views).toHaveLength(1);
    }
    expect(seen.map((e) => e.reason)).toEqual(['missing', 'placeholder']);
    expect(await h.proposals()).toHaveLength(0);
  });
});

describe('countersign/ai-sdk over a proposal quota', () => {
  it('rate_limited does not stop the loop and never reads as waiting; nothing more is stored', async () => {
    const q = await adapterHarness({ limits: { perAgent: { pending: 1 }, perTenant: false } });
    try {
      const tools = proposalTools(q.engine, q.binding('run-q'));
      const { script, views } = plannedScript({
        'Pay invoice inv-104': { calls: [pay('inv-104')] },
        'Pay invoice inv-107': { calls: [pay('inv-107')], answer: 'I will wait.' },
      });
      const model = scriptedLanguageModel(script);
      const stopWhen = [stepCountIs(5), stopAtProposal];
      await generateText({ model, tools, stopWhen, prompt: 'Pay invoice inv-104' });
      const second = await generateText({ model, tools, stopWhen, prompt: 'Pay invoice inv-107' });
      const refusal = String(second.steps[0]?.toolResults[0]?.output);
      expect(refusal).toContain('Nothing was proposed.');
      expect(refusal).not.toMatch(/^Proposal /);
      expect(second.text).toBe('I will wait.');
      expect(views).toHaveLength(3);
      expect(await q.proposals()).toHaveLength(1);
    } finally {
      await q.close();
    }
  });
});

describe('countersign/ai-sdk when a database writer blocked the tenant’s audit chain', () => {
  it('corrupt_audit_chain does not stop the loop and never reads as waiting; nothing is stored', async () => {
    const c = await adapterHarness();
    try {
      const tools = proposalTools(c.engine, c.binding('run-c'));
      const { script, views } = plannedScript({
        'Pay invoice inv-104': { calls: [pay('inv-104')] },
        'Pay invoice inv-107': { calls: [pay('inv-107')], answer: 'It is on hold.' },
      });
      const model = scriptedLanguageModel(script);
      const stopWhen = [stepCountIs(5), stopAtProposal];
      await generateText({ model, tools, stopWhen, prompt: 'Pay invoice inv-104' });
      forgeNextAuditEvent(c.store, 'acme');
      const second = await generateText({ model, tools, stopWhen, prompt: 'Pay invoice inv-107' });
      const refusal = String(second.steps[0]?.toolResults[0]?.output);
      expect(refusal).toContain('Nothing was recorded or executed');
      expect(refusal).not.toMatch(/^Proposal /);
      expect(second.text).toBe('It is on hold.');
      expect(views).toHaveLength(3);
      expect(await c.proposals()).toHaveLength(1);
    } finally {
      await c.close();
    }
  });
});
