import type { Actor } from '../operation/actor.js';
import type { ConsoleSession } from './directory/principal-directory.js';

/** Who made a request, and how they proved it. */
export type Principal =
  | { readonly via: 'bearer'; readonly actor: Actor }
  | {
      readonly via: 'session';
      readonly actor: Actor;
      readonly session: ConsoleSession;
      readonly sessionId: string;
    };

/** The Hono environment of the countersign app: what middleware hands to handlers. */
export interface AppEnv {
  Variables: {
    /** Set by the authentication middleware; undefined for anonymous requests. */
    principal: Principal | undefined;
    /**
     * Set when the request's session cookie named a single-sign-on session that ended by time: the
     * issuer of the provider the console sends the operator through again.
     */
    ssoEnded?: string;
    /** The CSP nonce of this response (set by the secure-headers middleware). */
    secureHeadersNonce?: string;
  };
}
