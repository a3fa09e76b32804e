import { z } from 'zod';
import { CountersignError } from '../canonical/errors.js';
import { type ProposalRecord, PROPOSAL_FORMAT_VERSION } from './records.js';

/** A stored proposal that does not match any known stored format: it is never approved. */
export class StoredFormatError extends CountersignError {}

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const millis = z.number().int().nonnegative();
const status = z.enum([
  'pending',
  'executing',
  'succeeded',
  'needs_reconciliation',
  'revision_required',
  'terminal_failure',
  'declined',
  'superseded',
  'expired',
]);

// Format 1, as released. Never edit it: a new format gets its own schema and fixture.
const FORMAT_1 = z.strictObject({
  formatVersion: z.literal(1),
  tenant: z.string().min(1),
  id: z.string().regex(/^prp_[0-9a-z]{26}$/),
  runId: z.string().min(1),
  section: z.string().nullable(),
  resource: z.string().min(1),
  requestedBy: z.string().min(1),
  operation: z.string().min(1),
  scopeVersion: z.number().int().positive(),
  viewVersion: z.number().int().positive(),
  requestJson: z.string(),
  argumentsJson: z.string(),
  scopeJson: z.string(),
  scopeDigest: hex64,
  previewJson: z.string(),
  digest: hex64,
  seal: hex64.nullable(),
  status,
  createdAt: millis,
  expiresAt: millis,
  supersedes: z.string().nullable(),
  supersededBy: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: millis.nullable(),
  approvalKind: z.enum(['exact', 'grant']).nullable(),
  grantId: z.string().nullable(),
  decisionNote: z.string().nullable(),
  currentAttempt: z.number().int().nonnegative(),
  outcomeJson: z.string().nullable(),
  updatedAt: millis,
});

// Format 2: adds the editor; the contract digest also binds section, requestedBy and editedBy.
const FORMAT_2 = FORMAT_1.extend({
  formatVersion: z.literal(2),
  editedBy: z.string().min(1).nullable(),
});

// Format 3: adds the frozen approval policy, canonical JSON `{"required":n,"roles":[...]}`, bound
// into the contract digest.
const FORMAT_3 = FORMAT_2.extend({
  formatVersion: z.literal(3),
  policyJson: z.string().regex(/^\{"required":([1-9]|10),"roles":\[("[^"\\]+"(,"[^"\\]+")*)?\]\}$/),
});

/** Sets aside columns a later schema added, when they are null: an older format never stored them. */
function withoutLaterColumns(raw: unknown, later: readonly string[]): unknown {
  if (typeof raw !== 'object' || raw === null) return raw;
  const copy: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  for (const key of later) {
    if (key in copy && copy[key] === null) delete copy[key];
  }
  return copy;
}

// A format-1 or format-2 record read back from a newer schema carries the later columns as null:
// they are not part of what that format stored, so they are set aside before its schema (never
// edited) checks it.
const format1 = z
  .preprocess((raw) => withoutLaterColumns(raw, ['editedBy', 'policyJson']), FORMAT_1)
  .transform((record): ProposalRecord => ({ ...record, editedBy: null, policyJson: null }));

const format2 = z
  .preprocess((raw) => withoutLaterColumns(raw, ['policyJson']), FORMAT_2)
  .transform((record): ProposalRecord => ({ ...record, policyJson: null }));

const FORMATS: Readonly<Record<number, z.ZodType<ProposalRecord, unknown>>> = {
  1: format1,
  2: format2,
  3: FORMAT_3,
};

/**
 * Checks a stored proposal against the schema of its own `formatVersion`. Unknown versions, missing
 * or extra fields and wrong types are refused with the field named: a record that does not match
 * a released format is never reinterpreted.
 */
export function decodeProposalRecord(raw: unknown): ProposalRecord {
  const version = (raw as { formatVersion?: unknown } | null)?.formatVersion;
  const schema = typeof version === 'number' ? FORMATS[version] : undefined;
  if (!schema) {
    throw new StoredFormatError(
      `stored proposal format ${String(version)} is unknown (this code reads ${Object.keys(FORMATS).join(', ')}; writes ${PROPOSAL_FORMAT_VERSION})`,
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new StoredFormatError(
      `stored proposal format ${version}: $.${issue.path.join('.')}: ${issue.message}`,
    );
  }
  return parsed.data;
}
