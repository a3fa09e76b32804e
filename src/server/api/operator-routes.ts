import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import { formatIssues, toInputIssues } from '../../operation/issues.js';
import type { Actor } from '../../operation/actor.js';
import type { Engine } from '../../engine/create-engine.js';
import type { AppEnv } from '../app-env.js';
import { unauthenticated } from '../auth/authenticate.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import type { OperatorAccount, OperatorUpdateResult } from '../directory/operator-accounts.js';
import type { PrincipalDirectory } from '../directory/principal-directory.js';
import { HttpProblem, refusal } from '../../http/http-problem.js';
import { readJsonBody } from '../read-body.js';

/** `PATCH /api/v1/operators/{id}`: what changes; a field left out stays. At least one field. */
export const OperatorPatchBody = z
  .strictObject({
    active: z
      .boolean()
      .optional()
      .describe('false disables the operator: their sessions and tokens stop at once'),
    roles: z
      .array(z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a role name: lower-case letters, digits, - or _'))
      .min(1)
      .max(10)
      .optional()
      .describe('The full new role list, e.g. ["approver"]; replaces the old one'),
  })
  .refine((body) => body.active !== undefined || body.roles !== undefined, {
    message: 'name at least one of active, roles',
  });

/** An operator as the API shows it (never a password hash). */
export function operatorJson(operator: OperatorAccount): Record<string, unknown> {
  return {
    id: operator.id,
    email: operator.email,
    roles: operator.roles,
    active: operator.active,
    sso: operator.sso,
    createdAt: new Date(operator.createdAt).toISOString(),
    disabledAt: operator.disabledAt === null ? null : new Date(operator.disabledAt).toISOString(),
  };
}

/** The caller, when an admin (operator with the admin role); a state change from a session must be same-origin with the CSRF header. */
function adminOf(c: Context<AppEnv>, publicUrl: URL | undefined, changing: boolean): Actor {
  const principal = c.get('principal');
  if (!principal) throw unauthenticated();
  if (principal.actor.kind !== 'operator' || !principal.actor.roles.includes('admin'))
    throw refusal('forbidden', 'operators are managed by admins');
  if (changing && principal.via === 'session') {
    assertSameOrigin(c, publicUrl);
    assertCsrfToken(principal.session.csrfToken, c.req.header('x-csrf-token'));
  }
  return principal.actor;
}

/** A refused operator change as the one problem the error handler answers with. */
export function operatorRefusal(result: Extract<OperatorUpdateResult, { kind: 'refused' }>): HttpProblem {
  if (result.reason === 'last_admin') return new HttpProblem(409, 'last_admin', result.message);
  return refusal(result.reason, result.message);
}

/**
 * The tenant's operators (admin role): `GET /operators` and `PATCH /operators/:id` (`{ active?,
 * roles? }`, the id `op_…` from the list). Another tenant's operator is 404 like a missing one.
 */
export function operatorRoutes(deps: {
  readonly directory: PrincipalDirectory;
  readonly publicUrl: URL | undefined;
  /** Withdraws approvals an operator who lost powers gave to pending proposals. */
  readonly engine: Pick<Engine, 'proposals'>;
}): Hono<AppEnv> {
  const { directory, publicUrl } = deps;
  const routes = new Hono<AppEnv>();

  routes.get('/', async (c) => {
    const actor = adminOf(c, publicUrl, false);
    const operators = await directory.operatorAccounts(actor.tenant);
    return c.json({ items: operators.map(operatorJson) });
  });

  routes.patch('/:id', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const parsed = OperatorPatchBody.safeParse(await readJsonBody(c));
    if (!parsed.success) {
      const issues = toInputIssues(parsed.error);
      throw new HttpProblem(422, 'invalid_request', formatIssues(issues), { extra: { issues } });
    }
    const result = await directory.updateOperator({
      tenant: actor.tenant,
      id: c.req.param('id'),
      change: {
        ...(parsed.data.active !== undefined ? { active: parsed.data.active } : {}),
        ...(parsed.data.roles !== undefined ? { roles: parsed.data.roles } : {}),
      },
      actor,
    });
    if (result.kind === 'refused') throw operatorRefusal(result);
    if (result.changed)
      await deps.engine.proposals.withdrawLapsedApprovals({ tenant: actor.tenant, by: actor.id });
    return c.json({ ...operatorJson(result.operator), changed: result.changed });
  });

  return routes;
}
