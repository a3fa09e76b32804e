import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Engine } from '../../engine/create-engine.js';
import type { AppEnv } from '../app-env.js';
import { adminPageAccess } from './admin-page-access.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import type { OperatorChange } from '../directory/operator-accounts.js';
import type { ConsoleSession, PrincipalDirectory } from '../directory/principal-directory.js';
import { HttpProblem } from '../../http/http-problem.js';
import { readFormBody } from '../read-body.js';
import { takeFlash, writeFlash } from './flash.js';
import { operatorsPage } from './pages/operators-page.js';
import type { Notice } from './pages/notice-banner.js';

const PATH = '/operators';

const TITLES = {
  forbidden: 'Only an admin manages operators.',
  last_admin:
    'Not changed: the tenant would be left without an active admin. Make another operator an admin first.',
  invalid_request: 'Not changed: choose at least one role.',
  corrupt_audit_chain: 'Not changed: the audit chain holds an event the server did not write.',
} as const;

/**
 * The console's operators page (admin role): `GET /operators`, and per operator
 * `POST /operators/:id/active` (`active=yes|no`) and `POST /operators/:id/roles` (a `role.<name>=yes`
 * field per role kept). Same origin, the session's CSRF token, no other field; a refusal
 * (`last_admin`, …) shows on the page with its reason.
 */
export function operatorConsoleRoutes(deps: {
  readonly directory: PrincipalDirectory;
  readonly publicUrl: URL | undefined;
  /** The roles the page offers (the console's and the engine's approver roles). */
  readonly roles: readonly string[];
  /** Whether single sign-on is configured: an SSO session ended by time signs in through it again. */
  readonly sso: boolean;
  /** Withdraws approvals an operator who lost powers gave to pending proposals. */
  readonly engine: Pick<Engine, 'proposals'>;
}): Hono<AppEnv> {
  const { directory, publicUrl } = deps;
  const app = new Hono<AppEnv>();
  const { toLogin, signedIn } = adminPageAccess({
    path: '/operators',
    refusal: 'operators are managed by admins',
    sso: deps.sso,
  });
  const render = async (
    c: Context<AppEnv>,
    session: ConsoleSession,
    notices: Notice[],
    status: 200 | 403 | 404 | 409 | 422 = 200,
  ) => {
    const operators = await directory.operatorAccounts(session.actor.tenant);
    c.header('Cache-Control', 'no-store');
    return c.html(
      operatorsPage({
        nonce: c.get('secureHeadersNonce') ?? '',
        session,
        operators,
        roles: deps.roles,
        notices,
      }),
      status,
    );
  };

  app.get(PATH, async (c) => {
    const found = signedIn(c);
    if (!found) return toLogin(c);
    const done = takeFlash(c, publicUrl, { sessionId: found.sessionId, page: PATH });
    return render(c, found.session, done === 'operator_changed' ? [{ tone: 'ok', title: 'Saved.' }] : []);
  });

  const change = async (
    c: Context<AppEnv>,
    allowed: (name: string) => boolean,
    read: (form: ReadonlyMap<string, string>) => OperatorChange,
  ) => {
    assertSameOrigin(c, publicUrl);
    const form = await readFormBody(c);
    const found = signedIn(c);
    if (!found) return toLogin(c);
    assertCsrfToken(found.session.csrfToken, form.get('csrf'));
    const unexpected = [...form.keys()].find((k) => k !== 'csrf' && !allowed(k));
    if (unexpected !== undefined)
      throw new HttpProblem(
        400,
        'invalid_form',
        `the form has an unexpected field "${unexpected.slice(0, 40)}"`,
      );
    const result = await directory.updateOperator({
      tenant: found.session.actor.tenant,
      id: c.req.param('id') ?? '',
      change: read(form),
      actor: found.session.actor,
    });
    if (result.kind === 'updated') {
      if (result.changed)
        await deps.engine.proposals.withdrawLapsedApprovals({
          tenant: found.session.actor.tenant,
          by: found.session.actor.id,
        });
      writeFlash(c, publicUrl, { sessionId: found.sessionId, page: PATH }, 'operator_changed');
      return c.redirect(PATH, 303);
    }
    if (result.reason === 'not_found') throw new HttpProblem(404, 'not_found', 'no such operator');
    const status = result.reason === 'forbidden' ? 403 : result.reason === 'invalid_request' ? 422 : 409;
    return render(
      c,
      found.session,
      [{ tone: 'bad', title: TITLES[result.reason], body: ` ${result.message}.`, reason: result.reason }],
      status,
    );
  };

  app.post(`${PATH}/:id/active`, (c) =>
    change(
      c,
      (k) => k === 'active',
      (form) => {
        const active = form.get('active');
        if (active !== 'yes' && active !== 'no')
          throw new HttpProblem(400, 'invalid_form', 'the form field "active" must be yes or no');
        return { active: active === 'yes' };
      },
    ),
  );

  app.post(`${PATH}/:id/roles`, (c) =>
    change(
      c,
      (k) => k.startsWith('role.'),
      (form) => ({
        roles: [...form].filter(([k, v]) => k.startsWith('role.') && v === 'yes').map(([k]) => k.slice(5)),
      }),
    ),
  );
  return app;
}
