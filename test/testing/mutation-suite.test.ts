import { AssertionError } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fileDelete, messageSend } from '../../src/demo/demo-world.js';
import { currencyCode, defineOperation, minorUnits } from '../../src/index.js';
import {
  type MutationCase,
  mutationSuite,
  rotateText,
  type SuiteCase,
  TestingKitError,
} from '../../src/testing/index.js';

/** Runs one generated case; returns its error, or undefined when it passed. */
async function outcomeOf(c: SuiteCase): Promise<Error | undefined> {
  try {
    await c.run();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

async function failuresOf(cases: readonly SuiteCase[]): Promise<{ name: string; error: Error }[]> {
  const out: { name: string; error: Error }[] = [];
  for (const c of cases) {
    const error = await outcomeOf(c);
    if (error) out.push({ name: c.name, error });
  }
  return out;
}

const summary = (cases: readonly MutationCase[]) =>
  cases.map((c) => [c.mutation, c.path, c.expected.kind === 'approved' ? 'approved' : c.expected.reason]);

const MESSAGE = {
  channel: 'email',
  recipients: ['ada@acme.test', 'bob@acme.test'],
  attachments: [{ id: 'att-1', content_version: 'v3' }],
  mode: 'draft',
} as const;

describe('mutationSuite: the cases it generates', () => {
  it('one case per dimension of the file-deletion scope, each with its expected reason', () => {
    const cases = mutationSuite(fileDelete, {
      resource_id: '/exports/run-81/output.tmp',
      recursive: false,
      only: 'generated_files',
    });
    expect(summary(cases)).toEqual([
      ['unchanged', '$', 'approved'],
      ['key_order', '$', 'approved'],
      ['added_field', '$.unreviewed_option', 'invalid_requested_scope'],
      ['removed', '$.only', 'invalid_requested_scope'],
      ['changed', '$.only', 'scope_mismatch'],
      ['removed', '$.operation', 'invalid_requested_scope'],
      ['changed', '$.operation', 'invalid_requested_scope'],
      ['removed', '$.recursive', 'invalid_requested_scope'],
      ['changed', '$.recursive', 'scope_mismatch'],
      ['retyped', '$.recursive', 'invalid_requested_scope'],
      ['removed', '$.resource_id', 'invalid_requested_scope'],
      ['changed', '$.resource_id', 'scope_mismatch'],
      ['removed', '$.tenant', 'invalid_requested_scope'],
      ['changed', '$.tenant', 'scope_mismatch'],
    ]);
    const byName = new Map(
      cases.map((c) => [`${c.mutation} ${c.path}`, c.requested as Record<string, unknown>]),
    );
    expect(byName.get('changed $.only')?.['only']).toBe('all_files');
    expect(byName.get('changed $.recursive')?.['recursive']).toBe(true);
    expect(byName.get('retyped $.recursive')?.['recursive']).toBe(0);
    // A swapped path keeps its shape, so it is a valid resource id that differs: a scope_mismatch.
    expect(byName.get('changed $.resource_id')?.['resource_id']).toBe('/fyqpsut/svo-92/pvuqvu.unq');
    expect(byName.get('changed $.tenant')?.['tenant']).toBe('ufobou-b');
  });

  it('sets: a member added and removed are refused at the set path, another order is approved; nested fields inside members too', () => {
    const cases = mutationSuite(messageSend, MESSAGE);
    const rows = summary(cases).map((r) => r.join(' '));
    expect(rows).toEqual(
      expect.arrayContaining([
        'member_added $.recipients scope_mismatch',
        'member_removed $.recipients scope_mismatch',
        'set_reordered $.recipients approved',
        'changed $.recipients[0] scope_mismatch',
        'member_added $.attachments scope_mismatch',
        'member_removed $.attachments scope_mismatch',
        'added_field $.attachments[0].unreviewed_option invalid_requested_scope',
        'changed $.attachments[0].content_version scope_mismatch',
        'removed $.attachments[0].id invalid_requested_scope',
        'changed $.mode scope_mismatch',
        'changed $.channel scope_mismatch',
      ]),
    );
    // A change inside a set member shows at the set's own path (sets are diffed by member).
    const inMember = cases.find(
      (c) => c.mutation === 'changed' && c.path === '$.attachments[0].content_version',
    );
    expect(inMember?.expected).toEqual({ kind: 'refused', reason: 'scope_mismatch', path: '$.attachments' });
    const mode = cases.find((c) => c.mutation === 'changed' && c.path === '$.mode');
    expect(mode?.requested).toMatchObject({ mode: 'send' });
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it('sequences: reordered and an appended member are refused as scope_mismatch at the sequence', async () => {
    const pipeline = defineOperation({
      kind: 'deploy.run',
      scopeVersion: 1,
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('deploy.run'),
        environment: z.enum(['staging', 'production']),
        steps: z.array(z.string().min(1)).min(1),
      }),
    });
    const cases = mutationSuite(pipeline, { environment: 'staging', steps: ['migrate', 'restart'] });
    const reordered = cases.find((c) => c.mutation === 'reordered');
    expect(reordered?.requested).toMatchObject({ steps: ['restart', 'migrate'] });
    expect(reordered?.expected).toEqual({ kind: 'refused', reason: 'scope_mismatch', path: '$.steps' });
    const appended = cases.find((c) => c.mutation === 'member_added');
    expect(appended?.requested).toMatchObject({ steps: ['migrate', 'restart', 'njhsbuf'] });
    expect(appended?.expected).toEqual({ kind: 'refused', reason: 'scope_mismatch', path: '$.steps' });
    expect(
      cases.find((c) => c.mutation === 'changed' && c.path === '$.environment')?.requested,
    ).toMatchObject({ environment: 'production' });
    expect(await failuresOf(cases)).toEqual([]);
  });

  it('nested objects: changed, removed and an extra field at every level', () => {
    const refund = defineOperation({
      kind: 'order.refund',
      scopeVersion: 1,
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('order.refund'),
        amount_minor: minorUnits().positive(),
        currency: currencyCode(),
        destination: z.strictObject({ kind: z.literal('original_payment'), payment_id: z.string().min(1) }),
      }),
    });
    const paths = mutationSuite(refund, {
      amount_minor: 2700,
      currency: 'USD',
      destination: { kind: 'original_payment', payment_id: 'pay-81' },
    }).map(
      (c) => `${c.mutation} ${c.path} ${c.expected.kind === 'refused' ? c.expected.reason : 'approved'}`,
    );
    expect(paths).toEqual(
      expect.arrayContaining([
        'added_field $.destination.unreviewed_option invalid_requested_scope',
        'removed $.destination.payment_id invalid_requested_scope',
        'changed $.destination.payment_id scope_mismatch',
        'changed $.destination.kind invalid_requested_scope',
        'changed $.amount_minor scope_mismatch',
        'retyped $.amount_minor invalid_requested_scope',
        'changed $.currency scope_mismatch',
      ]),
    );
  });

  it('prefers a change that keeps the scope valid: a bump past a maximum goes down instead', () => {
    const capped = defineOperation({
      kind: 'seat.assign',
      scopeVersion: 1,
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('seat.assign'),
        seats: z.number().int().min(1).max(5),
      }),
    });
    const change = mutationSuite(capped, { seats: 5 }).find(
      (c) => c.mutation === 'changed' && c.path === '$.seats',
    );
    expect(change?.requested).toMatchObject({ seats: 4 });
    expect(change?.expected).toEqual({ kind: 'refused', reason: 'scope_mismatch', path: '$.seats' });
  });

  it('rotateText keeps the shape of a value and changes every letter and digit', () => {
    expect(rotateText('USD')).toBe('VTE');
    expect(rotateText('acct-supplier-7')).toBe('bddu-tvqqmjfs-8');
    expect(rotateText('zZ9')).toBe('aA0');
  });

  it('arguments that do not build a valid scope are a mistake in the test: TestingKitError', () => {
    expect(() =>
      mutationSuite(fileDelete, { resource_id: 'relative/path', recursive: false, only: 'generated_files' }),
    ).toThrow(TestingKitError);
    expect(() =>
      mutationSuite(fileDelete, { resource_id: 'relative/path', recursive: false, only: 'generated_files' }),
    ).toThrow(/\$\.resource_id/);
  });
});

describe('mutationSuite: every case passes on exact scopes', () => {
  it.each([
    ['message.send', () => mutationSuite(messageSend, MESSAGE)],
    [
      'file.delete',
      () =>
        mutationSuite(fileDelete, {
          resource_id: '/exports/run-81/output.tmp',
          recursive: true,
          only: 'all_files',
        }),
    ],
  ])('%s', async (_kind, build) => {
    const cases = build();
    expect(cases.length).toBeGreaterThan(10);
    expect(await failuresOf(cases)).toEqual([]);
  });
});

describe('mutationSuite: a scope that lets a change ride on an old approval fails loudly', () => {
  it('a nested object that strips unknown keys: the extra-field case fails and names the path', async () => {
    const loose = defineOperation({
      kind: 'payout.send',
      scopeVersion: 1,
      // z.object (not strict) strips an unreviewed key: the requested scope then digests as approved.
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('payout.send'),
        destination: z.object({ account_id: z.string() }),
      }),
    });
    const failures = await failuresOf(mutationSuite(loose, { destination: { account_id: 'acct-7' } }));
    expect(failures.map((f) => f.name)).toEqual([
      'added_field $.destination.unreviewed_option: unreviewed field unreviewed_option: true added → scope_mismatch',
    ]);
    const error = failures[0]!.error;
    expect(error).toBeInstanceOf(AssertionError);
    expect(error.message).toContain('payout.send: added_field $.destination.unreviewed_option');
    expect(error.message).toContain(
      'was NOT refused (expected scope_mismatch at $.destination.unreviewed_option)',
    );
    expect(error.message).toContain('z.strictObject');
  });

  it('a field with a default: removing the restriction falls back to it, and the removal case fails', async () => {
    const defaulted = defineOperation({
      kind: 'file.purge',
      scopeVersion: 1,
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('file.purge'),
        path: z.string(),
        recursive: z.boolean().default(false),
      }),
    });
    const failures = await failuresOf(
      mutationSuite(defaulted, { path: '/exports/run-81', recursive: false }),
    );
    expect(failures.map((f) => f.name)).toEqual(['removed $.recursive: removed → scope_mismatch']);
    expect(failures[0]!.error.message).toContain('was NOT refused');
  });

  it('a coercing number: "24049" rides on an approval of 24049, and the retyped case fails', async () => {
    const coercing = defineOperation({
      kind: 'invoice.pay',
      scopeVersion: 1,
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('invoice.pay'),
        amount_minor: z.coerce.number().int(),
        currency: currencyCode(),
      }),
    });
    const failures = await failuresOf(mutationSuite(coercing, { amount_minor: 24049, currency: 'USD' }));
    expect(failures.map((f) => f.name)).toEqual([
      'retyped $.amount_minor: retyped 24049 → "24049" (string) → scope_mismatch',
    ]);
    expect(failures[0]!.error).toBeInstanceOf(AssertionError);
  });

  it('an array without a set rule is a sequence: the suite expects its reordering refused, never approved', async () => {
    const asSequence = defineOperation({
      kind: 'email.blast',
      scopeVersion: 1,
      scope: z.strictObject({
        tenant: z.string(),
        operation: z.literal('email.blast'),
        audience: z.array(z.string()),
      }),
    });
    const cases = mutationSuite(asSequence, { audience: ['a@x.test', 'b@x.test'] });
    const reordered = cases.find((c) => c.mutation === 'reordered');
    expect(reordered?.expected).toEqual({ kind: 'refused', reason: 'scope_mismatch', path: '$.audience' });
    expect(await outcomeOf(reordered!)).toBeUndefined();
    expect(cases.some((c) => c.mutation === 'set_reordered')).toBe(false);
  });
});
