import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs an example the way the README says (`npx tsx examples/…/main.ts`), never with a real model. */
function runExample(path: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env['OPENAI_API_KEY'];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path],
      { cwd: ROOT, env, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('the adapter examples run with their scripted model', () => {
  for (const example of ['openai-agents', 'langgraph', 'ai-sdk']) {
    it(`examples/${example}/main.ts proposes, is approved, executes once and hands back`, async () => {
      const { code, stdout, stderr } = await runExample(`examples/${example}/main.ts`);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const id = /proposal (prp_[0-9a-z]+)|Proposal (prp_[0-9a-z]+)/.exec(stdout);
      const proposalId = id?.[1] ?? id?.[2];
      expect(proposalId).toBeDefined();
      expect(stdout).toContain(`operator: approved ${proposalId}`);
      expect(stdout).toContain(`turn 2: Here is what happened: invoice.pay ${proposalId}`);
      expect(stdout).toContain(
        'succeeded. Approved by a human; the application executed it. The invoice was paid (payment pay_1).',
      );
      expect(stdout).toContain('payments made by the provider: 1');
    });
  }

  it("examples/openai-agents/main.ts reads only its own tenant's invoices and hands the outcome back in German", async () => {
    const { code, stdout } = await runExample('examples/openai-agents/main.ts');
    expect(code).toBe(0);
    // acme's open invoices: the shared ones and its own inv-108, never globex's inv-201/inv-202.
    expect(stdout).toContain('turn 0: Open invoices: inv-104, inv-105, inv-106, inv-107, inv-108\n');
    expect(stdout).not.toMatch(/inv-20[12]/);
    expect(stdout).toMatch(
      /\nde: - invoice\.pay prp_[0-9a-z]+ \([0-9a-f]{12}\): erfolgreich\. Von einem Menschen genehmigt; die Anwendung hat ihn ausgeführt\. Die Rechnung wurde bezahlt \(Zahlung pay_1\)\.\n/,
    );
  });

  it('examples/langgraph/main.ts (the graph docs/adapters.md shows) stops at the proposal after one model call, and a missing run_id rejects the invocation', async () => {
    const { code, stdout } = await runExample('examples/langgraph/main.ts');
    expect(code).toBe(0);
    expect(stdout).toContain(
      'application: binding error (runId missing)\nturn 0 (no run_id): rejected with BindingError runId\n',
    );
    expect(stdout).toMatch(
      /turn 1 \(run_[0-9a-z-]+\): Proposal prp_[0-9a-z]+ \(short hash [0-9a-f]{12}\) created: "Pay Northwind Paper Co\. 240\.49 USD"\. Status: waiting for approval by a human; nothing has been executed\./,
    );
    expect(stdout).toContain('turn 1 ended at the proposal after 1 model call(s)');
  });

  it('examples/mcp/main.ts proposes through countersign mcp and reads the outcome with get_proposal', async () => {
    const { code, stdout } = await runExample('examples/mcp/main.ts');
    expect(code).toBe(0);
    expect(stdout).toContain(
      'tools: propose_invoice_pay, propose_order_refund_missing_discount, propose_email_broadcast_apply_draft, get_proposal',
    );
    expect(stdout).toMatch(/operator: approved prp_[0-9a-z]+ \([0-9a-f]{12}\) → succeeded/);
    expect(stdout).toContain(
      'get_proposal: succeeded. Approved by a human; the application executed it. The invoice was paid (payment pay_1).',
    );
  });
});
