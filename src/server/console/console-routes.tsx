import { isListCursor } from '../../engine/queries.js';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Engine } from '../../engine/create-engine.js';
import { type Clock, type Logger, silentLogger } from '../../engine/engine-context.js';
import type { Proposal } from '../../engine/proposal.js';
import type { DenialReason } from '../../operation/reasons.js';
import { FINAL_STATUSES, type ProposalStatus } from '../../store/records.js';
import type { AppEnv } from '../app-env.js';
import { assertCsrfToken, assertSameOrigin, expectedOrigin } from '../auth/cross-site.js';
import type { OidcRelyingParty } from '../auth/oidc.js';
import { clearSessionCookie, writeSessionCookie } from '../auth/session-cookie.js';
import type { ConsoleSession, PrincipalDirectory } from '../directory/principal-directory.js';
import { handbackText } from '../handback-text.js';
import { HttpProblem, refusalStatus } from '../../http/http-problem.js';
import { readFormBody } from '../read-body.js';
import { parseJson } from '../../canonical/parse-json.js';
import { formatIssues } from '../../operation/issues.js';
import { editFields, formChanges } from './edit-fields.js';
import { type FlashKind, takeFlash, writeFlash } from './flash.js';
import { readDeviceCookie, writeDeviceCookie } from './device-cookie.js';
import { loginToken, readLoginToken } from './login-token.js';
import { type GrantFormValues, grantsPage } from './pages/grants-page.js';
import { historyPage } from './pages/history-page.js';
import { INBOX_SCRIPT } from './inbox-script.js';
import { type InboxQuery, parseInboxQuery } from './inbox-query.js';
import { homeViewOf, inListOf, queryFilter, tabFilter, yourPart } from './inbox-view.js';
import { listedFields } from './list-preview.js';
import { inboxPage, inboxQueryErrorPage } from './pages/inbox-page.js';
import { loginPage, movingOnPage } from './pages/login-page.js';
import { mountSso } from './sso-routes.js';
import { ProposalLink } from './pages/proposal-link.js';
import type { Notice } from './pages/notice-banner.js';
import { proposalPage } from './pages/proposal-page.js';
import { modelText } from './model-text.js';
import { UserText } from './render-text.js';
import type { Page } from './layout.js';
import { STYLESHEET } from './console-stylesheet.js';

/** What the console is wired from. */
export interface ConsoleDependencies {
  readonly engine: Engine;
  readonly directory: PrincipalDirectory;
  readonly publicUrl: URL | undefined;
  readonly clock: Clock;
  /** The absolute session lifetime, for the cookie's Max-Age. */
  readonly sessionMaxAgeSeconds: number;
  /** Single sign-on through an OpenID provider, when configured. */
  readonly oidc?: OidcRelyingParty | undefined;
  /** Whether operators may sign in with a password (default true). */
  readonly passwordSignIn?: boolean | undefined;
  /** Where SSO refusals and sign-ins are logged (never with a token). */
  readonly logger?: Logger | undefined;
}

const HISTORY: readonly ProposalStatus[] = [...FINAL_STATUSES, 'needs_reconciliation', 'executing'];

function safeNext(value: string | undefined): string {
  return value && /^\/(?![/\\])[A-Za-z0-9_\-/?=&.%~]{0,300}$/.test(value) ? value : '/';
}

function clientOf(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

type ProposalFlash = Exclude<
  FlashKind,
  'grant_created' | 'grant_revoked' | 'operator_changed' | 'routing_changed' | 'slack_users_changed'
>;

const DONE: Readonly<Record<Exclude<ProposalFlash, 'approved' | 'edited' | 'partially_approved'>, Notice>> = {
  // A second Approve (a double click, a resubmitted form) names why nothing ran.
  replayed: {
    tone: 'info',
    title: 'This proposal was already decided. The stored outcome is shown; nothing ran again.',
    reason: 'replayed',
  },
  declined: { tone: 'info', title: 'Declined. The agent will be told.' },
  reconciled: { tone: 'ok', title: 'Reconciled with the provider. The authoritative outcome is below.' },
  still_pending: {
    tone: 'warn',
    title: 'The provider has no final answer yet. Try reconciling again later.',
  },
};

/**
 * The flash a proposal page shows, if it still tells the truth about the stored proposal: a page
 * never says "Approved." or "Declined." over a proposal whose status says otherwise (another
 * operator may have acted between the post and this page view).
 */
function proposalFlash(kind: FlashKind | undefined, status: ProposalStatus): ProposalFlash | undefined {
  switch (kind) {
    case 'approved':
    case 'replayed':
      return status !== 'pending' ? kind : undefined;
    case 'declined':
      return status === 'declined' ? kind : undefined;
    case 'edited':
    case 'partially_approved':
      return status === 'pending' ? kind : undefined;
    case 'reconciled':
      return status !== 'pending' && status !== 'needs_reconciliation' ? kind : undefined;
    case 'still_pending':
      return status === 'needs_reconciliation' ? kind : undefined;
    default:
      return undefined;
  }
}

/** What an approval led to, in one sentence that never claims more than the outcome says. */
function approvedNotice(status: ProposalStatus): Notice {
  switch (status) {
    case 'succeeded':
      return { tone: 'ok', title: 'Approved. The contract was executed once; its outcome is below.' };
    case 'needs_reconciliation':
      return {
        tone: 'warn',
        title:
          'Approved, but the provider did not confirm the call. Reconcile it below; it is never retried blindly.',
      };
    case 'revision_required':
      return { tone: 'warn', title: 'Approved, but nothing was executed: a fact changed since the review.' };
    case 'terminal_failure':
      return { tone: 'bad', title: 'Approved, but the execution failed. It will not be retried.' };
    default:
      return { tone: 'info', title: 'Approved.' };
  }
}

function refusalNotice(reason: DenialReason, message: string, next: Proposal | undefined): Notice {
  const titles: Partial<Record<DenialReason, string>> = {
    stale_view:
      'Not approved: this page showed another version of the proposal. Review it again before deciding.',
    superseded: 'Not approved: this proposal was edited and is superseded.',
    expired: 'Not approved: the proposal expired.',
    declined: 'Not approved: the proposal was declined.',
    replayed: 'Already decided: nothing was done again.',
    recovering:
      'Already approved, but the server running it stopped: the next recovery sweep takes it over. Nothing was done again.',
    forbidden: 'Not allowed.',
    separation_of_duties:
      'Not approved: a proposal needs an approver other than its proposer and its editor.',
    invalid_digest:
      'Not approved: the form did not carry the full digest of this page. Reload and review it.',
    section_mismatch: 'Not approved: the proposal belongs to another section than the page showed.',
    resource_mismatch: 'Not approved: the proposal acts on another resource than the page showed.',
  };
  const body =
    reason === 'superseded' && next ? (
      <>
        {' '}
        The new proposal <ProposalLink proposal={next} /> replaces it; review and approve that one.
      </>
    ) : (
      <>
        {' '}
        <UserText text={message} />.
      </>
    );
  return { tone: 'bad', title: titles[reason] ?? 'Refused.', body, reason };
}

/** The operator console: server-rendered pages, sessions, and CSRF-checked forms. */
export function consoleRoutes(deps: ConsoleDependencies): Hono<AppEnv> {
  const { engine, directory, publicUrl, clock } = deps;
  const app = new Hono<AppEnv>();
  const nonce = (c: Context<AppEnv>) => c.get('secureHeadersNonce') ?? '';
  const sessionOf = (c: Context<AppEnv>): { session: ConsoleSession; sessionId: string } | undefined => {
    const principal = c.get('principal');
    return principal?.via === 'session'
      ? { session: principal.session, sessionId: principal.sessionId }
      : undefined;
  };
  const page = (
    c: Context<AppEnv>,
    body: Page,
    status: 200 | 400 | 401 | 403 | 404 | 409 | 422 | 429 | 502 = 200,
  ) => {
    c.header('Cache-Control', 'no-store');
    return c.html(body, status);
  };
  // After a POST, come back to the page the form was on, not to the action. A single-sign-on
  // session that ended by time goes through its provider again, which vouches for the roles anew.
  const toLogin = (c: Context<AppEnv>) => {
    const next = encodeURIComponent(c.req.path.replace(/\/(approve|decline|edit|reconcile)$/, ''));
    return c.redirect(`${c.get('ssoEnded') && deps.oidc ? '/login/oidc' : '/login'}?next=${next}`, 303);
  };

  /** A state-changing console request: same origin, signed in, a form with only `allowed` fields and the session's CSRF token. */
  const changing = async (c: Context<AppEnv>, allowed: (name: string) => boolean) => {
    assertSameOrigin(c, publicUrl);
    const signedIn = sessionOf(c);
    const form = await readFormBody(c);
    if (!signedIn) return { kind: 'signed_out' as const };
    assertCsrfToken(signedIn.session.csrfToken, form.get('csrf'));
    const unexpected = [...form.keys()].find((k) => k !== 'csrf' && !allowed(k));
    if (unexpected !== undefined)
      throw new HttpProblem(
        400,
        'invalid_form',
        `the form has an unexpected field "${unexpected.slice(0, 40)}"`,
      );
    return { kind: 'signed_in' as const, ...signedIn, form };
  };

  const renderProposal = async (
    c: Context<AppEnv>,
    session: ConsoleSession,
    id: string,
    options: { notices?: Notice[]; status?: 200 | 403 | 404 | 409 | 422 } = {},
  ) => {
    const actor = session.actor;
    const proposal = await engine.proposals.get(actor.tenant, id);
    if (!proposal) throw new HttpProblem(404, 'not_found', 'no such proposal');
    const [audit, related] = await Promise.all([
      engine.audit.timeline(actor.tenant, proposal.id),
      engine.proposals.related(proposal),
    ]);
    const previous = related.supersedes;
    const next = related.supersededBy;
    const notices = [...(options.notices ?? [])];
    // The outcome of the form post that led here comes from a one-time cookie bound to this
    // session and proposal, never from the query string, and only while the stored state agrees.
    const signedIn = sessionOf(c);
    const flash = signedIn
      ? takeFlash(c, publicUrl, { sessionId: signedIn.sessionId, page: `/proposals/${proposal.id}` })
      : undefined;
    const done = proposalFlash(flash, proposal.status);
    if (done === 'edited') {
      if (previous)
        notices.push({
          tone: 'ok',
          title: `Saved as a new proposal with hash ${proposal.short}.`,
          body: (
            <>
              {' '}
              It supersedes <ProposalLink proposal={previous} />; approve this one to execute it.
            </>
          ),
        });
    } else if (done === 'approved') {
      notices.push(approvedNotice(proposal.status));
    } else if (done === 'partially_approved') {
      const { required, given } = proposal.approvals;
      notices.push({
        tone: 'ok',
        title: `Your approval was recorded: ${given.length} of ${required} approvals; another approver must approve. Nothing ran yet.`,
      });
    } else if (done) notices.push(DONE[done]);
    const run = c.req.query('run');
    const runMatches = run === undefined || run === proposal.runId;
    if (!runMatches)
      notices.push({ tone: 'bad', title: 'This link belongs to another agent run.', reason: 'run_mismatch' });
    if (proposal.status === 'superseded' && next && !options.notices?.length) {
      notices.push({
        tone: 'info',
        title: 'This proposal was edited.',
        body: (
          <>
            {' '}
            The new proposal <ProposalLink proposal={next} /> replaces it.
          </>
        ),
      });
    }
    const operation = engine.operations.get(proposal.operation);
    return page(
      c,
      proposalPage({
        nonce: nonce(c),
        session,
        proposal,
        timeline: audit,
        now: clock.now(),
        // The engine's own judgement, never a copy of it: a button shows exactly when the engine would accept.
        rights: {
          approve: engine.proposals.mayDecide(actor, proposal, 'approve'),
          decline: engine.proposals.mayDecide(actor, proposal, 'decline'),
          edit: engine.proposals.mayDecide(actor, proposal, 'edit'),
          reconcile: engine.proposals.mayDecide(actor, proposal, 'reconcile'),
        },
        editFields: operation ? editFields(operation) : [],
        handback: modelText(handbackText(engine, proposal).text),
        notices,
        runMatches,
        related,
        operation,
      }),
      options.status ?? 200,
    );
  };

  /** After a successful form post: remember its result for the next page view, and go there. */
  const toPage = (c: Context<AppEnv>, sessionId: string, path: string, kind: FlashKind) => {
    writeFlash(c, publicUrl, { sessionId, page: path }, kind);
    return c.redirect(path, 303);
  };
  const toProposal = (c: Context<AppEnv>, sessionId: string, id: string, kind: FlashKind) =>
    toPage(c, sessionId, `/proposals/${id}`, kind);

  const refused = async (
    c: Context<AppEnv>,
    session: ConsoleSession,
    id: string,
    reason: DenialReason,
    message: string,
  ) => {
    if (reason === 'not_found') throw new HttpProblem(404, 'not_found', 'no such proposal');
    const status = refusalStatus(reason);
    const current = await engine.proposals.get(session.actor.tenant, id);
    const next = current?.supersededBy
      ? await engine.proposals.get(session.actor.tenant, current.supersededBy)
      : undefined;
    return renderProposal(c, session, id, {
      notices: [refusalNotice(reason, message, next)],
      status: status === 400 ? 422 : (status as 403 | 409 | 422),
    });
  };

  app.get(STYLESHEET.path, (c) => {
    c.header('Cache-Control', 'public, max-age=31536000, immutable');
    return c.body(STYLESHEET.css, 200, { 'Content-Type': 'text/css; charset=utf-8' });
  });

  const { oidc, logger = silentLogger } = deps;
  const passwordSignIn = deps.passwordSignIn !== false;
  const signInOptions = { sso: oidc !== undefined, password: passwordSignIn };

  app.get('/login', (c) => {
    if (sessionOf(c)) return c.redirect('/', 303);
    const next = c.req.query('next');
    return page(
      c,
      loginPage({
        nonce: nonce(c),
        csrf: loginToken(c, publicUrl),
        ...signInOptions,
        ...(next ? { next: safeNext(next) } : {}),
      }),
    );
  });

  mountSso(app, {
    directory,
    engine,
    publicUrl,
    clock,
    oidc,
    logger,
    sessionMaxAgeSeconds: deps.sessionMaxAgeSeconds,
    signInOptions,
    sessionOf,
    page,
    nonce,
    safeNext,
  });

  app.post('/login', async (c) => {
    assertSameOrigin(c, publicUrl);
    if (!passwordSignIn)
      throw new HttpProblem(403, 'forbidden', 'password sign-in is turned off; sign in with SSO');
    const form = await readFormBody(c);
    const email = form.get('email') ?? '';
    const next = safeNext(form.get('next'));
    const again = (
      error: string,
      status: 401 | 403 | 429,
      reason: 'unauthenticated' | 'cross_site_request' | 'rate_limited',
    ) =>
      page(
        c,
        loginPage({
          nonce: nonce(c),
          csrf: loginToken(c, publicUrl),
          ...signInOptions,
          email: email.slice(0, 320),
          error,
          next,
          reason,
        }),
        status,
      );
    const expected = readLoginToken(c, publicUrl);
    // No login-token cookie: the form's double-submit check cannot pass, like a missing CSRF token.
    if (!expected) return again('The sign-in form expired. Please sign in again.', 403, 'cross_site_request');
    assertCsrfToken(expected, form.get('csrf'));
    const result = await directory.login({
      email,
      password: form.get('password') ?? '',
      client: clientOf(c),
      previousSessionId: sessionOf(c)?.sessionId,
      device: readDeviceCookie(c, publicUrl),
    });
    if (result.kind === 'rate_limited') {
      c.header('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
      return again(
        `Too many failed sign-ins. Try again in ${Math.ceil(result.retryAfterMs / 60_000)} min.`,
        429,
        'rate_limited',
      );
    }
    if (result.kind === 'invalid_credentials')
      return again('That email and password do not match an operator.', 401, 'unauthenticated');
    writeSessionCookie(c, publicUrl, result.sessionId, deps.sessionMaxAgeSeconds);
    writeDeviceCookie(c, publicUrl, result.device);
    return c.redirect(next, 303);
  });

  app.post('/logout', async (c) => {
    const request = await changing(c, () => false);
    const ended = request.kind === 'signed_in' ? await directory.endSession(request.sessionId) : {};
    clearSessionCookie(c, publicUrl);
    // RP-initiated logout: a session opened through the provider leaves it too, naming itself with
    // the ID token of its sign-in (`id_token_hint`), so the provider need not ask whether to.
    const provider = ended.provider;
    if (oidc && provider) {
      const leave = async () =>
        provider.issuer === (await oidc.issuer())
          ? oidc.logoutUrl(`${expectedOrigin(c, publicUrl)}/login`, provider.idToken)
          : undefined;
      const away = await leave().catch(() => undefined);
      if (away)
        return page(
          c,
          movingOnPage({
            nonce: nonce(c),
            title: 'Signed out',
            href: away.href,
            link: 'Sign out at your identity provider',
          }),
        );
    }
    return c.redirect('/login', 303);
  });

  app.get(INBOX_SCRIPT.path, (c) => {
    c.header('Cache-Control', 'public, max-age=31536000, immutable');
    return c.body(INBOX_SCRIPT.js, 200, { 'Content-Type': 'text/javascript; charset=utf-8' });
  });

  app.get('/', async (c) => {
    const signedIn = sessionOf(c);
    if (!signedIn) return toLogin(c);
    const { session } = signedIn;
    const actor = session.actor;
    const parsed = parseInboxQuery((name) => c.req.query(name), homeViewOf(engine, actor));
    if (parsed.kind === 'invalid')
      return page(
        c,
        inboxQueryErrorPage({
          nonce: nonce(c),
          session,
          parameter: parsed.parameter,
          message: parsed.message,
        }),
        400,
      );
    const { query } = parsed;
    const tenant = actor.tenant;
    const now = clock.now();
    const filter = queryFilter(query);
    const tab = (status: InboxQuery['status']) => ({ ...filter, ...tabFilter(status, actor, now) });
    const [list, needs, pending, reconcile, recent, total] = await Promise.all([
      engine.proposals.list(tenant, {
        ...tab(query.status),
        sort: query.sort,
        limit: 50,
        ...(query.cursor ? { cursor: query.cursor } : {}),
      }),
      engine.proposals.count(tenant, tab('needs')),
      engine.proposals.count(tenant, tab('pending')),
      engine.proposals.count(tenant, tab('needs_reconciliation')),
      engine.proposals.count(tenant, tab('recent')),
      engine.proposals.count(tenant, tab(query.status)),
    ]);
    return page(
      c,
      inboxPage({
        nonce: nonce(c),
        session,
        query,
        items: list.items.map((proposal) => ({
          proposal,
          fields: listedFields(proposal, engine.operations.get(proposal.operation)),
          you: yourPart(engine, actor, proposal),
        })),
        counts: { needs, pending, needs_reconciliation: reconcile, recent },
        total,
        operations: [...engine.operations.keys()].sort(),
        now: clock.now(),
        nextCursor: list.nextCursor,
      }),
    );
  });

  // For the live inbox: whether one proposal belongs in the list the page shows (same query
  // string), so a notice of new proposals counts only the rows a reload would add.
  app.get('/inbox/match', async (c) => {
    const signedIn = sessionOf(c);
    if (!signedIn) throw new HttpProblem(401, 'unauthenticated', 'sign in again');
    const actor = signedIn.session.actor;
    const parsed = parseInboxQuery((name) => c.req.query(name), homeViewOf(engine, actor));
    const id = c.req.query('id') ?? '';
    if (parsed.kind === 'invalid')
      throw new HttpProblem(422, 'invalid_request', parsed.message, {
        extra: { issues: [{ path: `$.${parsed.parameter}`, message: parsed.message }] },
      });
    if (!/^prp_[0-9a-z]{1,40}$/.test(id))
      throw new HttpProblem(422, 'invalid_request', 'id must be a proposal id', {
        extra: { issues: [{ path: '$.id', message: 'expected a proposal id' }] },
      });
    const proposal = await engine.proposals.get(actor.tenant, id);
    c.header('Cache-Control', 'no-store');
    return c.json({
      id,
      match: proposal !== undefined && inListOf(engine, actor, parsed.query, proposal, clock.now()),
    });
  });

  app.get('/history', async (c) => {
    const signedIn = sessionOf(c);
    if (!signedIn) return toLogin(c);
    const cursor = c.req.query('cursor');
    if (cursor && !isListCursor(cursor))
      return page(
        c,
        inboxQueryErrorPage({
          nonce: nonce(c),
          session: signedIn.session,
          parameter: 'cursor',
          message: 'cursor must be a link this page made',
        }),
        400,
      );
    const list = await engine.proposals.list(signedIn.session.actor.tenant, {
      status: HISTORY,
      limit: 50,
      ...(cursor ? { cursor } : {}),
    });
    return page(
      c,
      historyPage({
        nonce: nonce(c),
        session: signedIn.session,
        items: list.items,
        nextCursor: list.nextCursor,
      }),
    );
  });

  const GRANT_FIELDS = [
    'subject',
    'operations',
    'resource',
    'constraints',
    'capField',
    'capTotal',
    'capUses',
    'expiresAt',
    'note',
  ] as const;
  const renderGrants = async (
    c: Context<AppEnv>,
    session: ConsoleSession,
    extra: { notices?: Notice[]; form?: GrantFormValues; status?: 200 | 403 | 422 } = {},
  ) => {
    const grants = await engine.grants.list(session.actor.tenant);
    return page(
      c,
      grantsPage({
        nonce: nonce(c),
        session,
        grants,
        operations: [...engine.operations.keys()],
        ...(extra.notices ? { notices: extra.notices } : {}),
        ...(extra.form ? { form: extra.form } : {}),
      }),
      extra.status ?? 200,
    );
  };

  app.get('/grants', async (c) => {
    const signedIn = sessionOf(c);
    if (!signedIn) return toLogin(c);
    const done = takeFlash(c, publicUrl, { sessionId: signedIn.sessionId, page: '/grants' });
    const notices: Notice[] =
      done === 'grant_created'
        ? [{ tone: 'ok', title: 'Grant created.' }]
        : done === 'grant_revoked'
          ? [{ tone: 'ok', title: 'Grant revoked.' }]
          : [];
    return renderGrants(c, signedIn.session, { notices });
  });

  // A grant is made here, from bounds an admin states, and never from a proposal's card.
  app.post('/grants', async (c) => {
    const request = await changing(c, (k) => (GRANT_FIELDS as readonly string[]).includes(k));
    if (request.kind === 'signed_out') return toLogin(c);
    const { session, form } = request;
    const values = Object.fromEntries(
      GRANT_FIELDS.map((f) => [f, form.get(f)?.trim() ?? '']),
    ) as unknown as GrantFormValues;
    const problem = (title: string, body: string, status: 403 | 422 = 422) =>
      renderGrants(c, session, {
        notices: [{ tone: 'bad', title, body, reason: status === 403 ? 'forbidden' : 'invalid_request' }],
        form: values,
        status,
      });
    let constraints: Record<string, unknown>;
    try {
      const parsed = values.constraints === '' ? {} : parseJson(values.constraints);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        return problem('The grant was not created.', '$.constraints: expected a JSON object');
      constraints = parsed as Record<string, unknown>;
    } catch (error) {
      return problem(
        'The grant was not created.',
        `$.constraints: ${error instanceof Error ? error.message : 'invalid JSON'}`,
      );
    }
    const whole = (text: string) => (text === '' ? undefined : Number(text));
    const expiresAt = Date.parse(values.expiresAt.endsWith('Z') ? values.expiresAt : `${values.expiresAt}Z`);
    const capTotal = whole(values.capTotal);
    const capUses = whole(values.capUses);
    const result = await engine.grants.create({
      tenant: session.actor.tenant,
      grantedBy: session.actor,
      subject: values.subject,
      operations: values.operations
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
      resource: values.resource,
      constraints,
      cap: {
        ...(values.capField ? { field: values.capField } : {}),
        ...(capTotal !== undefined ? { total: capTotal } : {}),
        ...(capUses !== undefined ? { uses: capUses } : {}),
      },
      expiresAt: Number.isNaN(expiresAt) ? 0 : expiresAt,
      ...(values.note ? { note: values.note } : {}),
    });
    if (result.kind === 'forbidden') return problem('Only an admin creates grants.', result.message, 403);
    if (result.kind === 'invalid_grant')
      return problem('The grant was not created.', formatIssues(result.issues));
    return toPage(c, request.sessionId, '/grants', 'grant_created');
  });

  app.post('/grants/:id/revoke', async (c) => {
    const request = await changing(c, () => false);
    if (request.kind === 'signed_out') return toLogin(c);
    const result = await engine.grants.revoke({
      tenant: request.session.actor.tenant,
      grantId: c.req.param('id'),
      actor: request.session.actor,
    });
    if (result.kind === 'revoked') return toPage(c, request.sessionId, '/grants', 'grant_revoked');
    if (result.reason === 'not_found') throw new HttpProblem(404, 'not_found', 'no such grant');
    return renderGrants(c, request.session, {
      notices: [
        { tone: 'bad', title: 'The grant was not revoked.', body: result.message, reason: result.reason },
      ],
      status: result.reason === 'forbidden' ? 403 : 422,
    });
  });

  app.get('/proposals/:id', async (c) => {
    const signedIn = sessionOf(c);
    if (!signedIn) return toLogin(c);
    return renderProposal(c, signedIn.session, c.req.param('id'));
  });

  // The approve form carries the digest the page displayed and the CSRF token: nothing else. The
  // digest binds the section and resource the page showed (stored format 2 on), so they need no
  // field of their own (a browser may rewrite line breaks in one). The engine refuses a malformed
  // digest before anything is written.
  app.post('/proposals/:id/approve', async (c) => {
    const request = await changing(c, (k) => k === 'digest');
    if (request.kind === 'signed_out') return toLogin(c);
    const id = c.req.param('id');
    const result = await engine.proposals.approveAndExecute({
      tenant: request.session.actor.tenant,
      proposalId: id,
      approver: request.session.actor,
      seenDigest: request.form.get('digest') ?? '',
    });
    if (result.kind === 'completed') return toProposal(c, request.sessionId, id, 'approved');
    if (result.kind === 'already_completed') return toProposal(c, request.sessionId, id, 'replayed');
    if (result.kind === 'awaiting_approvals')
      return toProposal(c, request.sessionId, id, 'partially_approved');
    return refused(c, request.session, id, result.reason, result.message);
  });

  app.post('/proposals/:id/decline', async (c) => {
    const request = await changing(c, (k) => k === 'reason');
    if (request.kind === 'signed_out') return toLogin(c);
    const id = c.req.param('id');
    const reason = request.form.get('reason')?.trim();
    const result = await engine.proposals.decline({
      tenant: request.session.actor.tenant,
      proposalId: id,
      actor: request.session.actor,
      ...(reason ? { reason } : {}),
    });
    if (result.kind === 'declined') return toProposal(c, request.sessionId, id, 'declined');
    return refused(c, request.session, id, result.reason, result.message);
  });

  app.post('/proposals/:id/edit', async (c) => {
    const request = await changing(c, (k) => k.startsWith('field.'));
    if (request.kind === 'signed_out') return toLogin(c);
    const { session } = request;
    const id = c.req.param('id');
    const proposal = await engine.proposals.get(session.actor.tenant, id);
    const operation = proposal ? engine.operations.get(proposal.operation) : undefined;
    if (!proposal || !operation) throw new HttpProblem(404, 'not_found', 'no such proposal');
    const changes = formChanges(editFields(operation), request.form, proposal.request);
    if (Object.keys(changes).length === 0) {
      return renderProposal(c, session, id, {
        notices: [{ tone: 'info', title: 'Nothing changed, so nothing was saved.' }],
      });
    }
    const result = await engine.proposals.edit({
      tenant: session.actor.tenant,
      proposalId: id,
      editor: session.actor,
      changes,
    });
    if (result.kind === 'edited') return toProposal(c, request.sessionId, result.proposal.id, 'edited');
    if (result.kind === 'invalid_request') {
      return renderProposal(c, session, id, {
        notices: [
          {
            tone: 'bad',
            title: 'The edit was not saved.',
            body: (
              <>
                {' '}
                <UserText text={modelText(result.modelMessage)} />
              </>
            ),
            reason: result.reason,
          },
        ],
        status: 422,
      });
    }
    return refused(c, session, id, result.reason, result.message);
  });

  app.post('/proposals/:id/reconcile', async (c) => {
    const request = await changing(c, () => false);
    if (request.kind === 'signed_out') return toLogin(c);
    const id = c.req.param('id');
    const result = await engine.proposals.reconcile({
      tenant: request.session.actor.tenant,
      proposalId: id,
      actor: request.session.actor,
    });
    if (result.kind === 'reconciled') return toProposal(c, request.sessionId, id, 'reconciled');
    if (result.kind === 'still_pending') return toProposal(c, request.sessionId, id, 'still_pending');
    return refused(c, request.session, id, result.reason, result.message);
  });

  return app;
}
