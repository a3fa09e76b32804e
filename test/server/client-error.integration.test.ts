import { connect } from 'node:net';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppEnv, startServer } from '../../src/server/index.js';
import { type ServerHarness, serverHarness } from './support/server-harness.js';

/** What came back on a raw connection before the server closed it. */
interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

// Sends bytes on a fresh connection (optionally holding it open without sending more) and reads
// until the server closes it: the requests here are ones no HTTP client library would send.
function rawExchange(url: string, bytes: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP response: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
    if (bytes) socket.write(bytes);
  });
}

describe('requests Node refuses before the app sees them', () => {
  let server: ServerHarness;
  beforeAll(async () => {
    server = await serverHarness();
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 20 KiB of headers 431 invalid_request as problem details, and closes', async () => {
    const padding = 'a'.repeat(1000);
    const headers = Array.from({ length: 20 }, (_, i) => `X-Pad-${i}: ${padding}\r\n`).join('');
    const answer = await rawExchange(
      server.url,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(answer.headers['connection']).toBe('close');
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)));
    expect(JSON.parse(answer.body)).toEqual({
      type: 'urn:countersign:problem:invalid_request',
      title: 'Invalid request',
      status: 431,
      detail: 'the request headers are too large',
      reason: 'invalid_request',
      message: 'the request headers are too large',
    });
    expect(answer.body).not.toContain(padding.slice(0, 20));
    expect(server.logs).toContainEqual({
      level: 'warn',
      fields: { code: 'HPE_HEADER_OVERFLOW', status: 431 },
      message: 'request refused by the HTTP parser',
    });
  });

  it('answers a garbage request line 400 invalid_request without echoing it', async () => {
    const answer = await rawExchange(server.url, 'HELLO \x01there-secret\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers['connection']).toBe('close');
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toEqual({
      type: 'urn:countersign:problem:invalid_request',
      title: 'Invalid request',
      status: 400,
      detail: 'the request is not valid HTTP',
      reason: 'invalid_request',
      message: 'the request is not valid HTTP',
    });
    expect(answer.body).not.toContain('secret');
    expect(JSON.stringify(server.logs)).not.toContain('secret');
  });

  it('still serves a well-formed request on a new connection', async () => {
    const answer = await rawExchange(
      server.url,
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expect(answer.status).toBe(200);
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
  });
});

describe('a client too slow to send its headers', () => {
  it('is answered 408 invalid_request and disconnected after headersTimeoutMs', async () => {
    const app = new Hono<AppEnv>();
    app.get('/', (c) => c.text('ok'));
    const server = await startServer(app, { port: 0, headersTimeoutMs: 200, requestTimeoutMs: 200 });
    try {
      const started = Date.now();
      // Half a request line, then nothing: the slow-loris pattern.
      const answer = await rawExchange(server.url, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      expect(Date.now() - started).toBeGreaterThanOrEqual(200);
      expect(answer.status).toBe(408);
      expect(answer.headers['connection']).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({
        type: 'urn:countersign:problem:invalid_request',
        title: 'Invalid request',
        status: 408,
        detail: 'the request did not arrive in time',
        reason: 'invalid_request',
        message: 'the request did not arrive in time',
      });
    } finally {
      await server.close();
    }
  });
});
