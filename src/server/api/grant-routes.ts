import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import type { Engine } from '../../engine/create-engine.js';
import { QUORUM_WITHDRAWN } from '../../engine/grants.js';
import type { Grant } from '../../grants/grant.js';
import type { Actor } from '../../operation/actor.js';
import { formatIssues, toInputIssues } from '../../operation/issues.js';
import type { AppEnv } from '../app-env.js';
import { unauthenticated } from '../auth/authenticate.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import { HttpProblem, refusal } from '../../http/http-problem.js';
import { readJsonBody } from '../read-body.js';
import { storableString } from './request-bodies.js';

/** `POST /api/v1/grants`: a bounded approval, stated explicitly — never derived from a proposal. */
export const GrantBody = z.strictObject({
  subject: storableString().min(1).max(200).describe('The agent principal, e.g. agent:acme-assistant'),
  operations: z.array(z.string().min(1).max(100)).min(1).max(50),
  resource: storableString().min(1).max(500).describe('A resource, or a prefix ending in *'),
  constraints: z.record(z.string(), z.unknown()).describe('Typed constraints by scope field'),
  cap: z
    .strictObject({
      field: z.string().min(1).max(100).optional(),
      total: z.number().int().nonnegative().optional(),
      uses: z.number().int().nonnegative().optional(),
    })
    .optional(),
  expiresAt: z.iso.datetime({ offset: true }).describe('ISO 8601 time the grant stops approving'),
  note: storableString().max(500).optional(),
  satisfiesQuorum: z
    .boolean()
    .optional()
    .describe(
      'Withdrawn: a grant never approves an operation that needs several approvals; only false is accepted',
    ),
});

/** A grant as the API shows it. */
export function grantJson(grant: Grant): Record<string, unknown> {
  return {
    id: grant.id,
    subject: grant.subject,
    operations: grant.operations,
    resource: grant.resource,
    constraints: grant.constraints,
    cap: grant.cap,
    usage: grant.usage,
    state: grant.state,
    expiresAt: grant.expiresAt.toISOString(),
    createdAt: grant.createdAt.toISOString(),
    createdBy: grant.createdBy,
    revokedAt: grant.revokedAt?.toISOString() ?? null,
    revokedBy: grant.revokedBy,
    note: grant.note,
  };
}

function operatorOf(c: Context<AppEnv>, publicUrl: URL | undefined, changing: boolean): Actor {
  const principal = c.get('principal');
  if (!principal) throw unauthenticated();
  if (principal.actor.kind !== 'operator') throw refusal('forbidden', 'grants are managed by operators');
  if (changing && principal.via === 'session') {
    assertSameOrigin(c, publicUrl);
    assertCsrfToken(principal.session.csrfToken, c.req.header('x-csrf-token'));
  }
  return principal.actor;
}

/**
 * Grants: `GET /grants` (usage included), `GET /grants/:id`, `POST /grants` and
 * `POST /grants/:id/revoke` (the admin role). Tenant-scoped like everything else.
 */
export function grantRoutes(deps: {
  readonly engine: Engine;
  readonly publicUrl: URL | undefined;
}): Hono<AppEnv> {
  const { engine, publicUrl } = deps;
  const routes = new Hono<AppEnv>();

  routes.get('/', async (c) => {
    const actor = operatorOf(c, publicUrl, false);
    const subject = c.req.query('subject');
    const grants = await engine.grants.list(actor.tenant, subject ? { subject } : {});
    return c.json({ items: grants.map(grantJson) });
  });

  routes.get('/:id', async (c) => {
    const actor = operatorOf(c, publicUrl, false);
    const grant = await engine.grants.get(actor.tenant, c.req.param('id'));
    if (!grant) throw refusal('not_found', 'no such grant');
    return c.json(grantJson(grant));
  });

  routes.post('/', async (c) => {
    const actor = operatorOf(c, publicUrl, true);
    const parsed = GrantBody.safeParse(await readJsonBody(c));
    if (!parsed.success) {
      const issues = toInputIssues(parsed.error);
      throw new HttpProblem(422, 'invalid_request', formatIssues(issues), { extra: { issues } });
    }
    const input = parsed.data;
    if (input.satisfiesQuorum === true)
      throw new HttpProblem(422, 'invalid_request', formatIssues([QUORUM_WITHDRAWN]), {
        extra: { issues: [QUORUM_WITHDRAWN] },
      });
    const result = await engine.grants.create({
      tenant: actor.tenant,
      grantedBy: actor,
      subject: input.subject,
      operations: input.operations,
      resource: input.resource,
      constraints: input.constraints,
      expiresAt: Date.parse(input.expiresAt),
      ...(input.cap
        ? {
            cap: {
              ...(input.cap.field !== undefined ? { field: input.cap.field } : {}),
              ...(input.cap.total !== undefined ? { total: input.cap.total } : {}),
              ...(input.cap.uses !== undefined ? { uses: input.cap.uses } : {}),
            },
          }
        : {}),
      ...(input.note !== undefined ? { note: input.note } : {}),
    });
    if (result.kind === 'forbidden' || result.kind === 'corrupt_audit_chain')
      throw refusal(result.reason, result.message);
    if (result.kind === 'invalid_grant') {
      throw new HttpProblem(422, 'invalid_request', formatIssues(result.issues), {
        extra: { issues: result.issues },
      });
    }
    return c.json(grantJson(result.grant), 201);
  });

  routes.post('/:id/revoke', async (c) => {
    const actor = operatorOf(c, publicUrl, true);
    const result = await engine.grants.revoke({ tenant: actor.tenant, grantId: c.req.param('id'), actor });
    if (result.kind !== 'revoked') throw refusal(result.reason, result.message);
    return c.json({ id: c.req.param('id'), state: 'revoked' });
  });

  return routes;
}
