import type { Context } from 'hono';
import { HttpProblem } from '../../http/http-problem.js';
import type { AppEnv } from '../app-env.js';
import { assertCsrfToken, assertSameOrigin } from '../auth/cross-site.js';
import type { ConsoleSession } from '../directory/principal-directory.js';
import { readFormBody } from '../read-body.js';
import type { AdminPageAccess } from './admin-page-access.js';
import { type FlashKind, takeFlash, writeFlash } from './flash.js';
import type { Page } from './layout.js';
import type { Notice } from './pages/notice-banner.js';

/** Why an admin page's change was refused: routing's and the Slack links' refusals alike. */
export interface AdminRefusal {
  readonly kind: 'refused';
  readonly reason: 'forbidden' | 'invalid_request' | 'not_found' | 'corrupt_audit_chain';
  readonly message: string;
}

type AdminPageStatus = 200 | 403 | 404 | 409 | 422;

const STATUS: Readonly<Record<AdminRefusal['reason'], AdminPageStatus>> = {
  forbidden: 403,
  not_found: 404,
  invalid_request: 422,
  corrupt_audit_chain: 409,
};

function isRefusal(result: { readonly kind: string }): result is AdminRefusal {
  return result.kind === 'refused';
}

/** An admin page's view and form posts, as {@link adminFormChanges} serves them. */
export interface AdminFormChanges {
  /** `GET` of the page: "Saved." once after a change, else the page as it is. */
  show(c: Context<AppEnv>): Promise<Response>;
  /**
   * One change from a form post: same origin, the session's CSRF token, no field outside `allowed`;
   * then a redirect to the page with "Saved.", or the page with the refusal and its reason.
   */
  change(
    c: Context<AppEnv>,
    allowed: ReadonlySet<string>,
    run: (
      form: ReadonlyMap<string, string>,
      session: ConsoleSession,
    ) => Promise<{ readonly kind: string } | AdminRefusal>,
  ): Promise<Response>;
}

/**
 * The form flow of an admin console page at `path`: signed out to sign-in, non-admins 403, a change
 * remembered for the next view by the `flash` kind, a refusal shown in the page's banner titled by
 * `titles` (403 `forbidden`, 404 `not_found`, 422 `invalid_request`, 409 `corrupt_audit_chain`).
 * Every view is `no-store`.
 */
export function adminFormChanges(deps: {
  readonly path: string;
  readonly access: AdminPageAccess;
  readonly publicUrl: URL | undefined;
  readonly flash: FlashKind;
  readonly titles: Readonly<Record<Exclude<AdminRefusal['reason'], 'corrupt_audit_chain'>, string>>;
  /** The page as `session` sees it now, with `notices` above it. */
  readonly page: (view: {
    readonly nonce: string;
    readonly session: ConsoleSession;
    readonly notices: Notice[];
  }) => Promise<Page>;
}): AdminFormChanges {
  const { path, access, publicUrl } = deps;
  const titles: Readonly<Record<AdminRefusal['reason'], string>> = {
    ...deps.titles,
    corrupt_audit_chain: 'Not saved: the audit chain holds an event the server did not write.',
  };
  const render = async (
    c: Context<AppEnv>,
    session: ConsoleSession,
    notices: Notice[],
    status: AdminPageStatus = 200,
  ) => {
    const page = await deps.page({ nonce: c.get('secureHeadersNonce') ?? '', session, notices });
    c.header('Cache-Control', 'no-store');
    return c.html(page, status);
  };
  return {
    show: async (c) => {
      const found = access.signedIn(c);
      if (!found) return access.toLogin(c);
      const done = takeFlash(c, publicUrl, { sessionId: found.sessionId, page: path });
      return render(c, found.session, done === deps.flash ? [{ tone: 'ok', title: 'Saved.' }] : []);
    },
    change: async (c, allowed, run) => {
      assertSameOrigin(c, publicUrl);
      const form = await readFormBody(c);
      const found = access.signedIn(c);
      if (!found) return access.toLogin(c);
      assertCsrfToken(found.session.csrfToken, form.get('csrf'));
      const unexpected = [...form.keys()].find((k) => !allowed.has(k));
      if (unexpected !== undefined)
        throw new HttpProblem(
          400,
          'invalid_form',
          `the form has an unexpected field "${unexpected.slice(0, 40)}"`,
        );
      const result = await run(form, found.session);
      if (!isRefusal(result)) {
        writeFlash(c, publicUrl, { sessionId: found.sessionId, page: path }, deps.flash);
        return c.redirect(path, 303);
      }
      return render(
        c,
        found.session,
        [
          {
            tone: 'bad',
            title: titles[result.reason],
            body: ` ${result.message}.`,
            reason: result.reason,
          },
        ],
        STATUS[result.reason],
      );
    },
  };
}
