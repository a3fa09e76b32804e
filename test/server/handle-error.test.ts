import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { REASONS, UnstorableValueError } from '../../src/index.js';
import type { AppEnv } from '../../src/server/app-env.js';
import { errorHandler } from '../../src/server/handle-error.js';
import { HttpProblem, PROBLEM_TITLES, problemType, SERVER_REASONS } from '../../src/http/http-problem.js';

type Logged = { level: string; fields: Record<string, unknown>; message: string };
function logger(into: Logged[]) {
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      into.push({ level, fields, message });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function appThrowing(error: unknown, logged: Logged[]) {
  const app = new Hono<AppEnv>();
  app.onError(errorHandler(logger(logged)));
  app.post('/api/v1/things', () => {
    throw error;
  });
  return app;
}

describe('errors becoming responses', () => {
  it('a value PostgreSQL cannot store is the request’s fault: 422 invalid_request naming the column, not a 500', async () => {
    const logged: Logged[] = [];
    const response = await appThrowing(
      new UnstorableValueError('countersign_proposals', 'resource'),
      logged,
    ).request('/api/v1/things', { method: 'POST' });
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const message =
      'countersign_proposals.resource: text with a NUL character or a lone surrogate cannot be stored exactly';
    expect(await response.json()).toEqual({
      type: 'urn:countersign:problem:invalid_request',
      title: 'Invalid request',
      status: 422,
      detail: message,
      reason: 'invalid_request',
      message,
    });
    expect(logged.map((l) => [l.level, l.message])).toEqual([['warn', 'unstorable value refused']]);
  });

  it('anything else is a bug: 500 internal_error with a correlation id, logged as an error, no stack', async () => {
    const logged: Logged[] = [];
    const response = await appThrowing(new Error('boom at /secret/path'), logged).request('/api/v1/things', {
      method: 'POST',
    });
    expect(response.status).toBe(500);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body['reason']).toBe('internal_error');
    expect(String(body['message'])).not.toContain('boom');
    expect(logged[0]?.level).toBe('error');
    expect(logged[0]?.fields['correlationId']).toBe(body['correlationId']);
  });
});

describe('problem details', () => {
  it('an HttpProblem keeps its own members beside the standard ones, which they never overwrite', async () => {
    const app = appThrowing(
      new HttpProblem(429, 'rate_limited', 'wait', {
        extra: {
          limit: 'agent_proposals',
          retryAfterSeconds: 7,
          status: 200,
          type: 'forged',
          title: 'forged',
        },
        headers: { 'Retry-After': '7' },
      }),
      [],
    );
    const response = await app.request('/api/v1/things', { method: 'POST' });
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual({
      type: 'urn:countersign:problem:rate_limited',
      title: 'Rate limited',
      status: 429,
      detail: 'wait',
      reason: 'rate_limited',
      message: 'wait',
      limit: 'agent_proposals',
      retryAfterSeconds: 7,
    });
  });

  it('a console path still answers an HTML page', async () => {
    const app = new Hono<AppEnv>();
    app.onError(errorHandler(logger([])));
    app.get('/proposals/x', () => {
      throw new HttpProblem(404, 'not_found', 'no such proposal');
    });
    const response = await app.request('/proposals/x');
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain('<code class="reason-code">not_found</code>');
  });

  it('every reason has a title and a type URI of its own', () => {
    const reasons = [
      ...new Set([
        ...REASONS.filter((r) => r !== 'approved' && r !== 'approved_by_grant'),
        ...SERVER_REASONS,
      ]),
    ];
    expect(Object.keys(PROBLEM_TITLES).sort()).toEqual([...reasons].sort());
    expect(new Set(reasons.map(problemType)).size).toBe(reasons.length);
    expect(problemType('stale_view')).toBe('urn:countersign:problem:stale_view');
  });
});
