import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { SlackOperators } from '../slack/slack-operators.js';
import { adminFormChanges } from './admin-form-changes.js';
import { adminPageAccess } from './admin-page-access.js';
import { slackPage } from './pages/slack-page.js';

const PATH = '/slack';

const TITLES = {
  forbidden: 'Only an admin links Slack users.',
  invalid_request: 'Not linked:',
  not_found: 'Not found:',
} as const;

/**
 * The console's Slack page (admin role): `GET /slack` lists the tenant's Slack user links,
 * `POST /slack/users` (`slackUser`, `email`) links a Slack user to an operator (replacing an earlier
 * link) and `POST /slack/users/:slackUser/delete` removes one: the same {@link SlackOperators}
 * calls as `/api/v1/slack/users`, so the same checks and audit events. Same origin, the session's
 * CSRF token, no unexpected field; a refusal shows on the page with its reason.
 */
export function slackConsoleRoutes(deps: {
  readonly operators: SlackOperators;
  readonly publicUrl: URL | undefined;
  readonly sso: boolean;
}): Hono<AppEnv> {
  const { operators } = deps;
  const app = new Hono<AppEnv>();
  const { show, change } = adminFormChanges({
    path: PATH,
    access: adminPageAccess({ path: PATH, refusal: 'Slack users are linked by admins', sso: deps.sso }),
    publicUrl: deps.publicUrl,
    flash: 'slack_users_changed',
    titles: TITLES,
    page: async (view) => slackPage({ ...view, links: await operators.links(view.session.actor.tenant) }),
  });

  app.get(PATH, show);
  app.post(`${PATH}/users`, (c) =>
    change(c, new Set(['csrf', 'slackUser', 'email']), (form, session) =>
      operators.link({
        actor: session.actor,
        slackUser: form.get('slackUser')?.trim() ?? '',
        email: form.get('email')?.trim() ?? '',
      }),
    ),
  );
  app.post(`${PATH}/users/:slackUser/delete`, (c) =>
    change(c, new Set(['csrf']), (_, session) =>
      operators.unlink({ actor: session.actor, slackUser: c.req.param('slackUser') ?? '' }),
    ),
  );
  return app;
}
