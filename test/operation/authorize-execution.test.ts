import { describe, expect, it } from 'vitest';
import { fileDelete, invoicePayScope, messageSend } from '../../src/demo/demo-world.js';
import { type AnyOperation, defineOperation, digest, last4 } from '../../src/index.js';
import { canonicalize } from '../../src/canonical/canonicalize.js';
import { sha256Hex } from '../../src/canonical/digest.js';
import { parseStoredJson } from '../../src/canonical/stored-json.js';
import { authorizeStoredExecution } from '../../src/operation/authorize-execution.js';
import { authorizeExecution, buildScope } from '../../src/operation/index.js';

// The third note's payment example, translated: one approved scope, one field changed per case.
const payInvoice = defineOperation({
  kind: 'invoice.pay',
  scopeVersion: 1,
  scope: invoicePayScope,
  fields: { destination_account_id: { redact: last4 } },
});

const BASE_PAYMENT = {
  tenant: 'tenant-a',
  operation: 'invoice.pay',
  invoice_id: 'inv-104',
  destination_account_id: 'acct-supplier-7',
  amount_minor: 24_000,
  currency: 'USD',
};

function approvalOf(operation: AnyOperation, raw: unknown, scopeVersion = 1) {
  const built = buildScope(operation, raw);
  if (built.kind !== 'ok') throw new Error(JSON.stringify(built.issues));
  return { operation, scopeVersion, scope: built.scope, digest: built.digest.sha256 };
}

describe('authorizeExecution: the payment suite of the third note', () => {
  const approval = approvalOf(payInvoice, BASE_PAYMENT);

  it.each([
    ['tenant', 'tenant-b', 'scope_mismatch', '$.tenant: "tenant-a" -> "tenant-b"'],
    ['operation', 'schedule_payment', 'invalid_requested_scope', undefined],
    ['invoice_id', 'inv-999', 'scope_mismatch', '$.invoice_id: "inv-104" -> "inv-999"'],
    [
      'destination_account_id',
      'acct-personal-2',
      'scope_mismatch',
      '$.destination_account_id: "…er-7" -> "…al-2"',
    ],
    ['amount_minor', 240_000, 'scope_mismatch', '$.amount_minor: 24000 -> 240000'],
    ['currency', 'EUR', 'scope_mismatch', '$.currency: "USD" -> "EUR"'],
  ] as const)('a changed %s is denied as %s', (field, value, reason, line) => {
    const decision = authorizeExecution(approval, { ...BASE_PAYMENT, [field]: value });
    expect(decision.kind).toBe('denied');
    expect(decision.reason).toBe(reason);
    if (decision.kind !== 'denied') return;
    if (line) {
      expect(decision.diff).toHaveLength(1);
      expect(decision.message).toContain(line);
    } else {
      expect(decision.issues.map((i) => i.path)).toEqual([`$.${field}`]);
    }
  });

  it('an unreviewed option (expedite: true) fails closed as invalid_requested_scope, naming the field', () => {
    const decision = authorizeExecution(approval, { ...BASE_PAYMENT, expedite: true });
    expect(decision).toMatchObject({ kind: 'denied', reason: 'invalid_requested_scope' });
    if (decision.kind === 'denied')
      expect(decision.issues).toEqual([{ path: '$.expedite', message: 'unknown field' }]);
  });

  it('a missing field is invalid_requested_scope', () => {
    const { currency: _dropped, ...missing } = BASE_PAYMENT;
    const decision = authorizeExecution(approval, missing);
    expect(decision.reason).toBe('invalid_requested_scope');
    if (decision.kind === 'denied') expect(decision.issues[0]?.path).toBe('$.currency');
  });

  it('a boolean where an integer is expected is invalid_requested_scope, never coerced', () => {
    expect(authorizeExecution(approval, { ...BASE_PAYMENT, amount_minor: true }).reason).toBe(
      'invalid_requested_scope',
    );
    expect(authorizeExecution(approval, { ...BASE_PAYMENT, amount_minor: 240.49 }).reason).toBe(
      'invalid_requested_scope',
    );
    expect(authorizeExecution(approval, { ...BASE_PAYMENT, amount_minor: '24000' }).reason).toBe(
      'invalid_requested_scope',
    );
  });

  it('the unchanged request is approved, whatever the key insertion order', () => {
    expect(authorizeExecution(approval, { ...BASE_PAYMENT })).toMatchObject({
      kind: 'allowed',
      reason: 'approved',
    });
    const reversed = Object.fromEntries(Object.entries(BASE_PAYMENT).reverse());
    expect(authorizeExecution(approval, reversed)).toMatchObject({ kind: 'allowed', reason: 'approved' });
  });

  it('checks in order: unsupported version before a corrupt record before an invalid request', () => {
    const v2Only = defineOperation({ kind: 'invoice.pay', scopeVersion: 2, scope: invoicePayScope });
    const corrupt = { ...approval, digest: 'f'.repeat(64) };
    expect(authorizeExecution({ ...corrupt, operation: v2Only }, { expedite: true }).reason).toBe(
      'unsupported_scope_version',
    );
    expect(authorizeExecution(corrupt, { expedite: true }).reason).toBe('corrupt_approval_record');
    const edited = { ...approval, scope: { ...(approval.scope as object), amount_minor: 240_000 } };
    expect(authorizeExecution(edited, { ...BASE_PAYMENT, amount_minor: 240_000 }).reason).toBe(
      'corrupt_approval_record',
    );
  });

  it('the stored scope digest is the SHA-256 of its canonical JSON', () => {
    expect(approval.digest).toBe(digest(BASE_PAYMENT).sha256);
  });
});

describe('authorizeStoredExecution: the same answers from a stored row', () => {
  // An approval as the command guard builds it from a row: the scope parsed from the stored text.
  const stored = (text: string, scopeDigest: string, operation: AnyOperation = payInvoice) => ({
    approval: { operation, scopeVersion: 1, scope: parseStoredJson(text), digest: scopeDigest },
    text,
  });
  const text = canonicalize(BASE_PAYMENT);
  const intact = stored(text, sha256Hex(text));
  const v2Only = defineOperation({ kind: 'invoice.pay', scopeVersion: 2, scope: invoicePayScope });
  const edited = text.replace('24000', '240000');
  const rows = {
    intact,
    'digest tampered': stored(text, 'f'.repeat(64)),
    'text edited, digest kept': stored(edited, sha256Hex(text)),
    'text not canonical, digest of its bytes': stored(` ${text}`, sha256Hex(` ${text}`)),
    'text and digest rewritten together': stored(edited, sha256Hex(edited)),
    'scope version no longer supported': stored(text, sha256Hex(text), v2Only),
  };
  const requests = {
    unchanged: { ...BASE_PAYMENT },
    'reordered keys': Object.fromEntries(Object.entries(BASE_PAYMENT).reverse()),
    'amount changed': { ...BASE_PAYMENT, amount_minor: 240_000 },
    'account changed': { ...BASE_PAYMENT, destination_account_id: 'acct-personal-2' },
    'an unreviewed option': { ...BASE_PAYMENT, expedite: true },
  };

  for (const [row, { approval, text: storedText }] of Object.entries(rows)) {
    for (const [request, requested] of Object.entries(requests)) {
      it(`${row}, ${request}: the decision authorizeExecution gives`, () => {
        const expected = authorizeExecution(approval, requested);
        expect(authorizeStoredExecution(approval, requested, storedText)).toEqual(expected);
      });
    }
  }

  it('an edited or tampered row is never allowed, whatever is requested', () => {
    for (const row of [
      'digest tampered',
      'text edited, digest kept',
      'text not canonical, digest of its bytes',
    ] as const) {
      const { approval, text: storedText } = rows[row];
      for (const requested of Object.values(requests))
        expect(authorizeStoredExecution(approval, requested, storedText).kind).toBe('denied');
      expect(authorizeStoredExecution(approval, BASE_PAYMENT, storedText).reason).toBe(
        'corrupt_approval_record',
      );
    }
  });
});

describe('the first note: extra keys are not metadata', () => {
  const approval = approvalOf(payInvoice, BASE_PAYMENT);
  it.each([
    ['note', 'customer is VIP'],
    ['notify', true],
    ['order_id', 'ord-2'],
  ])('an extra %s is refused', (key, value) => {
    const decision = authorizeExecution(approval, { ...BASE_PAYMENT, [key]: value });
    expect(decision.reason).toBe('invalid_requested_scope');
    if (decision.kind === 'denied')
      expect(decision.issues).toEqual([{ path: `$.${key}`, message: 'unknown field' }]);
  });

  it('a requested_at timestamp is not scope: it never reaches the freeze', () => {
    const withClock = { ...BASE_PAYMENT, requested_at: '2026-11-29T12:00:00Z' };
    expect(buildScope(payInvoice, withClock).kind).toBe('invalid');
    // Stripped at the model-facing boundary, the same scope digests the same on every retry.
    const { requested_at: _clock, ...scope } = withClock;
    expect(approvalOf(payInvoice, scope).digest).toBe(approval.digest);
  });
});

describe('the outbound message scope', () => {
  const base = {
    tenant: 'acme',
    operation: 'message.send',
    channel: 'email',
    recipients: ['dana@example.test', 'coach@example.test'],
    attachments: [{ id: 'att-roster', content_version: 'v3' }],
    mode: 'draft',
  };
  const approval = approvalOf(messageSend, base);

  it('recipients are a set: order and duplicates do not matter', () => {
    const decision = authorizeExecution(approval, {
      ...base,
      recipients: ['coach@example.test', 'dana@example.test', 'coach@example.test'],
    });
    expect(decision).toMatchObject({ kind: 'allowed', reason: 'approved' });
  });

  it('a hidden recipient added is scope_mismatch naming it', () => {
    const decision = authorizeExecution(approval, {
      ...base,
      recipients: [...base.recipients, 'all-parents@lists.example.test'],
    });
    expect(decision.reason).toBe('scope_mismatch');
    if (decision.kind === 'denied')
      expect(decision.diff).toEqual([
        { path: '$.recipients', change: 'added', to: '"all-parents@lists.example.test"' },
      ]);
  });

  it('an attachment added after review is scope_mismatch', () => {
    const decision = authorizeExecution(approval, {
      ...base,
      attachments: [...base.attachments, { id: 'att-payroll', content_version: 'v1' }],
    });
    expect(decision.reason).toBe('scope_mismatch');
    if (decision.kind === 'denied')
      expect(decision.diff[0]).toMatchObject({ path: '$.attachments', change: 'added' });
  });

  it('a new content version of the same attachment is scope_mismatch', () => {
    const decision = authorizeExecution(approval, {
      ...base,
      attachments: [{ id: 'att-roster', content_version: 'v4' }],
    });
    expect(decision.reason).toBe('scope_mismatch');
  });

  it('draft → send is scope_mismatch', () => {
    const decision = authorizeExecution(approval, { ...base, mode: 'send' });
    expect(decision.reason).toBe('scope_mismatch');
    if (decision.kind === 'denied')
      expect(decision.diff).toEqual([{ path: '$.mode', change: 'changed', from: '"draft"', to: '"send"' }]);
  });
});

describe('the file deletion scope', () => {
  const base = {
    tenant: 'acme',
    operation: 'file.delete',
    resource_id: '/exports/run-81/output.tmp',
    recursive: false,
    only: 'generated_files',
  };
  const approval = approvalOf(fileDelete, base);

  it('the file moving to its parent directory is scope_mismatch', () => {
    const decision = authorizeExecution(approval, { ...base, resource_id: '/exports/run-81' });
    expect(decision.reason).toBe('scope_mismatch');
    if (decision.kind === 'denied') expect(decision.diff[0]?.path).toBe('$.resource_id');
  });

  it('the recursive flag flipped is scope_mismatch', () => {
    expect(authorizeExecution(approval, { ...base, recursive: true }).reason).toBe('scope_mismatch');
  });

  it('a removed qualifier fails closed, never falls back to a permissive default', () => {
    const { only: _qualifier, ...broadened } = base;
    const decision = authorizeExecution(approval, broadened);
    expect(decision.reason).toBe('invalid_requested_scope');
    if (decision.kind === 'denied') expect(decision.issues[0]?.path).toBe('$.only');
  });

  it('an unnormalized path is refused before review', () => {
    expect(buildScope(fileDelete, { ...base, resource_id: '/exports/run-81/../secrets' }).kind).toBe(
      'invalid',
    );
    expect(buildScope(fileDelete, { ...base, resource_id: 'reports/weekly.csv' }).kind).toBe('invalid');
  });
});
