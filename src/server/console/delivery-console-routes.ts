import type { Context } from 'hono';
import { Hono } from 'hono';
import type { DeliveryAdmin } from '../../notify/deliveries.js';
import type { AppEnv } from '../app-env.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import type { ConsoleSession } from '../directory/principal-directory.js';
import { HttpProblem } from '../../http/http-problem.js';
import { readFormBody } from '../read-body.js';
import { deliveriesPage } from './pages/deliveries-page.js';

const DELIVERY_ID = /^dlv_[0-9a-f]{24}$/;

/**
 * The console's deliveries page (admin role): `GET /deliveries` and
 * `POST /deliveries/:id/redeliver` (same origin, the session's CSRF token, nothing else in the form).
 */
export function deliveryConsoleRoutes(deps: {
  readonly deliveries: DeliveryAdmin | undefined;
  readonly publicUrl: URL | undefined;
}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const adminSession = (c: Context<AppEnv>): ConsoleSession | undefined => {
    const principal = c.get('principal');
    if (principal?.via !== 'session') return undefined;
    if (!principal.session.actor.roles.includes('admin'))
      throw new HttpProblem(403, 'forbidden', 'deliveries are for admins');
    return principal.session;
  };

  app.get('/deliveries', async (c) => {
    const session = adminSession(c);
    if (!session) return c.redirect('/login?next=%2Fdeliveries', 303);
    const deliveries = deps.deliveries
      ? await deps.deliveries.list(session.actor.tenant, { limit: 200 })
      : undefined;
    c.header('Cache-Control', 'no-store');
    return c.html(deliveriesPage({ nonce: c.get('secureHeadersNonce') ?? '', session, deliveries }));
  });

  app.post('/deliveries/:id/redeliver', async (c) => {
    assertSameOrigin(c, deps.publicUrl);
    const form = await readFormBody(c);
    const session = adminSession(c);
    if (!session) return c.redirect('/login?next=%2Fdeliveries', 303);
    assertCsrfToken(session.csrfToken, form.get('csrf'));
    const unexpected = [...form.keys()].find((k) => k !== 'csrf');
    if (unexpected !== undefined)
      throw new HttpProblem(
        400,
        'invalid_form',
        `the form has an unexpected field "${unexpected.slice(0, 40)}"`,
      );
    const id = c.req.param('id');
    const result =
      deps.deliveries && DELIVERY_ID.test(id)
        ? await deps.deliveries.redeliver(session.actor.tenant, id)
        : 'not_found';
    if (result === 'not_found') throw new HttpProblem(404, 'not_found', 'no such delivery');
    return c.redirect('/deliveries', 303);
  });
  return app;
}
