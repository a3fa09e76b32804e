import { auditChainer } from '../../audit/chain.js';
import type { Clock } from '../../engine/engine-context.js';
import { newId } from '../../engine/ids.js';
import { AuditLedger } from '../../ledger/audit-ledger.js';
import type { SlackApi } from '../../notify/slack-api.js';
import type { Actor } from '../../operation/actor.js';
import { type SlackUserLink, slackRecordsOf } from '../../store/sql-slack.js';
import { CorruptAuditChainError } from '../../store/store-errors.js';
import type { Store } from '../../store/store.js';
import type { PrincipalDirectory } from '../directory/principal-directory.js';

/** Who a Slack user acts as in a tenant, and how that was established. */
export type SlackOperator =
  | { readonly kind: 'operator'; readonly actor: Actor; readonly via: 'link' | 'verified_email' }
  /** No admin link and no verified email of an active operator of the tenant. */
  | { readonly kind: 'unmapped' };

/** What changing a link came to. */
export type SlackLinkResult =
  | { readonly kind: 'linked' | 'unlinked'; readonly link: SlackUserLink }
  | {
      readonly kind: 'refused';
      readonly reason: 'forbidden' | 'not_found' | 'invalid_request' | 'corrupt_audit_chain';
      readonly message: string;
    };

/** Slack's user ids: `U…` (or `W…` in an Enterprise Grid). */
export const SLACK_USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/**
 * Slack users as operators of a tenant: an admin's link first (`linkedBy` an admin, audited),
 * else the email Slack says it verified (`users.info`: `is_email_confirmed` and `profile.email`,
 * which needs the `users:read.email` scope) matching an active operator of the tenant. Never an
 * operator of another tenant, never a disabled one.
 */
export class SlackOperators {
  readonly #store: Store;
  readonly #directory: PrincipalDirectory;
  readonly #api: SlackApi;
  readonly #sealKey: string | Uint8Array | undefined;
  readonly #clock: Clock;

  constructor(deps: {
    readonly store: Store;
    readonly directory: PrincipalDirectory;
    readonly api: SlackApi;
    readonly sealKey?: string | Uint8Array;
    readonly clock?: Clock;
  }) {
    this.#store = deps.store;
    this.#directory = deps.directory;
    this.#api = deps.api;
    this.#sealKey = deps.sealKey;
    this.#clock = deps.clock ?? { now: () => Date.now() };
  }

  /** The operator a Slack user acts as in `tenant` now, or `unmapped`. */
  async resolve(tenant: string, slackUser: string): Promise<SlackOperator> {
    if (!SLACK_USER_ID.test(slackUser)) return { kind: 'unmapped' };
    const link = await this.#store.transaction((tx) => slackRecordsOf(tx).link(tenant, slackUser));
    let email: string | undefined;
    let via: 'link' | 'verified_email' = 'link';
    if (link) email = link.operatorEmail;
    else {
      const info = await this.#api.userInfo(slackUser);
      if (info.kind === 'ok' && info.value.verifiedEmail !== null) {
        email = info.value.verifiedEmail;
        via = 'verified_email';
      }
    }
    if (email === undefined) return { kind: 'unmapped' };
    const wanted = email.toLowerCase();
    // The directory lists active operators only: a disabled one is unmapped.
    const operator = (await this.#directory.operators(tenant)).find((o) => o.email.toLowerCase() === wanted);
    if (!operator || operator.roles.length === 0) return { kind: 'unmapped' };
    const actor: Actor = Object.freeze({
      kind: 'operator',
      id: `user:${operator.email}`,
      tenant,
      roles: Object.freeze([...operator.roles]),
    });
    return { kind: 'operator', actor, via };
  }

  /** A tenant's links. */
  links(tenant: string): Promise<SlackUserLink[]> {
    return this.#store.transaction((tx) => slackRecordsOf(tx).links(tenant));
  }

  /**
   * Links a Slack user to an operator of the admin's tenant (replacing an earlier link), audited
   * in the tenant's chain as `operator_changed` of that operator with `detail.slackUser`.
   */
  link(input: {
    readonly actor: Actor;
    readonly slackUser: string;
    readonly email: string;
  }): Promise<SlackLinkResult> {
    return this.#change(input.actor, input.slackUser, input.email);
  }

  /** Removes a Slack user's link, audited like {@link SlackOperators.link}. */
  unlink(input: { readonly actor: Actor; readonly slackUser: string }): Promise<SlackLinkResult> {
    return this.#change(input.actor, input.slackUser, undefined);
  }

  async #change(actor: Actor, slackUser: string, email: string | undefined): Promise<SlackLinkResult> {
    const { tenant } = actor;
    if (actor.kind !== 'operator' || !actor.roles.includes('admin'))
      return { kind: 'refused', reason: 'forbidden', message: 'Slack users are linked by admins' };
    if (!SLACK_USER_ID.test(slackUser))
      return {
        kind: 'refused',
        reason: 'invalid_request',
        message: '$.slackUser: a Slack user id like U012ABCDEF',
      };
    // The same bound as the API's schema, so the console's form is refused as the API is.
    if (email !== undefined && (email.length < 3 || email.length > 320))
      return {
        kind: 'refused',
        reason: 'invalid_request',
        message: '$.email: an email of 3 to 320 characters',
      };
    const accounts = await this.#directory.operatorAccounts(tenant);
    const now = this.#clock.now();
    try {
      return await new AuditLedger(this.#store, auditChainer(this.#sealKey)).transaction(
        async (tx, audit): Promise<SlackLinkResult> => {
          const records = slackRecordsOf(tx);
          let operatorEmail: string;
          let kind: 'linked' | 'unlinked';
          let before: string | null;
          if (email === undefined) {
            before = await records.removeLink(tenant, slackUser);
            if (before === null)
              return { kind: 'refused', reason: 'not_found', message: 'no such Slack user link' };
            operatorEmail = before;
            kind = 'unlinked';
          } else {
            const operator = accounts.find((a) => a.email.toLowerCase() === email.toLowerCase());
            if (!operator)
              return {
                kind: 'refused',
                reason: 'not_found',
                message: 'no operator of this tenant has that email',
              };
            operatorEmail = operator.email;
            before = await records.setLink({
              tenant,
              slackUser,
              operatorEmail,
              linkedBy: actor.id,
              linkedAt: now,
            });
            kind = 'linked';
          }
          const subject = accounts.find((a) => a.email === operatorEmail);
          audit.append({
            tenant,
            proposalId: subject?.id ?? operatorEmail,
            attemptId: null,
            runId: '-',
            step: 'operator_changed',
            actor: actor.id,
            reason: null,
            digests: {},
            commandId: null,
            detail: {
              operator: operatorEmail,
              slackUser: {
                id: slackUser,
                linked: kind === 'linked',
                ...(before !== null && before !== operatorEmail ? { replaced: before } : {}),
              },
            },
            at: now,
            id: newId('evt'),
          });
          return { kind, link: { tenant, slackUser, operatorEmail, linkedBy: actor.id, linkedAt: now } };
        },
      );
    } catch (error) {
      if (!(error instanceof CorruptAuditChainError)) throw error;
      return {
        kind: 'refused',
        reason: 'corrupt_audit_chain',
        message: `the audit chain of ${error.tenant} holds an event the server did not write: nothing changed`,
      };
    }
  }
}
