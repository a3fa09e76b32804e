import { z } from 'zod';

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing NUL is the point.
const NO_NUL = /^[^\u0000]*$/;

/**
 * A string field the store keeps in a column of its own: U+0000 is refused (422
 * `invalid_request`). PostgreSQL text cannot hold it, so the write would fail and the request end
 * in a 500; the API refuses it on every backend alike.
 */
export function storableString(): z.ZodString {
  return z.string().regex(NO_NUL, 'a NUL character (U+0000) is not accepted');
}

/** `POST /api/v1/proposals`: tenant and requester come from the agent's token, never the body. */
export const ProposeBody = z.strictObject({
  operation: z.string().min(1).max(100).describe('The operation kind, e.g. invoice.pay'),
  request: z.unknown().describe("The model's request: parsed strictly by the operation"),
  runId: storableString()
    .max(200)
    .nullish()
    .describe(
      'The agent run this proposal belongs to; missing, blank or the text "undefined"/"null" → 400 run_id_missing',
    ),
  resource: storableString()
    .min(1)
    .max(500)
    .optional()
    .describe(
      'The resource the proposal is about, e.g. invoice:inv-104. Optional for operations that name their own resource; when given it must agree (else 409 resource_mismatch)',
    ),
  section: storableString()
    .min(1)
    .max(100)
    .nullish()
    .describe('The assistant section, when the application has several'),
});

/** `POST /api/v1/proposals/{id}/approve`: the full digest the approver saw, nothing else about the action. */
export const ApproveBody = z.strictObject({
  // Not checked here: the engine refuses anything but 64 lowercase hex as `invalid_digest`, before
  // it reads or writes, so the API, the console and library callers answer alike.
  seenDigest: z
    .string()
    .max(200)
    .describe(
      'The full digest (64 lowercase hex) of the proposal as displayed to the approver; else 422 invalid_digest',
    ),
  runId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The run id from the operator link, when there is one'),
  expectedSection: z
    .string()
    .min(1)
    .max(100)
    .nullable()
    .optional()
    .describe('The section the approver expects (null for none); another is 409 section_mismatch'),
  expectedResource: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('The resource the approver expects, e.g. invoice:inv-104; another is 409 resource_mismatch'),
});

/** `POST /api/v1/proposals/{id}/decline`. */
export const DeclineBody = z.strictObject({
  reason: storableString().max(500).optional().describe('Why, in words the next model turn may read'),
});

/** `POST /api/v1/proposals/{id}/edit`: new values for the operation's editable request fields. */
export const EditBody = z.strictObject({
  changes: z
    .record(z.string(), z.unknown())
    .describe("New values for the operation's editable request fields"),
});

/** `POST /api/v1/proposals/{id}/reconcile`. */
export const ReconcileBody = z.strictObject({});
