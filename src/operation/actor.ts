/**
 * Who acts: an agent proposes, an operator (a human) approves, declines or edits. The tenant
 * always comes from the server (a token or a session), never from the model.
 */
export interface Actor {
  /** Stable principal id, e.g. `agent:acme-support` or `user:ada@acme.test`. */
  readonly id: string;
  readonly tenant: string;
  readonly kind: 'agent' | 'operator' | 'system';
  /** Operator roles such as `approver`, `viewer`, `admin`. */
  readonly roles: readonly string[];
}
