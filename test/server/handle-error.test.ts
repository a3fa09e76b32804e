import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { UnstorableValueError } from '../../src/index.js';
import type { AppEnv } from '../../src/server/app-env.js';
import { errorHandler } from '../../src/server/handle-error.js';

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
    expect(await response.json()).toEqual({
      reason: 'invalid_request',
      message:
        'countersign_proposals.resource: text with a NUL character or a lone surrogate cannot be stored exactly',
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
