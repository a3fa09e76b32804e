import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventBody, eventLeafHash, leafHash } from '../../src/audit/chain.js';
import type { AuditEventDraft } from '../../src/audit/event.js';
import { CanonicalizationError } from '../../src/canonical/errors.js';

type Fields = AuditEventDraft & { readonly id: string; readonly seq: number };

/** The generic way: the body as an object, canonicalized whole. */
function generic(event: Fields): string | CanonicalizationError {
  try {
    return leafHash(eventBody(event));
  } catch (error) {
    if (error instanceof CanonicalizationError) return error;
    throw error;
  }
}

function fast(event: Fields): string | CanonicalizationError {
  try {
    return eventLeafHash(event);
  } catch (error) {
    if (error instanceof CanonicalizationError) return error;
    throw error;
  }
}

// Text with lone surrogates, escapes and astral characters, as model-made labels can hold.
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));
const nullableText = fc.option(text, { nil: null });
const number = fc.oneof(fc.integer(), fc.double(), fc.constant(-0));
const event: fc.Arbitrary<Fields> = fc.record({
  id: text,
  seq: number,
  tenant: text,
  proposalId: text,
  attemptId: nullableText,
  runId: text,
  step: text as fc.Arbitrary<Fields['step']>,
  actor: text,
  reason: nullableText as fc.Arbitrary<Fields['reason']>,
  digests: fc.dictionary(text, text) as fc.Arbitrary<Fields['digests']>,
  commandId: nullableText,
  detail: fc.oneof(fc.jsonValue(), fc.anything()) as fc.Arbitrary<Fields['detail']>,
  at: number,
});

const known: Fields = {
  id: 'evt_01',
  seq: 3,
  tenant: 'acme',
  proposalId: 'prp_01',
  attemptId: 'att_01',
  runId: 'run-1',
  step: 'approved',
  actor: 'user:ada@acme.test',
  reason: null,
  digests: { approved: 'a'.repeat(64) },
  commandId: null,
  detail: { attempt: 1, note: 'é "quoted" \n' },
  at: 1_764_621_000_000,
};

describe('eventLeafHash', () => {
  it('equals the leaf hash of the canonicalized event body, or fails with the same code and path', () => {
    fc.assert(
      fc.property(event, (e) => {
        const a = generic(e);
        const b = fast(e);
        if (typeof a === 'string') expect(b).toBe(a);
        else {
          expect(b).toBeInstanceOf(CanonicalizationError);
          expect({
            code: (b as CanonicalizationError).code,
            path: (b as CanonicalizationError).path,
          }).toEqual({ code: a.code, path: a.path });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses detail nested one level deeper than a whole body may be, as the body would', () => {
    let detail: unknown = 1;
    for (let i = 0; i < 256; i++) detail = { d: detail };
    const e: Fields = { ...known, detail: detail as Fields['detail'] };
    expect(generic(e)).toMatchObject({ code: 'too_deep' });
    expect(fast(e)).toMatchObject({ code: 'too_deep' });
  });

  it('hashes a known event to the leaf hash earlier releases stored for it', () => {
    expect(eventLeafHash(known)).toBe('e51c54a48fe63167af49c412d6778322781e45f0ca0675bafb1e9b63ace83879');
  });
});
