import type { Context } from 'hono';
import { Hono } from 'hono';
import type { z } from 'zod';
import { AUDIT_STEPS, type AuditStep } from '../../audit/event.js';
import type { Engine } from '../../engine/create-engine.js';
import { AUDIT_PAGE_MAX, isAuditCursor, isListCursor } from '../../engine/queries.js';
import type { Proposal } from '../../engine/proposal.js';
import { listReadable, readProposal } from '../../engine/read-scope.js';
import type { Actor } from '../../operation/actor.js';
import { formatIssues, toInputIssues } from '../../operation/issues.js';
import { PROPOSAL_STATUSES, type ProposalStatus } from '../../store/records.js';
import type { AppEnv } from '../app-env.js';
import { type PrincipalRecheck, unauthenticated } from '../auth/authenticate.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import { negotiateLocale } from '../../i18n/accept-language.js';
import { handbackText } from '../handback-text.js';
import { HttpProblem, rateLimited, recovering, refusal, tooManyRefusals } from '../../http/http-problem.js';
import { readJsonBody } from '../read-body.js';
import { approvalUrl } from '../server-origin.js';
import type { DeliveryAdmin } from '../../notify/deliveries.js';
import { deliveryRoutes } from './delivery-routes.js';
import { eventRoutes } from './event-routes.js';
import { EventStreams } from './event-streams.js';
import { type Logger, silentLogger } from '../../engine/engine-context.js';
import { grantRoutes } from './grant-routes.js';
import { routingRoutes } from './routing-routes.js';
import type { PrincipalDirectory } from '../directory/principal-directory.js';
import { operatorRoutes } from './operator-routes.js';
import { openApiDocument } from './openapi.js';
import { approvalsJson, auditLineJson, outcomeJson, proposalJson } from './proposal-json.js';
import { ApproveBody, DeclineBody, EditBody, ProposeBody, ReconcileBody } from './request-bodies.js';

/** What the API routes are wired from. */
export interface ApiDependencies {
  readonly engine: Engine;
  /** The principal directory: `GET /operators`, `PATCH /operators/:id` (admins). */
  readonly directory: PrincipalDirectory;
  /** The URL operators reach the console at (approval links); defaults to the request's origin. */
  readonly publicUrl: URL | undefined;
  /** Notification deliveries (admins): `GET /deliveries`, `POST /deliveries/:id/redeliver`. */
  readonly deliveries?: DeliveryAdmin | undefined;
  /** The live event streams of `GET /events` (default: 1 s polls, 15 s heartbeats, 5 per principal). */
  readonly events?: EventStreams | undefined;
  readonly logger?: Logger | undefined;
  /** Checks a live event stream's token or session again before each read. */
  readonly recheck: PrincipalRecheck;
}

const STATUSES = PROPOSAL_STATUSES;

function invalid(issues: ReturnType<typeof toInputIssues>): HttpProblem {
  return new HttpProblem(422, 'invalid_request', formatIssues(issues), {
    extra: {
      issues,
      modelMessage: `The request was not accepted: ${formatIssues(issues)}. Correct these fields and try again.`,
    },
  });
}

async function body<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  const parsed = schema.safeParse(await readJsonBody(c));
  if (!parsed.success) throw invalid(toInputIssues(parsed.error));
  return parsed.data;
}

function actorOf(c: Context<AppEnv>): Actor {
  const principal = c.get('principal');
  if (!principal) throw unauthenticated();
  return principal.actor;
}

/** A state change: with a console session (not a bearer token) it must be same-origin and carry the CSRF header. */
function changingActor(c: Context<AppEnv>, publicUrl: URL | undefined): Actor {
  const principal = c.get('principal');
  if (!principal) throw unauthenticated();
  if (principal.via === 'session') {
    assertSameOrigin(c, publicUrl);
    assertCsrfToken(principal.session.csrfToken, c.req.header('x-csrf-token'));
  }
  return principal.actor;
}

/**
 * The HTTP API v1 (JSON). Every query passes the caller's tenant; a proposal of another tenant
 * is 404 exactly like a missing one. Errors are `{ reason, message, correlationId? }`.
 */
export function apiRoutes(deps: ApiDependencies): Hono<AppEnv> {
  const { engine, publicUrl } = deps;
  const api = new Hono<AppEnv>();
  // Proposals, previews and outcomes are tenant data: no shared cache may keep them.
  api.use(async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
    c.header('Vary', 'Accept-Language', { append: true });
  });
  // The handback is written in the language the client accepts where the operation has text in
  // it (else English); the rest of the body is data and stays as stored. Content-Language names
  // the languages the answer's handbacks are really in, each proposal its own.
  const present = (c: Context, p: Proposal, used: Set<string>) => {
    const written = handbackText(engine, p, { locale: negotiateLocale(c.req.header('accept-language')) });
    used.add(written.language);
    c.header('Content-Language', [...used].join(', '));
    return proposalJson(p, {
      handback: written.text,
      handbackLanguage: written.language,
      approvalUrl: approvalUrl(c, publicUrl, p),
    });
  };
  const load = async (c: Context<AppEnv>, actor: Actor): Promise<Proposal> => {
    // An agent sees the proposals it made; another agent's proposal, like another tenant's, is 404.
    const proposal = await readProposal(engine, actor, c.req.param('id') ?? '');
    if (!proposal) throw refusal('not_found', 'no such proposal');
    return proposal;
  };

  // An agent never decides, but its refusal must not tell a colleague's proposal from a missing
  // id: what it may not read answers `not_found`, exactly like a read.
  const decidingActor = async (c: Context<AppEnv>): Promise<Actor> => {
    const actor = changingActor(c, publicUrl);
    if (actor.kind === 'agent' && !(await readProposal(engine, actor, c.req.param('id') ?? '')))
      throw refusal('not_found', 'no such proposal');
    return actor;
  };

  api.get('/openapi.json', (c) => c.json(openApiDocument()));
  api.route('/grants', grantRoutes({ engine, publicUrl }));
  const routing = routingRoutes({ engine, publicUrl });
  api.route('/routes', routing.routes);
  api.route('/groups', routing.groups);
  api.route('/operators', operatorRoutes({ directory: deps.directory, publicUrl, engine }));
  if (deps.deliveries) api.route('/deliveries', deliveryRoutes({ deliveries: deps.deliveries, publicUrl }));
  api.route(
    '/events',
    eventRoutes({
      engine,
      streams: deps.events ?? new EventStreams(),
      logger: deps.logger ?? silentLogger,
      recheck: deps.recheck,
    }),
  );

  api.post('/proposals', async (c) => {
    const actor = changingActor(c, publicUrl);
    if (actor.kind !== 'agent') throw refusal('forbidden', 'only agents propose; operators approve');
    const input = await body(c, ProposeBody);
    const result = await engine.proposals.propose({
      operation: input.operation,
      request: input.request,
      tenant: actor.tenant,
      section: input.section ?? null,
      resource: input.resource,
      requestedBy: actor.id,
      runId: input.runId,
    });
    if (result.kind === 'invalid_request') {
      throw refusal(result.reason, result.modelMessage, {
        issues: result.issues,
        modelMessage: result.modelMessage,
      });
    }
    if (result.kind === 'rate_limited') throw rateLimited(result);
    if (result.kind === 'corrupt_audit_chain')
      throw refusal(result.reason, result.message, { modelMessage: result.modelMessage });
    return c.json(
      { ...present(c, result.proposal, new Set()), ...(result.grant ? { grant: result.grant } : {}) },
      201,
    );
  });

  api.get('/proposals', async (c) => {
    const actor = actorOf(c);
    const query = c.req.query();
    const issues: { path: string; message: string }[] = [];
    const known = new Set(['status', 'runId', 'operation', 'limit', 'cursor', 'needs']);
    for (const key of Object.keys(query))
      if (!known.has(key)) issues.push({ path: `$.${key}`, message: 'unknown query parameter' });
    const statuses = query['status']?.split(',') ?? [];
    for (const s of statuses)
      if (!(STATUSES as readonly string[]).includes(s))
        issues.push({ path: '$.status', message: `unknown status "${s.slice(0, 40)}"` });
    // "Needs you": the pending proposals the caller may still decide (engine.proposals.mayDecide).
    const needs = query['needs'];
    if (needs !== undefined && needs !== 'me')
      issues.push({ path: '$.needs', message: 'expected "me" (the proposals you may still decide)' });
    if (needs === 'me' && statuses.some((s) => s !== 'pending'))
      issues.push({ path: '$.status', message: 'needs=me lists pending proposals only' });
    const limit = query['limit'] === undefined ? 50 : Number(query['limit']);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200)
      issues.push({ path: '$.limit', message: 'expected a whole number from 1 to 200' });
    // A cursor that is not one the engine issued would silently restart at the first page.
    if (query['cursor'] !== undefined && !isListCursor(query['cursor']))
      issues.push({ path: '$.cursor', message: 'expected the nextCursor of the previous page' });
    if (issues.length > 0) throw invalid(issues);
    const page = await listReadable(engine, actor, {
      limit,
      ...(statuses.length > 0 ? { status: statuses as ProposalStatus[] } : {}),
      ...(query['runId'] ? { runId: query['runId'] } : {}),
      ...(query['operation'] ? { operation: query['operation'] } : {}),
      ...(query['cursor'] ? { cursor: query['cursor'] } : {}),
      ...(needs === 'me' ? { decidableBy: actor } : {}),
    });
    const used = new Set<string>();
    return c.json({
      items: page.items.map((p) => present(c, p, used)),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    });
  });

  api.get('/proposals/:id', async (c) => c.json(present(c, await load(c, actorOf(c)), new Set())));

  // Paged like the list, so refusals an agent piles up can never hide the events after them;
  // `exceptStep=denied` finds the decisions directly.
  api.get('/proposals/:id/audit', async (c) => {
    const actor = actorOf(c);
    const query = c.req.query();
    const issues: { path: string; message: string }[] = [];
    const known = new Set(['limit', 'cursor', 'step', 'exceptStep']);
    for (const key of Object.keys(query))
      if (!known.has(key)) issues.push({ path: `$.${key}`, message: 'unknown query parameter' });
    const steps = (name: 'step' | 'exceptStep') => {
      const list = query[name]?.split(',') ?? [];
      for (const s of list)
        if (!(AUDIT_STEPS as readonly string[]).includes(s))
          issues.push({ path: `$.${name}`, message: `unknown step "${s.slice(0, 40)}"` });
      return list as AuditStep[];
    };
    const only = steps('step');
    const except = steps('exceptStep');
    const limit = query['limit'] === undefined ? 200 : Number(query['limit']);
    if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX)
      issues.push({ path: '$.limit', message: `expected a whole number from 1 to ${AUDIT_PAGE_MAX}` });
    const cursor = query['cursor'];
    if (cursor !== undefined && !isAuditCursor(cursor))
      issues.push({ path: '$.cursor', message: 'expected the nextCursor of the previous page' });
    if (issues.length > 0) throw invalid(issues);
    const proposal = await load(c, actor);
    const page = await engine.audit.page(actor.tenant, proposal.id, {
      limit,
      ...(cursor !== undefined ? { cursor } : {}),
      ...(only.length > 0 ? { steps: only } : {}),
      ...(except.length > 0 ? { exceptSteps: except } : {}),
    });
    return c.json({
      proposalId: proposal.id,
      short: proposal.short,
      events: page.events.map(auditLineJson),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    });
  });

  api.post('/proposals/:id/approve', async (c) => {
    const actor = await decidingActor(c);
    const input = await body(c, ApproveBody);
    const proposalId = c.req.param('id');
    const result = await engine.proposals.approveAndExecute({
      tenant: actor.tenant,
      proposalId,
      approver: actor,
      seenDigest: input.seenDigest,
      ...(input.runId !== undefined ? { runId: input.runId } : {}),
      ...(input.expectedSection !== undefined ? { expectedSection: input.expectedSection } : {}),
      ...(input.expectedResource !== undefined ? { expectedResource: input.expectedResource } : {}),
    });
    if (result.kind === 'completed')
      return c.json({
        id: proposalId,
        short: result.contract.short,
        outcome: outcomeJson(proposalId, result.outcome),
        replayed: false,
      });
    if (result.kind === 'already_completed')
      return c.json({ id: proposalId, outcome: outcomeJson(proposalId, result.outcome), replayed: true });
    // Recorded, but the policy needs more approvers: nothing ran yet.
    if (result.kind === 'awaiting_approvals')
      return c.json({ id: proposalId, approvals: approvalsJson(result) }, 202);
    if (result.reason === 'recovering') throw recovering(result.message, result.retryAfterMs);
    if (result.reason === 'rate_limited') throw tooManyRefusals(result);
    throw refusal(
      result.reason,
      result.message,
      await supersededExtra(engine, actor, proposalId, result.reason),
    );
  });

  api.post('/proposals/:id/decline', async (c) => {
    const actor = await decidingActor(c);
    const input = await body(c, DeclineBody);
    const result = await engine.proposals.decline({
      tenant: actor.tenant,
      proposalId: c.req.param('id'),
      actor,
      ...(input.reason !== undefined ? { reason: input.reason } : {}),
    });
    if (result.kind !== 'declined') {
      if (result.reason === 'rate_limited') throw tooManyRefusals(result);
      throw refusal(result.reason, result.message);
    }
    return c.json({ id: c.req.param('id'), status: 'declined' });
  });

  api.post('/proposals/:id/edit', async (c) => {
    const actor = await decidingActor(c);
    const input = await body(c, EditBody);
    const result = await engine.proposals.edit({
      tenant: actor.tenant,
      proposalId: c.req.param('id'),
      editor: actor,
      changes: input.changes,
    });
    if (result.kind === 'invalid_request')
      throw refusal(result.reason, result.modelMessage, {
        issues: result.issues,
        modelMessage: result.modelMessage,
      });
    if (result.kind === 'not_editable') throw refusal(result.reason, result.message);
    return c.json({ ...present(c, result.proposal, new Set()), superseded: result.superseded }, 201);
  });

  api.post('/proposals/:id/reconcile', async (c) => {
    const actor = await decidingActor(c);
    await body(c, ReconcileBody);
    const result = await engine.proposals.reconcile({
      tenant: actor.tenant,
      proposalId: c.req.param('id'),
      actor,
    });
    if (result.kind === 'reconciled')
      return c.json({ id: c.req.param('id'), outcome: outcomeJson(c.req.param('id'), result.outcome) });
    if (result.kind === 'still_pending') {
      return c.json(
        {
          id: c.req.param('id'),
          status: 'needs_reconciliation',
          message: 'the provider has no final answer yet; try again later',
        },
        202,
      );
    }
    throw refusal(result.reason, result.message);
  });

  return api;
}

async function supersededExtra(
  engine: Engine,
  actor: Actor,
  id: string,
  reason: string,
): Promise<Record<string, unknown> | undefined> {
  if (reason !== 'superseded') return undefined;
  const proposal = await engine.proposals.get(actor.tenant, id);
  return proposal?.supersededBy ? { supersededBy: proposal.supersededBy } : undefined;
}
