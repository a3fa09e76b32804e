import { z } from 'zod';
import { defineOperation } from '../../index.js';
import { sql } from '../../store/index.js';
import type { BroadcastBook } from '../fakes/broadcasts.js';

/** The table the local effect writes, in the same database and transaction as the outcome. */
export const DRAFTS_TABLE = 'example_broadcast_drafts';

/**
 * `email_broadcast.apply_draft` (local): replaces a broadcast's draft. Nothing is sent; the effect
 * is a row in the application's own database, committed together with the outcome. The audience is
 * recounted at execution: a changed audience means a new review.
 */
export function emailBroadcastApplyDraft(deps: { readonly broadcasts: BroadcastBook }) {
  const argumentsSchema = z.strictObject({
    broadcast_id: z.string().min(1),
    subject: z.string().min(1).max(200),
    body: z.string().min(1).max(20_000),
    mode: z.literal('draft'),
    audience: z.array(z.string().email()).min(1),
  });
  return defineOperation({
    kind: 'email_broadcast.apply_draft',
    scopeVersion: 1,
    effect: 'local',
    expiresIn: '2h',
    scope: argumentsSchema
      .extend({ tenant: z.string().min(1), operation: z.literal('email_broadcast.apply_draft') })
      .strict(),
    fields: {
      audience: { set: true, highImpact: true },
      audience_count: { highImpact: true },
      mode: { highImpact: true },
    },
    preview: z.strictObject({
      title: z.string(),
      broadcast: z.string(),
      mode: z.string(),
      audience_count: z.number(),
      subject: z.string(),
      body: z.string(),
      audience: z.array(z.string()),
    }),
    request: z.strictObject({
      broadcast_id: z.string().min(1).max(64),
      subject: z.string().min(1).max(200),
      body: z.string().min(1).max(20_000),
    }),
    editable: ['subject', 'body'],
    arguments: argumentsSchema,
    resource: (a) => `broadcast:${a.broadcast_id}`,
    async prepare(request, ctx) {
      const broadcast = deps.broadcasts.find(ctx.tenant, request.broadcast_id);
      if (!broadcast) return ctx.reject(`No broadcast ${request.broadcast_id}.`);
      const audience = [...new Set(broadcast.audience)].sort();
      return {
        arguments: { ...request, mode: 'draft' as const, audience },
        preview: {
          title: `Replace the draft of "${broadcast.name}"`,
          broadcast: broadcast.name,
          mode: 'draft (nothing is sent)',
          subject: request.subject,
          body: request.body,
          audience_count: audience.length,
          audience,
        },
      };
    },
    async revalidate(args, ctx) {
      const broadcast = deps.broadcasts.find(ctx.tenant, args.broadcast_id);
      if (!broadcast) return ctx.revisionRequired(`Broadcast ${args.broadcast_id} no longer exists.`);
      const now = [...new Set(broadcast.audience)].sort();
      if (now.join('\n') !== args.audience.join('\n')) {
        return ctx.revisionRequired(
          `The audience changed from ${args.audience.length} to ${now.length} recipients since the review.`,
        );
      }
      return ctx.valid();
    },
    async execute(args, ctx) {
      const tx = ctx.transaction;
      if (!tx) throw new Error('a local effect runs inside the store transaction');
      return ctx.command(args, async (a, meta) => {
        // On PostgreSQL two transactions creating the table at once race inside IF NOT EXISTS: one
        // fails on the catalog's unique index once the other commits. The savepoint keeps that
        // from failing the effect; the table is there either way.
        await tx.run('SAVEPOINT create_drafts');
        try {
          await tx.run(
            `CREATE TABLE IF NOT EXISTS ${DRAFTS_TABLE} (tenant TEXT NOT NULL, broadcast_id TEXT NOT NULL, proposal_id TEXT NOT NULL, command_id TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (tenant, broadcast_id, proposal_id))`,
          );
        } catch {
          await tx.run('ROLLBACK TO SAVEPOINT create_drafts');
        }
        await tx.run('RELEASE SAVEPOINT create_drafts');
        await tx.run(
          sql`INSERT INTO example_broadcast_drafts (tenant, broadcast_id, proposal_id, command_id, subject, body) VALUES (${ctx.tenant}, ${a.broadcast_id}, ${ctx.proposalId}, ${meta.commandId}, ${a.subject}, ${a.body})`,
        );
        return { applied: true, recipients: a.audience.length };
      });
    },
    handback: (outcome) =>
      outcome.kind === 'succeeded'
        ? `The draft was applied (${outcome.result.recipients} recipients). Nothing was sent.`
        : outcome.kind === 'revision_required'
          ? `The draft was not applied: ${outcome.reason}`
          : `The draft was not applied (${outcome.kind}).`,
  });
}
