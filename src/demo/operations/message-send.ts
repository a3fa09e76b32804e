import { z } from 'zod';
import { defineOperation } from '../../index.js';

/**
 * The outbound-message scope of the third note: channel, recipients (a set: membership is scope,
 * order is not), attachments with their content version, and whether it drafts or sends.
 */
export const messageSend = defineOperation({
  kind: 'message.send',
  scopeVersion: 1,
  scope: z.strictObject({
    tenant: z.string().min(1),
    operation: z.literal('message.send'),
    channel: z.enum(['email', 'sms']),
    recipients: z.array(z.string().min(3)).min(1),
    attachments: z.array(z.strictObject({ id: z.string().min(1), content_version: z.string().min(1) })),
    mode: z.enum(['draft', 'send']),
  }),
  fields: {
    recipients: { set: true, highImpact: true },
    attachments: { set: true },
    mode: { highImpact: true },
  },
});

/**
 * The file-deletion scope: a normalized, resolved resource id (never a path relative to a working
 * directory), the recursive flag, and the qualifier that limits what is deleted.
 */
export const fileDelete = defineOperation({
  kind: 'file.delete',
  scopeVersion: 1,
  scope: z.strictObject({
    tenant: z.string().min(1),
    operation: z.literal('file.delete'),
    resource_id: z
      .string()
      .regex(/^\/(?:[^/\0]+\/)*[^/\0]+$/, 'expected a resolved absolute path without a trailing slash')
      .refine(
        (p) => !p.split('/').some((s) => s === '.' || s === '..'),
        'expected a normalized path (no . or ..)',
      ),
    recursive: z.boolean(),
    only: z.enum(['generated_files', 'all_files']),
  }),
});
