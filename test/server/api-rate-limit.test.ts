import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationTools } from '../../src/adapters/shared/operation-tools.js';
import { createMcpServer } from '../../src/adapters/mcp/index.js';
import { call, freshInvoice, type ServerHarness, serverHarness } from './support/server-harness.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({ limits: { perAgent: { pending: 1 } } });
});
afterAll(async () => {
  await h?.close();
});

const pay = (invoice: string) => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  resource: `invoice:${invoice}`,
  runId: 'run-limit-1',
});

describe('proposal quotas at the edges', () => {
  it('POST /api/v1/proposals over the agent’s quota answers 429 rate_limited with Retry-After and a modelMessage', async () => {
    const token = h.tenants.acme.agentToken;
    const first = await call(h, 'POST', '/api/v1/proposals', {
      token,
      body: pay(freshInvoice(h.world, 'acme')),
    });
    expect(first.status).toBe(201);
    const second = await call(h, 'POST', '/api/v1/proposals', {
      token,
      body: pay(freshInvoice(h.world, 'acme')),
    });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('60');
    expect(second.body).toMatchObject({
      reason: 'rate_limited',
      limit: 'agent_pending',
      retryAfterSeconds: 60,
      modelMessage: expect.stringContaining('wait at least 60 s'),
    });
    expect(second.body['message']).toBe(second.body['modelMessage']);
    const pending = await h.engine.proposals.list('acme', { status: 'pending', limit: 10 });
    expect(pending.items).toHaveLength(1);
    // Another tenant's agent is untouched.
    const globex = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.globex.agentToken,
      body: pay(freshInvoice(h.world, 'globex')),
    });
    expect(globex.status).toBe(201);
  });

  it('a framework tool and an MCP tool answer rate_limited as an error the model reads', async () => {
    const binding = { tenant: 'acme', resource: 'invoice:*', runId: 'run-limit-2', agent: 'agent:tools' };
    const [tool] = operationTools(h.engine, binding, { operations: ['invoice.pay'] });
    const ok = await tool!.propose({ invoice_id: freshInvoice(h.world, 'acme') }, undefined);
    expect(ok.kind).toBe('proposed');
    const refused = await tool!.propose({ invoice_id: freshInvoice(h.world, 'acme') }, undefined);
    expect(refused).toMatchObject({ kind: 'rate_limited', reason: 'rate_limited', retryAfterMs: 60_000 });
    expect(refused.text).toContain('wait at least 60 s');

    const server = createMcpServer(h.engine, { ...binding, resource: 'mcp', operations: ['invoice.pay'] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'countersign-test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const result = await client.callTool({
        name: 'propose_invoice_pay',
        arguments: { invoice_id: freshInvoice(h.world, 'acme') },
      });
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([{ type: 'text', text: refused.text }]);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('refused decisions over HTTP', () => {
  it('an approver flooding refused approvals gets 429 rate_limited with Retry-After once 60 are audited, nothing more written', async () => {
    const acme = h.tenants.acme;
    const proposed = await h.engine.proposals.propose({
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme') },
      tenant: 'acme',
      requestedBy: 'agent:acme-flood',
      runId: 'run-flood',
    });
    if (proposed.kind !== 'proposed') throw new Error(proposed.kind);
    const id = proposed.proposal.id;
    const stale = 'f'.repeat(64);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 65; i++) {
      last = await call(h, 'POST', `/api/v1/proposals/${id}/approve`, {
        token: acme.operators.approver.token,
        body: { seenDigest: stale },
      });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(409));
    expect(statuses.slice(60)).toEqual(Array(5).fill(429));
    expect(last?.headers.get('retry-after')).toBe('60');
    expect(last?.body).toMatchObject({ reason: 'rate_limited', limit: 'principal_refusals' });
    const denied = (await h.engine.audit.events('acme', id)).filter((e) => e.step === 'denied');
    expect(denied).toHaveLength(60);
    expect(denied.every((e) => e.reason === 'stale_view')).toBe(true);
  });
});
