import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  attachMcp,
  type BindingError,
  createMcpServer,
  type McpHttpHandler,
  type McpSession,
} from '../../src/adapters/mcp/index.js';
import type { Actor } from '../../src/index.js';
import { createCountersignApp } from '../../src/server/create-app.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { startServer } from '../../src/server/start-server.js';
import { type AdapterHarness, adapterHarness } from './support/adapter-harness.js';

let h: AdapterHarness;
afterEach(async () => {
  await h.close();
});

/** An MCP client connected (in memory) to countersign's MCP server for one session of the acme assistant. */
async function session(extra: Partial<McpSession> = {}): Promise<Client> {
  const server = createMcpServer(h.engine, {
    tenant: 'acme',
    agent: 'agent:acme-assistant',
    runId: 'run-mcp',
    ...extra,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'countersign-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

interface ToolAnswer {
  readonly text: string;
  readonly isError: boolean;
  readonly structured: Record<string, unknown> | undefined;
}

async function pay(client: Client, invoice_id: string): Promise<ToolAnswer> {
  const result = await client.callTool({ name: 'propose_invoice_pay', arguments: { invoice_id } });
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return {
    text: content.map((c) => c.text ?? '').join(''),
    isError: result.isError === true,
    structured: result.structuredContent as Record<string, unknown> | undefined,
  };
}

describe('MCP tool text says what actually happened', () => {
  beforeEach(async () => {
    h = await adapterHarness();
  });

  it('proposed: waiting for a human, status pending', async () => {
    const answer = await pay(await session(), 'inv-104');
    const [proposal] = await h.proposals();
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('Status: waiting for approval by a human; nothing has been executed.');
    expect(answer.structured).toMatchObject({ proposal_id: proposal?.id, status: 'pending' });
    expect(h.executions()).toBe(0);
  });

  it('under a standing grant: executed and succeeded, or failed — the text agrees with structuredContent.status', async () => {
    const client = await session();
    await h.grantPayment('inv-104');
    const paid = await pay(client, 'inv-104');
    expect(paid.structured).toMatchObject({ status: 'succeeded' });
    expect(paid.text).toContain('Status: approved by a standing grant; it was executed and succeeded.');
    expect(paid.text).not.toContain('waiting');

    await h.grantPayment('inv-107');
    h.world.provider.failWhen(() => true, 'decline');
    const declined = await pay(client, 'inv-107');
    expect(declined.structured).toMatchObject({ status: 'terminal_failure' });
    expect(declined.text).toContain(
      'Status: approved by a standing grant; it failed and will not be retried.',
    );
    expect(declined.text).not.toContain('waiting');
    expect(h.executions()).toBe(2);
  });

  it('refused for resource_mismatch: a tool error with the reason, no proposal', async () => {
    const answer = await pay(await session({ resource: 'invoice:inv-105' }), 'inv-104');
    expect(answer.isError).toBe(true);
    expect(answer.structured).toBeUndefined();
    expect(answer.text).toBe(
      'The request was not accepted: $.resource: the request acts on invoice:inv-104, not invoice:inv-105; the resource is named by the operation. Correct these fields and try again.',
    );
    expect(await h.proposals()).toHaveLength(0);
  });
});

describe('MCP over a proposal quota', () => {
  beforeEach(async () => {
    h = await adapterHarness({ limits: { perAgent: { pending: 1 }, perTenant: false } });
  });

  it('rate_limited is a tool error that says nothing was proposed, never "waiting for approval"', async () => {
    const client = await session();
    expect((await pay(client, 'inv-104')).isError).toBe(false);
    const refused = await pay(client, 'inv-107');
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('Nothing was proposed.');
    expect(refused.text).not.toMatch(/^Proposal /);
    expect(await h.proposals()).toHaveLength(1);
  });
});

describe('an MCP session binding comes from authentication, and its errors reach the application', () => {
  beforeEach(async () => {
    h = await adapterHarness();
  });

  it('refuses a session without a usable run id or tenant with BindingError, before any tool exists', () => {
    for (const [extra, field, reason] of [
      [{ runId: 'undefined' }, 'runId', 'placeholder'],
      [{ runId: ' ' }, 'runId', 'missing'],
      [{ tenant: '' }, 'tenant', 'missing'],
    ] as const) {
      const base: McpSession = { tenant: 'acme', agent: 'agent:acme-assistant', runId: 'run-1' };
      expect(() => createMcpServer(h.engine, { ...base, ...extra })).toThrow(
        expect.objectContaining({ name: 'BindingError', field, reason }),
      );
    }
  });

  it('over HTTP, an authenticator that yields an agent without a tenant: the hook sees BindingError, the client gets 500, no session stays open', async () => {
    const directory = new PrincipalDirectory(h.store);
    await directory.migrate();
    await directory.ensureTenant('acme');
    const token = await directory.issueAgentToken({ tenant: 'acme' });
    const seen: BindingError[] = [];
    // An application's own authenticator that loses the tenant on the way.
    const broken = async (bearer: string): Promise<Actor | undefined> => {
      const actor = await directory.authenticateBearer(bearer);
      return actor && { ...actor, tenant: '' };
    };
    let handler: McpHttpHandler | undefined;
    const app = createCountersignApp({
      engine: h.engine,
      directory,
      mcp: (host, ctx) => {
        handler = attachMcp(host, ctx.engine, {
          authenticate: broken,
          onBindingError: (error) => seen.push(error),
          maxSessions: 1,
        });
      },
    });
    const server = await startServer(app, { port: 0, host: '127.0.0.1' });
    try {
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      };
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const r = await fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${token}`,
          },
          body: JSON.stringify(init),
        });
        expect(r.status).toBe(500);
        // The host's own error page: nothing for the MCP client (or its model) to fix or retry.
        expect(await r.text()).not.toContain('agent binding');
      }
      // Both attempts were refused for the binding, not for the one-session cap: the slot was given back.
      expect(seen.map((e) => [e.name, e.field, e.reason])).toEqual([
        ['BindingError', 'tenant', 'missing'],
        ['BindingError', 'tenant', 'missing'],
      ]);
      expect(handler?.sessions).toBe(0);
    } finally {
      await server.close();
    }
  });
});
