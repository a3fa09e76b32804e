import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import type { Engine } from '../../engine/create-engine.js';
import type { Group, Route, RoutingRefusal } from '../../engine/route-admin.js';
import type { Actor } from '../../operation/actor.js';
import { formatIssues, toInputIssues } from '../../operation/issues.js';
import type { AppEnv } from '../app-env.js';
import { unauthenticated } from '../auth/authenticate.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import { HttpProblem, refusal } from '../../http/http-problem.js';
import { readJsonBody } from '../read-body.js';
import { storableString } from './request-bodies.js';

/** `POST /api/v1/routes` and `PUT /api/v1/routes/:id`: a route, stated whole. */
export const RouteBody = z.strictObject({
  name: storableString().min(1).max(80),
  operation: storableString().min(1).max(100).describe('The operation kind, e.g. invoice.pay'),
  resource: storableString()
    .min(1)
    .max(200)
    .nullable()
    .optional()
    .describe('A resource, or a prefix ending in *'),
  amount: z
    .strictObject({
      field: z.string().min(1).max(100).describe('A scope field in minor units, e.g. amount_minor'),
      above: z.number().int().nonnegative().describe('Matches amounts strictly above this many minor units'),
    })
    .nullable()
    .optional(),
  group: z.string().min(1).max(40),
  channel: storableString().min(1).max(80).nullable().optional(),
  escalation: z
    .strictObject({
      afterMs: z.number().int().describe('Milliseconds undecided before it is escalated (1 s to 30 days)'),
      group: z.string().min(1).max(40),
      channel: storableString().min(1).max(80).nullable().optional(),
    })
    .nullable()
    .optional(),
  position: z.number().int().nonnegative().optional().describe('Routes are tried in this order'),
});

/** `PUT /api/v1/groups/:name`: a group's members, whole. */
export const GroupBody = z.strictObject({
  members: z
    .array(storableString().min(1).max(320))
    .max(200)
    .describe('Principal ids, e.g. user:ana@acme.test'),
});

/** A route as the API shows it. */
export function routeJson(route: Route): Record<string, unknown> {
  return {
    ...route,
    createdAt: route.createdAt.toISOString(),
    updatedAt: route.updatedAt.toISOString(),
  };
}

/** A group as the API shows it. */
export function groupJson(group: Group): Record<string, unknown> {
  return {
    ...group,
    createdAt: group.createdAt.toISOString(),
    updatedAt: group.updatedAt.toISOString(),
  };
}

/** The caller, when an admin; a change from a session must be same-origin with the CSRF header. */
function adminOf(c: Context<AppEnv>, publicUrl: URL | undefined, changing: boolean): Actor {
  const principal = c.get('principal');
  if (!principal) throw unauthenticated();
  if (principal.actor.kind !== 'operator' || !principal.actor.roles.includes('admin'))
    throw refusal('forbidden', 'routes and groups are managed by admins');
  if (changing && principal.via === 'session') {
    assertSameOrigin(c, publicUrl);
    assertCsrfToken(principal.session.csrfToken, c.req.header('x-csrf-token'));
  }
  return principal.actor;
}

async function parsed<T>(c: Context<AppEnv>, schema: z.ZodType<T>): Promise<T> {
  const result = schema.safeParse(await readJsonBody(c));
  if (result.success) return result.data;
  const issues = toInputIssues(result.error);
  throw new HttpProblem(422, 'invalid_request', formatIssues(issues), { extra: { issues } });
}

const refused = (r: RoutingRefusal) => refusal(r.reason, r.message);

/** A route body without the keys it left out (exact optional properties). */
function routeInput(body: z.infer<typeof RouteBody>) {
  const { resource, amount, channel, escalation, position, ...rest } = body;
  return {
    ...rest,
    ...(resource !== undefined ? { resource } : {}),
    ...(amount !== undefined ? { amount } : {}),
    ...(channel !== undefined ? { channel } : {}),
    ...(position !== undefined ? { position } : {}),
    ...(escalation != null
      ? {
          escalation: {
            afterMs: escalation.afterMs,
            group: escalation.group,
            ...(escalation.channel !== undefined ? { channel: escalation.channel } : {}),
          },
        }
      : escalation === null
        ? { escalation: null }
        : {}),
  };
}

/**
 * Routing (the admin role, the caller's tenant only): `GET /routes`, `POST /routes`,
 * `PUT /routes/:id`, `DELETE /routes/:id`; mounted a second time for `/groups`: `GET /groups`,
 * `PUT /groups/:name`, `DELETE /groups/:name`. Every change is audited (`route_changed`,
 * `group_changed`).
 */
export function routingRoutes(deps: { readonly engine: Engine; readonly publicUrl: URL | undefined }): {
  readonly routes: Hono<AppEnv>;
  readonly groups: Hono<AppEnv>;
} {
  const { engine, publicUrl } = deps;
  const routes = new Hono<AppEnv>();
  routes.get('/', async (c) => {
    const actor = adminOf(c, publicUrl, false);
    return c.json({ items: (await engine.routes.list(actor.tenant)).map(routeJson) });
  });
  routes.post('/', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const body = await parsed(c, RouteBody);
    const result = await engine.routes.save({ tenant: actor.tenant, route: routeInput(body), actor });
    if (result.kind === 'refused') throw refused(result);
    return c.json(routeJson(result.route), 201);
  });
  routes.put('/:id', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const body = await parsed(c, RouteBody);
    const result = await engine.routes.save({
      tenant: actor.tenant,
      id: c.req.param('id'),
      route: routeInput(body),
      actor,
    });
    if (result.kind === 'refused') throw refused(result);
    return c.json(routeJson(result.route));
  });
  routes.delete('/:id', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const result = await engine.routes.delete({ tenant: actor.tenant, id: c.req.param('id'), actor });
    if (result.kind === 'refused') throw refused(result);
    return c.body(null, 204);
  });

  const groups = new Hono<AppEnv>();
  groups.get('/', async (c) => {
    const actor = adminOf(c, publicUrl, false);
    return c.json({ items: (await engine.groups.list(actor.tenant)).map(groupJson) });
  });
  groups.put('/:name', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const body = await parsed(c, GroupBody);
    const result = await engine.groups.save({
      tenant: actor.tenant,
      name: c.req.param('name'),
      members: body.members,
      actor,
    });
    if (result.kind === 'refused') throw refused(result);
    return c.json(groupJson(result.group));
  });
  groups.delete('/:name', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const result = await engine.groups.delete({ tenant: actor.tenant, name: c.req.param('name'), actor });
    if (result.kind === 'refused') throw refused(result);
    return c.body(null, 204);
  });
  return { routes, groups };
}
