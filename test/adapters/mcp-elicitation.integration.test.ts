import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type ClientCapabilities,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attachMcp, createMcpServer, type McpHttpHandler } from '../../src/adapters/mcp/index.js';
import { approvalLink } from '../../src/server/server-origin.js';
import { createCountersignApp } from '../../src/server/create-app.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { startServer } from '../../src/server/start-server.js';
import { type AdapterHarness, adapterHarness } from './support/adapter-harness.js';

const ORIGIN = 'https://approvals.example.com';
const approvalUrl = (p: { readonly id: string; readonly runId: string }) => approvalLink(ORIGIN, p);

let h: AdapterHarness;
beforeEach(async () => {
  h = await adapterHarness();
});
afterEach(async () => {
  await h.close();
});

/** What a client saw of the elicitations the server sent, and a way to answer them later. */
interface Elicitations {
  readonly asked: ElicitRequest['params'][];
  /** Resolves once the server has sent an elicitation. */
  readonly first: Promise<ElicitRequest['params']>;
  /** Answers every elicitation asked so far (they stay unanswered until then). */
  answer(result: ElicitResult): void;
}

/** A real SDK client declaring `capabilities`; its elicitation handler holds each answer back. */
function clientWith(capabilities: ClientCapabilities): { client: Client; elicitations: Elicitations } {
  const client = new Client({ name: 'countersign-test', version: '1.0.0' }, { capabilities });
  const asked: ElicitRequest['params'][] = [];
  const waiting: ((result: ElicitResult) => void)[] = [];
  let seen: (params: ElicitRequest['params']) => void = () => {};
  const first = new Promise<ElicitRequest['params']>((resolve) => {
    seen = resolve;
  });
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      seen(request.params);
      return new Promise<ElicitResult>((resolve) => waiting.push(resolve));
    });
  }
  return {
    client,
    elicitations: {
      asked,
      first,
      answer: (result) => {
        for (const w of waiting.splice(0)) w(result);
      },
    },
  };
}

async function inMemory(client: Client): Promise<void> {
  const server = createMcpServer(
    h.engine,
    { tenant: 'acme', agent: 'agent:acme-assistant', runId: 'run-mcp' },
    { approvalUrl },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
}

async function pay(client: Client, invoice_id: string) {
  const result = await client.callTool({ name: 'propose_invoice_pay', arguments: { invoice_id } });
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return {
    text: content.map((c) => c.text ?? '').join(''),
    structured: result.structuredContent as Record<string, unknown>,
  };
}

describe('the approval page over MCP URL-mode elicitation', () => {
  it('asks a client that declared URL mode to open the approval page, without holding the tool result for its answer', async () => {
    const { client, elicitations } = clientWith({ elicitation: { url: {} } });
    await inMemory(client);
    // The client has not answered the elicitation when the tool result arrives.
    const answer = await pay(client, 'inv-104');
    const [proposal] = await h.proposals();
    const url = `${ORIGIN}/proposals/${proposal?.id}?run=run-mcp`;
    expect(answer.structured).toMatchObject({
      proposal_id: proposal?.id,
      status: 'pending',
      approval_url: url,
    });
    expect(answer.text).toContain(`Approval page: ${url}`);
    expect(await elicitations.first).toEqual({
      mode: 'url',
      elicitationId: proposal?.id,
      url,
      message: `Proposal ${proposal?.id} (short hash ${proposal?.short}) is waiting for a human decision. Open the approval page to review exactly what it would do, then approve or decline it. Nothing is executed before that.`,
    });
    // Opening the page decides nothing: the proposal waits for a human's decision in the console.
    elicitations.answer({ action: 'accept' });
    expect((await h.engine.proposals.get('acme', proposal!.id))?.status).toBe('pending');
    expect(h.executions()).toBe(0);
    await client.close();
  });

  it('keeps the link in the text alone for a client without URL-mode elicitation', async () => {
    for (const capabilities of [{}, { elicitation: { form: {} } }] as ClientCapabilities[]) {
      const { client, elicitations } = clientWith(capabilities);
      await inMemory(client);
      const answer = await pay(client, capabilities.elicitation ? 'inv-105' : 'inv-104');
      const id = answer.structured['proposal_id'] as string;
      const url = `${ORIGIN}/proposals/${id}?run=run-mcp`;
      expect(answer.structured['approval_url']).toBe(url);
      expect(answer.text).toContain(`Approval page: ${url}`);
      // A round trip after the tool call: an elicitation sent with it would have arrived by now.
      await client.listTools();
      expect(elicitations.asked).toEqual([]);
      await client.close();
    }
  });

  it('asks nothing for a proposal a standing grant approved inside the call', async () => {
    const { client, elicitations } = clientWith({ elicitation: { url: {} } });
    await inMemory(client);
    await h.grantPayment('inv-104');
    const answer = await pay(client, 'inv-104');
    expect(answer.structured['status']).toBe('succeeded');
    expect(answer.structured).not.toHaveProperty('approval_url');
    expect(answer.text).not.toContain('Approval page');
    await client.listTools();
    expect(elicitations.asked).toEqual([]);
    await client.close();
  });

  it('without an approval URL the server has no page to hand out: no link, no elicitation', async () => {
    const { client, elicitations } = clientWith({ elicitation: { url: {} } });
    const server = createMcpServer(h.engine, {
      tenant: 'acme',
      agent: 'agent:acme-assistant',
      runId: 'run-mcp',
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    const answer = await pay(client, 'inv-104');
    expect(answer.structured).not.toHaveProperty('approval_url');
    expect(answer.text).not.toContain('Approval page');
    await client.listTools();
    expect(elicitations.asked).toEqual([]);
    await client.close();
  });

  it('over streamable HTTP, sends the elicitation on the tool call’s stream to a client that declared URL mode', async () => {
    const directory = new PrincipalDirectory(h.store);
    await directory.migrate();
    await directory.ensureTenant('acme');
    const token = await directory.issueAgentToken({ tenant: 'acme' });
    let handler: McpHttpHandler | undefined;
    const app = createCountersignApp({
      engine: h.engine,
      directory,
      mcp: (host, ctx) => {
        handler = attachMcp(host, ctx.engine, {
          authenticate: (bearer) => ctx.directory.authenticateBearer(bearer),
          approvalUrl,
        });
      },
    });
    const server = await startServer(app, { port: 0, host: '127.0.0.1' });
    try {
      const { client, elicitations } = clientWith({ elicitation: { url: {} } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      const answer = await pay(client, 'inv-104');
      const id = answer.structured['proposal_id'] as string;
      const url = `${ORIGIN}/proposals/${id}?run=${encodeURIComponent(answer.structured['run_id'] as string)}`;
      expect(await elicitations.first).toMatchObject({ mode: 'url', elicitationId: id, url });
      expect(answer.structured['approval_url']).toBe(url);
      elicitations.answer({ action: 'decline' });
      expect((await h.engine.proposals.get('acme', id))?.status).toBe('pending');
      await client.close();
    } finally {
      await handler?.close();
      await server.close();
    }
  });
});
