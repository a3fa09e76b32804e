import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';
import { ConsoleClient, hidden } from './support/console-client.js';
import { chunkedFlood, lyingBody } from '../support/body-flood.js';

let h: ServerHarness;
let proposal: { id: string; digest: string };
beforeAll(async () => {
  h = await serverHarness();
  const invoice = freshInvoice(h.world, 'acme');
  proposal = await proposeViaApi(h, 'acme', {
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    resource: `invoice:${invoice}`,
  });
});
afterAll(async () => {
  await h.close();
});

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

// Every case is a body the API must refuse with 400 and a reason, never a 500 and never executed.
const CASES: readonly { name: string; body: string; reason: 'invalid_json'; jsonError?: string }[] = [
  {
    name: 'a duplicate key',
    body: `{"seenDigest":"${'a'.repeat(64)}","seenDigest":"DIGEST"}`,
    reason: 'invalid_json',
    jsonError: 'duplicate_key',
  },
  {
    name: 'a __proto__ key',
    body: '{"seenDigest":"DIGEST","__proto__":{"admin":true}}',
    reason: 'invalid_json',
    jsonError: 'proto_key',
  },
  {
    name: 'a nested __proto__ key',
    body: '{"seenDigest":"DIGEST","x":[{"__proto__":1}]}',
    reason: 'invalid_json',
    jsonError: 'proto_key',
  },
  {
    name: 'nesting deeper than 32',
    body: `{"seenDigest":"DIGEST","x":${deep(40)}}`,
    reason: 'invalid_json',
    jsonError: 'too_deep',
  },
  { name: 'nesting 100 000 deep', body: deep(100_000).slice(0, 60_000), reason: 'invalid_json' },
  {
    name: 'trailing data',
    body: '{"seenDigest":"DIGEST"} {}',
    reason: 'invalid_json',
    jsonError: 'trailing_data',
  },
  { name: 'a trailing comma', body: '{"seenDigest":"DIGEST",}', reason: 'invalid_json', jsonError: 'syntax' },
  { name: 'an empty body', body: '', reason: 'invalid_json', jsonError: 'empty' },
  {
    name: 'a lone surrogate',
    body: '{"seenDigest":"DIGEST","x":"\\ud800"}',
    reason: 'invalid_json',
    jsonError: 'lone_surrogate',
  },
  {
    name: 'an unsafe integer',
    body: '{"seenDigest":"DIGEST","x":9007199254740993}',
    reason: 'invalid_json',
    jsonError: 'unsafe_integer',
  },
];

describe('strict JSON bodies', () => {
  for (const c of CASES) {
    it(`refuses ${c.name} with 400 ${c.reason}${c.jsonError ? ` (${c.jsonError})` : ''}`, async () => {
      const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        rawBody: c.body.replaceAll('DIGEST', proposal.digest),
      });
      expect(r.status).toBe(400);
      expect(r.body['reason']).toBe(c.reason);
      if (c.jsonError) expect(r.body['jsonError']).toBe(c.jsonError);
      expect(typeof r.body['message']).toBe('string');
      expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
    });
  }

  it('refuses invalid UTF-8 with 400 invalid_json', async () => {
    const response = await fetch(`${h.url}/api/v1/proposals/${proposal.id}/approve`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${h.tenants.acme.operators.approver.token}`,
        'content-type': 'application/json',
      },
      body: Buffer.concat([Buffer.from('{"seenDigest":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { reason: string }).reason).toBe('invalid_json');
  });

  it('refuses a form-encoded or text body with 415 unsupported_media_type', async () => {
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        rawBody: `seenDigest=${proposal.digest}`,
        headers: { 'content-type': type },
      });
      expect(r.status).toBe(415);
      expect(r.body['reason']).toBe('unsupported_media_type');
    }
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
  });

  it('refuses a declared charset other than UTF-8 with 415 unsupported_media_type, before reading the body', async () => {
    const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: proposal.digest },
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(r.status).toBe(415);
    expect(r.body['reason']).toBe('unsupported_media_type');
    expect(r.body['message']).toBe(
      'charset "latin1" is not accepted: send the body as application/json in UTF-8 (charset=utf-8, or no charset)',
    );
    for (const type of [
      'application/json; charset=ISO-8859-1',
      'application/json;charset=utf-16',
      'application/json; charset="windows-1252"',
      'application/json; charset=',
      // A second charset cannot slip past a first, UTF-8 one.
      'application/json; charset=utf-8; charset=latin1',
    ]) {
      const refused = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        body: { seenDigest: proposal.digest },
        headers: { 'content-type': type },
      });
      expect([type, refused.status, refused.body['reason']]).toEqual([type, 415, 'unsupported_media_type']);
    }
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
  });

  it('reads a body declared utf-8, UTF-8, utf8 or "utf-8" (a non-object body reaches the 422 past the media check)', async () => {
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset=utf8',
      'application/json; charset="utf-8"',
      'Application/JSON; Charset=Utf-8',
    ]) {
      const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        rawBody: '[]',
        headers: { 'content-type': type },
      });
      expect([type, r.status, r.body['reason']]).toEqual([type, 422, 'invalid_request']);
    }
  });

  it('refuses a console form declared in a charset other than UTF-8 with 415 unsupported_media_type', async () => {
    const client = new ConsoleClient(h.url);
    const csrf = hidden((await client.get('/login')).html, 'csrf');
    const fields = { csrf, email: 'nobody@acme.test', password: 'not-the-password' };
    const latin1 = await client.post('/login', fields, {
      'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1',
    });
    expect(latin1.status).toBe(415);
    expect(latin1.html).toContain('<code class="reason-code">unsupported_media_type</code>');
    // The same form declared UTF-8 is read: a wrong password, 401.
    const utf8 = await client.post('/login', fields, {
      'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
    });
    expect(utf8.status).toBe(401);
  });

  it('refuses a JSON body that is not an object with 422 invalid_request', async () => {
    const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      rawBody: '[]',
    });
    expect(r.status).toBe(422);
    expect(r.body['reason']).toBe('invalid_request');
  });

  it('accepts the same approval once the body is well-formed', async () => {
    const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      rawBody: `{"seenDigest":"${proposal.digest}"}`,
    });
    expect(r.status).toBe(200);
    expect(r.body['outcome']).toMatchObject({ kind: 'succeeded' });
  });
});

describe('bodies over the limit: 413 body_too_large on the API and the console, as on MCP', () => {
  const LIMIT = 64 * 1024;
  const tooLarge = {
    type: 'urn:countersign:problem:body_too_large',
    title: 'Body too large',
    status: 413,
    detail: `the request body is larger than ${LIMIT} bytes`,
    reason: 'body_too_large',
    message: `the request body is larger than ${LIMIT} bytes`,
    maxBytes: LIMIT,
  };
  // Its own pending proposal: the approval above executed the file's first one.
  let pending: { id: string; digest: string };
  beforeAll(async () => {
    const invoice = freshInvoice(h.world, 'acme');
    pending = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
      resource: `invoice:${invoice}`,
    });
  });

  it('refuses a JSON body over 64 KiB by its Content-Length, closing the connection', async () => {
    const r = await call(h, 'POST', `/api/v1/proposals/${pending.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      rawBody: `{"seenDigest":"${pending.digest}","pad":"${'x'.repeat(70_000)}"}`,
    });
    expect(r.status).toBe(413);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.headers.get('connection')).toBe('close');
    expect(r.body).toEqual(tooLarge);
    expect((await h.engine.proposals.get('acme', pending.id))?.status).toBe('pending');
  });

  it('stops reading a chunked JSON body at the limit and answers while the client is still sending', async () => {
    const max = 32 * 1024 * 1024;
    const flood = await chunkedFlood(`${h.url}/api/v1/proposals/${pending.id}/approve`, {
      headers: {
        authorization: `Bearer ${h.tenants.acme.operators.approver.token}`,
        'content-type': 'application/json',
      },
      max,
      prefix: `{"seenDigest":"${pending.digest}","pad":"`,
      suffix: '"}',
    });
    expect(flood.status).toBe(413);
    expect(flood.finished).toBe(false);
    expect(flood.sentAtResponse).toBeLessThan(max / 4);
    expect(flood.headers['connection']).toBe('close');
    expect(JSON.parse(flood.body)).toEqual(tooLarge);
    expect((await h.engine.proposals.get('acme', pending.id))?.status).toBe('pending');
  });

  it('holds a JSON body whose Content-Length lies to the limit, reading no further', async () => {
    const lying = lyingBody(8 * 1024 * 1024);
    const r = await h.app.fetch(
      new Request(`${h.url}/api/v1/proposals/${pending.id}/approve`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${h.tenants.acme.operators.approver.token}`,
          'content-type': 'application/json',
          'content-length': '10',
        },
        body: lying.stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(lying.produced()).toBeLessThanOrEqual(LIMIT + 4096);
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual(tooLarge);
  });

  it('refuses a console form over 256 KiB with a 413 body_too_large page', async () => {
    const client = new ConsoleClient(h.url);
    const csrf = hidden((await client.get('/login')).html, 'csrf');
    const r = await client.post('/login', { csrf, email: 'nobody@acme.test', password: 'x'.repeat(300_000) });
    expect(r.status).toBe(413);
    expect(r.response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.html).toContain('<code class="reason-code">body_too_large</code>');
  });
});
