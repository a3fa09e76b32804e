import type { MiddlewareHandler } from 'hono';
import type { Actor } from '../../operation/actor.js';
import type { AppEnv, Principal } from '../app-env.js';
import type { PrincipalDirectory } from '../directory/principal-directory.js';
import { HttpProblem } from '../../http/http-problem.js';
import { readSessionCookie } from './session-cookie.js';

/**
 * Resolves who is calling: an `Authorization: Bearer` token (agents and operator API clients)
 * or, without one, the console session cookie. A bearer header that does not resolve is a 401
 * at once; it never falls back to the cookie.
 */
export function authenticate(
  directory: PrincipalDirectory,
  publicUrl: URL | undefined,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let principal: Principal | undefined;
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(authorization);
      const actor = match ? await directory.authenticateBearer(match[1]!) : undefined;
      if (!actor) throw unauthenticated('the bearer token is not valid');
      principal = { via: 'bearer', actor };
    } else {
      const sessionId = readSessionCookie(c, publicUrl);
      const found = sessionId ? await directory.lookupSession(sessionId) : { kind: 'none' as const };
      if (found.kind === 'live' && sessionId)
        principal = { via: 'session', actor: found.session.actor, session: found.session, sessionId };
      if (found.kind === 'sso_ended') c.set('ssoEnded', found.issuer);
    }
    c.set('principal', principal);
    await next();
  };
}

/**
 * Whether a request's principal still stands, checked again later on the same request: for a
 * response that outlives the moment it was authenticated (an event stream), so a revoked token,
 * an ended or expired session, or a disabled operator stops it. The session check does not count
 * as activity (its idle timeout keeps running).
 */
export type PrincipalRecheck = (principal: Principal, authorization: string | undefined) => Promise<boolean>;

/** The {@link PrincipalRecheck} of a directory: the same token or session resolves to the same actor. */
export function principalRecheck(directory: PrincipalDirectory): PrincipalRecheck {
  return async (principal, authorization) => {
    let actor: Actor | undefined;
    if (principal.via === 'session') {
      actor = (await directory.resolveSession(principal.sessionId, { touch: false }))?.actor;
    } else {
      const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(authorization ?? '');
      actor = match ? await directory.authenticateBearer(match[1]!) : undefined;
    }
    return (
      actor !== undefined &&
      actor.id === principal.actor.id &&
      actor.tenant === principal.actor.tenant &&
      actor.kind === principal.actor.kind
    );
  };
}

/** A 401 with the bearer challenge. */
export function unauthenticated(message = 'sign in or send a bearer token'): HttpProblem {
  return new HttpProblem(401, 'unauthenticated', message, {
    headers: { 'WWW-Authenticate': 'Bearer realm="countersign"' },
  });
}
