import type { Actor } from '../../operation/actor.js';

/** How many MCP sessions may be open at once, per agent, per tenant and for the whole server. */
export interface McpSessionLimits {
  /** Open sessions of one agent principal at most. */
  readonly perAgent: number;
  /** Open sessions of all the agents of one tenant at most. */
  readonly perTenant: number;
  /** Open sessions of every tenant at most: the backstop that protects the process. */
  readonly total: number;
}

/** Which cap refused a session. */
export type McpSessionScope = 'agent' | 'tenant' | 'server';

/** A slot for one session, or the cap that refused it. */
export type McpSessionSlot =
  | { readonly kind: 'reserved'; readonly scope?: never; release(): void }
  | { readonly kind: 'refused'; readonly scope: McpSessionScope; readonly release?: never };

/**
 * Counts open MCP sessions by agent, by tenant and in total. A slot is taken synchronously when
 * a session starts opening, before any await, so a burst of concurrent `initialize` requests cannot
 * overshoot a cap; it is given back exactly once, when the session closes or fails to open.
 * One tenant's agents filling their own caps never take the slots another tenant needs, as long
 * as `perTenant` times the number of busy tenants stays under `total`.
 */
export class McpSessionLedger {
  readonly #limits: McpSessionLimits;
  readonly #byAgent = new Map<string, number>();
  readonly #byTenant = new Map<string, number>();
  #total = 0;

  constructor(limits: McpSessionLimits) {
    this.#limits = Object.freeze({ ...limits });
  }

  /** Sessions held (open or opening). */
  get total(): number {
    return this.#total;
  }

  /** Takes a slot for a session of `agent`, or names the first cap that is full (agent, then tenant, then server). */
  reserve(agent: Pick<Actor, 'id' | 'tenant'>): McpSessionSlot {
    const agentKey = JSON.stringify([agent.tenant, agent.id]);
    const agentCount = this.#byAgent.get(agentKey) ?? 0;
    const tenantCount = this.#byTenant.get(agent.tenant) ?? 0;
    if (agentCount >= this.#limits.perAgent) return { kind: 'refused', scope: 'agent' };
    if (tenantCount >= this.#limits.perTenant) return { kind: 'refused', scope: 'tenant' };
    if (this.#total >= this.#limits.total) return { kind: 'refused', scope: 'server' };
    this.#byAgent.set(agentKey, agentCount + 1);
    this.#byTenant.set(agent.tenant, tenantCount + 1);
    this.#total++;
    let released = false;
    return {
      kind: 'reserved',
      release: () => {
        if (released) return;
        released = true;
        decrement(this.#byAgent, agentKey);
        decrement(this.#byTenant, agent.tenant);
        this.#total--;
      },
    };
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const next = (counts.get(key) ?? 1) - 1;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
