import { randomBytes } from 'node:crypto';
import type { PrincipalDirectory } from '../server/directory/principal-directory.js';
import { type DemoCredentials, type DemoOperator, writeDemoCredentials } from './demo-credentials.js';

/** The demo tenants and their display names. */
export const DEMO_TENANTS: Readonly<Record<string, string>> = Object.freeze({
  acme: 'Acme Corp',
  globex: 'Globex Corporation',
});

const ROLES: readonly DemoOperator['role'][] = ['approver', 'viewer', 'admin'];

/** `already_seeded` when the store has the demo tenants: their logins stay, and no file is written. */
export type SeedResult =
  | { readonly kind: 'seeded'; readonly credentials: DemoCredentials; readonly file: string }
  | { readonly kind: 'already_seeded' };

/**
 * Seeds the demo principals into the directory (and so the store): tenants `acme` and `globex`,
 * each with an approver, a viewer, an admin and a second approver (random passwords), one agent
 * token, two operator API tokens acting as the approvers (a payment of 10,000.00 or more needs
 * both) and one acting as the admin (grants over the API). Writes every secret once to `file` (mode
 * 0600). A store that already has the demo tenants is left as it is.
 */
export async function seedDemo(directory: PrincipalDirectory, file: string): Promise<SeedResult> {
  const existing = new Set(await directory.tenants());
  if (Object.keys(DEMO_TENANTS).every((t) => existing.has(t))) return { kind: 'already_seeded' };
  const tenants: Record<string, DemoCredentials['tenants'][string]> = {};
  for (const [tenant, name] of Object.entries(DEMO_TENANTS)) {
    if (!(await directory.ensureTenant(tenant, name))) continue;
    const operators: DemoOperator[] = [];
    for (const role of ROLES) {
      const operator: DemoOperator = {
        email: `${role}@${tenant}.test`,
        password: randomBytes(15).toString('base64url'),
        role,
      };
      await directory.addOperator({
        tenant,
        email: operator.email,
        password: operator.password,
        roles: [role],
      });
      operators.push(operator);
    }
    // The second approver of the two-person rule: payments of 10,000.00 or more wait at "1 of 2".
    const second: DemoOperator = {
      email: `approver2@${tenant}.test`,
      password: randomBytes(15).toString('base64url'),
      role: 'approver',
    };
    await directory.addOperator({
      tenant,
      email: second.email,
      password: second.password,
      roles: ['approver'],
    });
    operators.push(second);
    tenants[tenant] = {
      agentToken: await directory.issueAgentToken({ tenant, label: 'demo agent' }),
      operatorToken: await directory.issueOperatorToken({
        email: `approver@${tenant}.test`,
        label: 'demo api',
      }),
      secondApproverToken: await directory.issueOperatorToken({
        email: second.email,
        label: 'demo api (second approver)',
      }),
      adminToken: await directory.issueOperatorToken({
        email: `admin@${tenant}.test`,
        label: 'demo api (admin)',
      }),
      operators,
    };
  }
  const credentials: DemoCredentials = { tenants };
  writeDemoCredentials(file, credentials);
  return { kind: 'seeded', credentials, file };
}
