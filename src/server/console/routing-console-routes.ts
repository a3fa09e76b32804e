import { Hono } from 'hono';
import type { Engine } from '../../engine/create-engine.js';
import type { RouteInput } from '../../engine/route-admin.js';
import type { AppEnv } from '../app-env.js';
import { adminFormChanges } from './admin-form-changes.js';
import { adminPageAccess } from './admin-page-access.js';
import { routingPage } from './pages/routing-page.js';

const PATH = '/routing';

const TITLES = {
  forbidden: 'Only an admin manages routing.',
  invalid_request: 'Not saved:',
  not_found: 'Not found:',
} as const;

const ROUTE_FIELDS = new Set([
  'csrf',
  'name',
  'operation',
  'resource',
  'amountField',
  'above',
  'group',
  'channel',
  'escalateAfter',
  'escalationGroup',
  'escalationChannel',
  'position',
]);

/** A form field as text, or null when left empty. */
function optional(form: ReadonlyMap<string, string>, key: string): string | null {
  const value = form.get(key)?.trim() ?? '';
  return value === '' ? null : value;
}

/** A whole number a form field holds, NaN when it holds something else (the engine refuses it, naming the field). */
function whole(text: string): number {
  return /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
}

/** The route a "New route" form states. */
function routeOfForm(form: ReadonlyMap<string, string>): RouteInput {
  const amountField = optional(form, 'amountField');
  const above = optional(form, 'above');
  const escalationGroup = optional(form, 'escalationGroup');
  const after = optional(form, 'escalateAfter');
  const position = optional(form, 'position');
  return {
    ...(position !== null ? { position: whole(position) } : {}),
    name: form.get('name')?.trim() ?? '',
    operation: form.get('operation') ?? '',
    resource: optional(form, 'resource'),
    amount:
      amountField !== null || above !== null
        ? { field: amountField ?? 'amount_minor', above: whole(above ?? '0') }
        : null,
    group: form.get('group') ?? '',
    channel: optional(form, 'channel'),
    escalation:
      escalationGroup !== null
        ? {
            afterMs: whole(after ?? '') * 60_000,
            group: escalationGroup,
            channel: optional(form, 'escalationChannel'),
          }
        : null,
  };
}

/** Members, one per line: an email stands for the operator `user:<email>`. */
function membersOfForm(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => (line.includes(':') ? line : `user:${line}`));
}

/**
 * The console's routing page (admin role): `GET /routing`, `POST /routing/routes` (a new route),
 * `POST /routing/routes/:id` (the route's fields, whole), `POST /routing/routes/:id/delete`, `POST /routing/groups` (a group's name and members, one per
 * line: creates it or replaces its members) and `POST /routing/groups/:name/delete`. Same origin,
 * the session's CSRF token, no unexpected field; a refusal shows on the page with its reason.
 */
export function routingConsoleRoutes(deps: {
  readonly engine: Engine;
  readonly publicUrl: URL | undefined;
  readonly sso: boolean;
}): Hono<AppEnv> {
  const { engine, publicUrl } = deps;
  const app = new Hono<AppEnv>();
  const { show, change } = adminFormChanges({
    path: PATH,
    access: adminPageAccess({ path: PATH, refusal: 'routing is managed by admins', sso: deps.sso }),
    publicUrl,
    flash: 'routing_changed',
    titles: TITLES,
    page: async (view) => {
      const tenant = view.session.actor.tenant;
      const [routes, groups] = await Promise.all([engine.routes.list(tenant), engine.groups.list(tenant)]);
      return routingPage({ ...view, routes, groups, operations: [...engine.operations.keys()].sort() });
    },
  });

  app.get(PATH, show);

  app.post(`${PATH}/routes`, (c) =>
    change(c, ROUTE_FIELDS, (form, session) =>
      engine.routes.save({ tenant: session.actor.tenant, route: routeOfForm(form), actor: session.actor }),
    ),
  );
  app.post(`${PATH}/routes/:id`, (c) =>
    change(c, ROUTE_FIELDS, (form, session) =>
      engine.routes.save({
        tenant: session.actor.tenant,
        id: c.req.param('id') ?? '',
        route: routeOfForm(form),
        actor: session.actor,
      }),
    ),
  );
  app.post(`${PATH}/routes/:id/delete`, (c) =>
    change(c, new Set(['csrf']), (_, session) =>
      engine.routes.delete({
        tenant: session.actor.tenant,
        id: c.req.param('id') ?? '',
        actor: session.actor,
      }),
    ),
  );
  app.post(`${PATH}/groups`, (c) =>
    change(c, new Set(['csrf', 'name', 'members']), (form, session) =>
      engine.groups.save({
        tenant: session.actor.tenant,
        name: form.get('name')?.trim() ?? '',
        members: membersOfForm(form.get('members') ?? ''),
        actor: session.actor,
      }),
    ),
  );
  app.post(`${PATH}/groups/:name/delete`, (c) =>
    change(c, new Set(['csrf']), (_, session) =>
      engine.groups.delete({
        tenant: session.actor.tenant,
        name: c.req.param('name') ?? '',
        actor: session.actor,
      }),
    ),
  );
  return app;
}
