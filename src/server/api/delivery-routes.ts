import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Actor } from '../../operation/actor.js';
import type { DeliveryAdmin } from '../../notify/deliveries.js';
import type { DeliveryStatus } from '../../store/sql-outbox.js';
import type { AppEnv } from '../app-env.js';
import { unauthenticated } from '../auth/authenticate.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import { HttpProblem, refusal } from '../../http/http-problem.js';

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'skipped', 'dead'];
const DELIVERY_ID = /^dlv_[0-9a-f]{24}$/;

function adminOf(c: Context<AppEnv>, publicUrl: URL | undefined, changing: boolean): Actor {
  const principal = c.get('principal');
  if (!principal) throw unauthenticated();
  if (principal.actor.kind !== 'operator' || !principal.actor.roles.includes('admin'))
    throw refusal('forbidden', 'deliveries are for admins');
  if (changing && principal.via === 'session') {
    assertSameOrigin(c, publicUrl);
    assertCsrfToken(principal.session.csrfToken, c.req.header('x-csrf-token'));
  }
  return principal.actor;
}

/**
 * Notification deliveries of the caller's tenant (admin role): `GET /deliveries` (newest first;
 * `?status=pending|delivered|skipped|dead`, `?limit=` up to 200) and
 * `POST /deliveries/:id/redeliver` (queues a finished delivery again, with the same event id).
 */
export function deliveryRoutes(deps: {
  readonly deliveries: DeliveryAdmin;
  readonly publicUrl: URL | undefined;
}): Hono<AppEnv> {
  const { deliveries, publicUrl } = deps;
  const routes = new Hono<AppEnv>();

  routes.get('/', async (c) => {
    const actor = adminOf(c, publicUrl, false);
    const status = c.req.query('status');
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
      throw new HttpProblem(422, 'invalid_request', `status: one of ${STATUSES.join(', ')}`);
    const limitText = c.req.query('limit') ?? '50';
    const limit = Number(limitText);
    if (!/^\d{1,3}$/.test(limitText) || limit < 1 || limit > 200)
      throw new HttpProblem(422, 'invalid_request', 'limit: a whole number from 1 to 200');
    const items = await deliveries.list(actor.tenant, {
      limit,
      ...(status ? { status: status as DeliveryStatus } : {}),
    });
    return c.json({ items });
  });

  routes.post('/:id/redeliver', async (c) => {
    const actor = adminOf(c, publicUrl, true);
    const id = c.req.param('id');
    // Another tenant's delivery is not found, exactly like a missing one.
    const result = DELIVERY_ID.test(id) ? await deliveries.redeliver(actor.tenant, id) : 'not_found';
    if (result === 'not_found') throw refusal('not_found', 'no such delivery');
    return c.json({ id, status: 'pending', queued: result === 'redelivered' });
  });
  return routes;
}
