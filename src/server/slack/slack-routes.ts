import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import type { Engine } from '../../engine/create-engine.js';
import type { Logger } from '../../engine/engine-context.js';
import { bodyTooLarge, HttpProblem, refusal } from '../../http/http-problem.js';
import { readBoundedBody } from '../../http/read-bounded-body.js';
import type { SlackApi } from '../../notify/slack-api.js';
import { SLACK_ACTIONS, type SlackButtonValue } from '../../notify/slack-message.js';
import type { SlackCards } from '../../notify/slack-sender.js';
import type { Actor } from '../../operation/actor.js';
import type { DenialReason } from '../../operation/reasons.js';
import type { SlackUserLink } from '../../store/sql-slack.js';
import type { AppEnv } from '../app-env.js';
import { unauthenticated } from '../auth/authenticate.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import { readJsonBody } from '../read-body.js';
import type { SlackOperators } from './slack-operators.js';
import type { SlackRequestVerifier } from './slack-signature.js';

/** Slack approvals as the app serves them (see `createCountersignApp({ slack })`). */
export interface SlackApprovals {
  /** Verifies each interaction with the app's signing secret. */
  readonly verifier: SlackRequestVerifier;
  /** Maps a Slack user to an operator of the tenant. */
  readonly operators: SlackOperators;
  /** The Web API (ephemeral replies). */
  readonly api: SlackApi;
  /** Updates a proposal's card in place after a decision. */
  readonly cards: SlackCards;
}

/**
 * Why a click did nothing, as its ephemeral reply names it: the engine's reason (`stale_view`,
 * `expired`, `superseded`, `declined`, `forbidden`, `separation_of_duties`, `already_approved`…),
 * `replayed` for a proposal already decided and run, or `slack_user_unmapped` for a Slack user no
 * admin linked and whose verified email is no active operator's of the tenant.
 */
export type SlackRefusalReason = DenialReason | 'slack_user_unmapped';

/** What one click came to. */
export type SlackClick =
  | { readonly kind: 'approved' | 'awaiting_approvals' | 'declined' }
  | { readonly kind: 'refused'; readonly reason: SlackRefusalReason; readonly message: string };

/**
 * Largest interaction body read: Slack sends the whole message with each click, and a card of
 * forty full fields, form-encoded, is larger than a console form may be.
 */
export const MAX_SLACK_BODY_BYTES = 1024 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function buttonValue(value: unknown): SlackButtonValue | undefined {
  if (typeof value !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  const tenant = str(parsed['tenant']);
  const proposalId = str(parsed['proposalId']);
  const digest = typeof parsed['digest'] === 'string' ? parsed['digest'] : undefined;
  return tenant && proposalId && digest !== undefined ? { tenant, proposalId, digest } : undefined;
}

/**
 * Decides one click through exactly the console's path: `approveAndExecute` with the digest the
 * card showed, or `decline` once the card's digest is the proposal's. Tenant, role, the operation's
 * `authorize`, separation of duties, quorum and grants are the engine's, untouched.
 */
export async function decideClick(
  engine: Engine,
  actor: Actor,
  action: 'approve' | 'decline',
  value: SlackButtonValue,
): Promise<SlackClick> {
  const proposal = await engine.proposals.get(actor.tenant, value.proposalId);
  const operation = proposal ? engine.operations.get(proposal.operation) : undefined;
  // The card of an operation that opted out carries no decision button; an older card still might.
  if (operation && !operation.chatApproval)
    return { kind: 'refused', reason: 'forbidden', message: 'this operation is decided in the console only' };
  if (action === 'approve') {
    const result = await engine.proposals.approveAndExecute({
      tenant: actor.tenant,
      proposalId: value.proposalId,
      approver: actor,
      seenDigest: value.digest,
    });
    if (result.kind === 'completed') return { kind: 'approved' };
    if (result.kind === 'awaiting_approvals') return { kind: 'awaiting_approvals' };
    if (result.kind === 'already_completed')
      return {
        kind: 'refused',
        reason: 'replayed',
        message: 'already approved and run: nothing was done again',
      };
    return { kind: 'refused', reason: result.reason, message: result.message };
  }
  // decline takes no digest: a card showing another version declines nothing.
  if (proposal && proposal.status === 'pending' && proposal.digest !== value.digest)
    return {
      kind: 'refused',
      reason: 'stale_view',
      message: 'this message showed another version of the proposal: review it in the console',
    };
  const result = await engine.proposals.decline({
    tenant: actor.tenant,
    proposalId: value.proposalId,
    actor,
  });
  return result.kind === 'declined'
    ? { kind: 'declined' }
    : { kind: 'refused', reason: result.reason, message: result.message };
}

/**
 * `POST /integrations/slack/interactions`: a click on a card's Approve or Decline. Verified with
 * Slack's request signing before anything is read (else 401 `unauthenticated`, or 409 `replayed`
 * for a request seen before); the Slack user is mapped to an operator of the tenant the button
 * names; the decision is the console's. Answered 200 at once with an empty body; the card is
 * updated in place, and a click that did nothing gets an ephemeral reply naming its reason.
 */
export function slackInteractionRoutes(deps: {
  readonly engine: Engine;
  readonly slack: SlackApprovals;
  readonly logger: Logger;
}): Hono<AppEnv> {
  const { engine, slack, logger } = deps;
  const routes = new Hono<AppEnv>();
  routes.post('/integrations/slack/interactions', async (c) => {
    const body = await readBoundedBody(c.req.raw, MAX_SLACK_BODY_BYTES);
    if (body.kind === 'too_large') return bodyTooLarge(MAX_SLACK_BODY_BYTES).toResponse();
    if (body.kind !== 'read') throw new HttpProblem(400, 'invalid_form', 'the request body was cut off');
    const verified = slack.verifier.verify(
      {
        signature: c.req.header('x-slack-signature'),
        timestamp: c.req.header('x-slack-request-timestamp'),
      },
      body.bytes,
    );
    // Answered as problem JSON here: the app's error handler would render a console page for a
    // path outside /api.
    if (verified.kind === 'refused') {
      logger.warn({ reason: verified.reason, why: verified.message }, 'slack interaction refused');
      return (
        verified.reason === 'replayed'
          ? refusal('replayed', verified.message)
          : new HttpProblem(401, 'unauthenticated', verified.message)
      ).toResponse();
    }
    let payload: unknown;
    try {
      payload = JSON.parse(new URLSearchParams(new TextDecoder().decode(body.bytes)).get('payload') ?? '');
    } catch {
      return new HttpProblem(400, 'invalid_form', 'the form has no JSON payload').toResponse();
    }
    if (!isRecord(payload) || payload['type'] !== 'block_actions') return c.body(null, 200);
    const action = Array.isArray(payload['actions']) ? payload['actions'][0] : undefined;
    const actionId = isRecord(action) ? action['action_id'] : undefined;
    // "Open in console" is a link: Slack tells of its click too, and nothing is to be done.
    if (actionId !== SLACK_ACTIONS.approve && actionId !== SLACK_ACTIONS.decline) return c.body(null, 200);
    const value = buttonValue(isRecord(action) ? action['value'] : undefined);
    const user = isRecord(payload['user']) ? str(payload['user']['id']) : undefined;
    const channel =
      (isRecord(payload['channel']) ? str(payload['channel']['id']) : undefined) ??
      (isRecord(payload['container']) ? str(payload['container']['channel_id']) : undefined);
    if (!value || !user)
      return new HttpProblem(400, 'invalid_form', 'the payload names no proposal or no user').toResponse();
    const decision = actionId === SLACK_ACTIONS.approve ? 'approve' : 'decline';

    const operator = await slack.operators.resolve(value.tenant, user);
    const click: SlackClick =
      operator.kind === 'operator'
        ? await decideClick(engine, operator.actor, decision, value)
        : {
            kind: 'refused',
            reason: 'slack_user_unmapped',
            message:
              'your Slack account is not linked to an operator of this tenant: ask an admin to link it, or confirm your email address in Slack',
          };
    logger.info(
      {
        tenant: value.tenant,
        proposalId: value.proposalId,
        slackUser: user,
        action: decision,
        ...(operator.kind === 'operator' ? { actor: operator.actor.id, via: operator.via } : {}),
        ...(click.kind === 'refused' ? { reason: click.reason } : { result: click.kind }),
      },
      'slack interaction',
    );
    if (click.kind === 'refused') {
      if (channel) {
        const replied = await slack.api.postEphemeral({
          channel,
          user,
          text: `Nothing was done (${click.reason}): ${click.message}.`,
        });
        if (replied.kind === 'failed')
          logger.warn(
            { proposalId: value.proposalId, error: replied.error.code },
            'slack ephemeral reply failed',
          );
      }
      return c.body(null, 200);
    }
    // At once, for the person who clicked; the decision's own notification updates it again.
    const refreshed = await slack.cards.refresh(value.tenant, value.proposalId);
    if (typeof refreshed === 'object')
      logger.warn({ proposalId: value.proposalId, error: refreshed.failed.code }, 'slack card not updated');
    return c.body(null, 200);
  });
  return routes;
}

const LinkBody = z.strictObject({
  email: z.string().min(3).max(320).describe('The email of an operator of your tenant'),
});

function linkJson(link: SlackUserLink): Record<string, unknown> {
  return {
    slackUser: link.slackUser,
    email: link.operatorEmail,
    linkedBy: link.linkedBy,
    linkedAt: new Date(link.linkedAt).toISOString(),
  };
}

function adminOf(c: Context<AppEnv>, publicUrl: URL | undefined, changing: boolean): Actor {
  const principal = c.get('principal');
  if (!principal) throw unauthenticated();
  if (principal.actor.kind !== 'operator' || !principal.actor.roles.includes('admin'))
    throw refusal('forbidden', 'Slack users are linked by admins');
  if (changing && principal.via === 'session') {
    assertSameOrigin(c, publicUrl);
    assertCsrfToken(principal.session.csrfToken, c.req.header('x-csrf-token'));
  }
  return principal.actor;
}

/**
 * The admin's Slack user links of their tenant (`/api/v1/slack/users`): `GET` lists them,
 * `PUT /{slackUser}` with `{ email }` links a Slack user to an operator (replacing an earlier
 * link), `DELETE /{slackUser}` removes one. Admins only (403 `forbidden`); every change is audited.
 */
export function slackUserRoutes(deps: {
  readonly operators: SlackOperators;
  readonly publicUrl: URL | undefined;
}): Hono<AppEnv> {
  const { operators, publicUrl } = deps;
  const routes = new Hono<AppEnv>();
  routes.get('/', async (c) => {
    const actor = adminOf(c, publicUrl, false);
    c.header('Cache-Control', 'no-store');
    return c.json({ links: (await operators.links(actor.tenant)).map(linkJson) });
  });
  const answer = (c: Context<AppEnv>, result: Awaited<ReturnType<SlackOperators['link']>>) => {
    if (result.kind === 'refused') throw refusal(result.reason, result.message);
    return c.json({ status: result.kind, link: linkJson(result.link) });
  };
  routes.put('/:slackUser', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const parsed = LinkBody.safeParse(await readJsonBody(c));
    if (!parsed.success) throw refusal('invalid_request', '$.email: the email of an operator of your tenant');
    return answer(
      c,
      await operators.link({ actor, slackUser: c.req.param('slackUser'), email: parsed.data.email }),
    );
  });
  routes.delete('/:slackUser', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    return answer(c, await operators.unlink({ actor, slackUser: c.req.param('slackUser') }));
  });
  return routes;
}
