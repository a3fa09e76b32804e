import type { Context } from 'hono';
import { HttpProblem } from '../../http/http-problem.js';
import type { AppEnv } from '../app-env.js';
import type { ConsoleSession } from '../directory/principal-directory.js';

/** How a console page only admins use lets a request in: its sign-in redirect and its admin check. */
export interface AdminPageAccess {
  /** To the sign-in page (single sign-on's when an SSO session ended by time), then back here. */
  toLogin(c: Context<AppEnv>): Response;
  /**
   * The console session of the request, or undefined when it has none (sign in first). Throws a
   * 403 `forbidden` problem for a signed-in operator who is not an admin.
   */
  signedIn(c: Context<AppEnv>): { session: ConsoleSession; sessionId: string } | undefined;
}

/** The {@link AdminPageAccess} of the admin page at `path`; `refusal` tells a non-admin why not. */
export function adminPageAccess(options: {
  readonly path: string;
  readonly refusal: string;
  readonly sso: boolean;
}): AdminPageAccess {
  const next = encodeURIComponent(options.path);
  return {
    toLogin: (c) =>
      c.redirect(`${c.get('ssoEnded') && options.sso ? '/login/oidc' : '/login'}?next=${next}`, 303),
    signedIn: (c) => {
      const principal = c.get('principal');
      if (principal?.via !== 'session') return undefined;
      if (!principal.session.actor.roles.includes('admin'))
        throw new HttpProblem(403, 'forbidden', options.refusal);
      return { session: principal.session, sessionId: principal.sessionId };
    },
  };
}
