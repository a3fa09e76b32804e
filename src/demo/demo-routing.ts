import type { Engine } from '../engine/create-engine.js';

/**
 * The demo's routing, made by each tenant's admin: payments over 1,000.00 go to the `finance`
 * group (the two approvers, who also complete the two-person rule from 10,000.00) and its channel
 * `#finance-approvals`; one undecided for 15 minutes is escalated to the `finance-leads` group (the
 * admin) and `#finance-leads`. Smaller payments and every other operation stay unrouted: any
 * approver decides them. With `options.channel` (the Slack channel `serve --demo` posts to), both
 * the route and its escalation name that channel instead: a demo workspace has no
 * `#finance-approvals`, and a card sent there would fail `channel_not_found` at every retry.
 * Returns how many routes it made (none when a tenant already has routes).
 */
export async function seedDemoRouting(
  engine: Engine,
  tenants: readonly string[],
  options: { readonly channel?: string } = {},
): Promise<number> {
  let made = 0;
  for (const tenant of tenants) {
    if ((await engine.routes.list(tenant)).length > 0) continue;
    const actor = { kind: 'operator', id: `user:admin@${tenant}.test`, tenant, roles: ['admin'] } as const;
    const groups = [
      ['finance', [`user:approver@${tenant}.test`, `user:approver2@${tenant}.test`]],
      ['finance-leads', [`user:admin@${tenant}.test`]],
    ] as const;
    for (const [name, members] of groups) {
      const saved = await engine.groups.save({ tenant, name, members, actor });
      if (saved.kind !== 'saved') throw new Error(`demo group ${name}: ${saved.message}`);
    }
    const route = await engine.routes.save({
      tenant,
      route: {
        name: 'payments over 1,000.00',
        operation: 'invoice.pay',
        amount: { field: 'amount_minor', above: 100_000 },
        group: 'finance',
        channel: options.channel ?? '#finance-approvals',
        escalation: {
          afterMs: 15 * 60_000,
          group: 'finance-leads',
          channel: options.channel ?? '#finance-leads',
        },
      },
      actor,
    });
    if (route.kind !== 'saved') throw new Error(`demo route: ${route.message}`);
    made += 1;
  }
  return made;
}
