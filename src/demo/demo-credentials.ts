import { chmodSync, renameSync, writeFileSync } from 'node:fs';

/** One demo operator's login. */
export interface DemoOperator {
  readonly email: string;
  readonly password: string;
  readonly role: 'approver' | 'viewer' | 'admin';
}

/** The demo logins and tokens, as `serve --demo` writes them (passwords and tokens in clear, once). */
export interface DemoCredentials {
  readonly tenants: Readonly<
    Record<
      string,
      {
        /** Bearer token of the tenant's agent (`agent:<tenant>-assistant`): proposes. */
        readonly agentToken: string;
        /** Bearer token acting as the tenant's approver: decides through the API. */
        readonly operatorToken: string;
        /**
         * Bearer token acting as the tenant's second approver (`approver2@<tenant>.test`): completes
         * a two-person approval ("1 of 2") through the API.
         */
        readonly secondApproverToken: string;
        /**
         * Bearer token acting as the tenant's admin (`admin@<tenant>.test`): manages grants through
         * the API (`POST /api/v1/grants`) without a console session or its CSRF token. It cannot
         * approve proposals.
         */
        readonly adminToken: string;
        readonly operators: readonly DemoOperator[];
      }
    >
  >;
}

/** Writes the credentials file readable by its owner only, atomically (temp file, then rename). */
export function writeDemoCredentials(file: string, credentials: DemoCredentials): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
}
