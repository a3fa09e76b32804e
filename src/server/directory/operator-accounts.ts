import { createHash } from 'node:crypto';

/**
 * An operator as an admin manages it: never the password hash. `id` is `op_` and 16 hex digits of
 * a SHA-256 of the email, stable for as long as the operator exists (the email is its key), so a
 * URL or a log line names the operator without spelling out their email.
 */
export interface OperatorAccount {
  readonly id: string;
  readonly email: string;
  readonly tenant: string;
  readonly roles: readonly string[];
  /** False once disabled: no session, token or sign-in of theirs works. */
  readonly active: boolean;
  readonly createdAt: number;
  readonly disabledAt: number | null;
  /** Whether the operator signs in through an identity provider (which sets their roles at each sign-in). */
  readonly sso: boolean;
}

/** What an admin changes about an operator; a field left out stays as it is. */
export interface OperatorChange {
  readonly active?: boolean;
  readonly roles?: readonly string[];
}

/**
 * The result of {@link PrincipalDirectory.updateOperator}: the operator after the change (`changed`
 * false when it asked for what already was, then nothing is written or audited), or a refusal with
 * its reason: `forbidden` (not an admin of the tenant), `not_found` (no such operator in the
 * tenant, another tenant's alike), `last_admin` (the tenant would be left without an active
 * admin), `invalid_request` (a malformed role list), `corrupt_audit_chain` (nothing changed).
 */
export type OperatorUpdateResult =
  | { readonly kind: 'updated'; readonly operator: OperatorAccount; readonly changed: boolean }
  | {
      readonly kind: 'refused';
      readonly reason: 'forbidden' | 'not_found' | 'last_admin' | 'invalid_request' | 'corrupt_audit_chain';
      readonly message: string;
    };

/**
 * The result of {@link PrincipalDirectory.removeProviderRoles}: the identity's operator lost every
 * role and its sessions (`audited` false only when the tenant's audit chain is corrupt: powers end
 * all the same), or the provider's identity is bound to no operator.
 */
export type ProviderRoleRemoval =
  | {
      readonly kind: 'removed';
      readonly email: string;
      readonly tenant: string;
      readonly sessionsEnded: number;
      readonly audited: boolean;
    }
  | { readonly kind: 'unknown_identity' };

/** The stable id of an operator: `op_` and the first 16 hex digits of a SHA-256 of the normalized email. */
export function operatorId(email: string): string {
  return `op_${createHash('sha256').update(`countersign:operator\0${email}`).digest('hex').slice(0, 16)}`;
}

/** The shape of an operator id (checked before any lookup). */
export const OPERATOR_ID = /^op_[0-9a-f]{16}$/;

/** A role list as stored (comma-separated) to a list; the empty string is no role. */
export function rolesOf(stored: string): string[] {
  return stored.split(',').filter(Boolean);
}

/** Whether an operator, as it would be, is an active admin. */
export function isActiveAdmin(account: Pick<OperatorAccount, 'active' | 'roles'>): boolean {
  return account.active && account.roles.includes('admin');
}
