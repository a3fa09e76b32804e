import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEngine, defineOperation, OperationContractError } from '../../src/index.js';
import { BACKENDS, type BackendName, storeOn, warmUp } from '../support/backends.js';

function noteOperation(preview: (text: string) => unknown) {
  return defineOperation({
    kind: 'note.add',
    scopeVersion: 1,
    scope: z.strictObject({ tenant: z.string(), operation: z.literal('note.add'), text: z.string() }),
    request: z.strictObject({ text: z.string() }),
    arguments: z.strictObject({ text: z.string() }),
    preview: z.strictObject({ title: z.string(), text: z.string() }),
    fields: { text: { highImpact: true } },
    prepare: async ({ text }) => ({ arguments: { text }, preview: preview(text) }),
  });
}

async function propose(backend: BackendName, operation: ReturnType<typeof noteOperation>) {
  const { store, dispose } = await storeOn(backend);
  const engine = await createEngine({ store, operations: [operation] });
  try {
    return await engine.proposals.propose({
      operation: 'note.add',
      request: { text: 'hello' },
      tenant: 'acme',
      resource: 'note:1',
      requestedBy: 'agent:acme',
      runId: 'run-1',
    });
  } finally {
    await engine.close();
    await dispose();
  }
}

describe('the preview schema', () => {
  it('keeps the operation’s declarations: the schema and highImpact fields', () => {
    const op = noteOperation((text) => ({ title: 'Add a note', text }));
    expect(op.preview).toBeInstanceOf(z.ZodObject);
    expect(op.fields['text']?.highImpact).toBe(true);
  });
});

describe.each(BACKENDS)('the preview schema on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);

  it('accepts a preview that matches it', async () => {
    const r = await propose(
      backend,
      noteOperation((text) => ({ title: 'Add a note', text })),
    );
    expect(r.kind).toBe('proposed');
  });

  it('makes no proposal from a preview it refuses: a bug in prepare, never shown to anyone', async () => {
    await expect(
      propose(
        backend,
        noteOperation((text) => ({ title: 'Add a note', body: text })),
      ),
    ).rejects.toThrow(OperationContractError);
  });
});
