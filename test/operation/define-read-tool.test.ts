import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineReadTool, OperationDefinitionError } from '../../src/index.js';
import { isServerOwnedField, SERVER_OWNED_FIELDS } from '../../src/operation/index.js';

const read = () => [];

function withInput(input: z.ZodType) {
  return () => defineReadTool({ name: 'list_things', description: 'Lists things.', input, read });
}

describe('defineReadTool', () => {
  it('defines a read tool whose input is a strict object without server-owned fields', () => {
    const tool = defineReadTool({
      name: 'list_open_invoices',
      description: 'Lists open invoices.',
      input: z.strictObject({
        currency: z.string().optional(),
        filter: z.strictObject({ supplier: z.string() }),
      }),
      read: ({ currency }, scope) => [{ tenant: scope.tenant, currency }],
    });
    expect(tool.name).toBe('list_open_invoices');
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool.input.safeParse({ filter: { supplier: 'x' }, extra: 1 }).success).toBe(false);
  });

  it.each([
    'tenant',
    'tenant_id',
    'tenantId',
    'Tenant-ID',
    'section',
    'actor',
    'agent',
    'agent_id',
    'runId',
    'run_id',
    'run',
    'resource',
    'requested_by',
    'principal',
  ])('refuses a top-level input field named %s at define time', (field) => {
    expect(withInput(z.strictObject({ [field]: z.string() }))).toThrow(OperationDefinitionError);
    expect(withInput(z.strictObject({ [field]: z.string() }))).toThrow(/server-owned/);
  });

  it('refuses a server-owned name at any depth: nested objects, arrays of objects, unions', () => {
    expect(withInput(z.strictObject({ filter: z.strictObject({ tenant: z.string() }) }))).toThrow(
      /"\$\.filter\.tenant" is server-owned/,
    );
    expect(withInput(z.strictObject({ rows: z.array(z.strictObject({ run_id: z.string() })) }))).toThrow(
      /run_id" is server-owned/,
    );
    expect(
      withInput(
        z.strictObject({
          by: z.union([z.strictObject({ id: z.string() }), z.strictObject({ agent: z.string() })]),
        }),
      ),
    ).toThrow(/agent" is server-owned/);
  });

  it('requires strict objects, at the top and nested, so an extra field is refused and never stripped', () => {
    expect(withInput(z.object({ currency: z.string() }))).toThrow(/must be z.strictObject/);
    expect(withInput(z.strictObject({ filter: z.object({ supplier: z.string() }) }))).toThrow(
      /input object at \$\.filter must be z.strictObject/,
    );
    expect(withInput(z.string())).toThrow(/must be a z.strictObject/);
  });

  it('refuses names that are not lower-case words, or that countersign’s own tools use', () => {
    for (const name of ['ListInvoices', 'list-invoices', '', 'list__x', `a${'b'.repeat(64)}`]) {
      expect(() => defineReadTool({ name, description: 'x', input: z.strictObject({}), read })).toThrow(
        OperationDefinitionError,
      );
    }
    for (const name of ['propose_invoice_pay', 'get_proposal']) {
      expect(() => defineReadTool({ name, description: 'x', input: z.strictObject({}), read })).toThrow(
        /reserved/,
      );
    }
    expect(() =>
      defineReadTool({ name: 'list_x', description: ' ', input: z.strictObject({}), read }),
    ).toThrow(/description/);
  });

  it('matches server-owned names without case, _ or -, and only those', () => {
    expect(SERVER_OWNED_FIELDS).toContain('tenant');
    expect(isServerOwnedField('TENANT_ID')).toBe(true);
    expect(isServerOwnedField('invoice_id')).toBe(false);
    expect(isServerOwnedField('currency')).toBe(false);
    expect(isServerOwnedField('tenants_count')).toBe(false);
  });
});
