/**
 * `countersign/server`: the HTTP API v1 and the operator console (server-rendered), with the
 * principal directory they authenticate against.
 *
 * @packageDocumentation
 */
export type { AppEnv, Principal } from './app-env.js';
export { type AppExtensionContext, type CountersignAppOptions, createCountersignApp } from './create-app.js';
export {
  type ConsoleSession,
  type DirectoryOptions,
  type LoginLimit,
  type LoginResult,
  normalizeEmail,
  type OperatorInfo,
  PrincipalDirectory,
  type ProviderSignInResult,
  type TrustedDevice,
} from './directory/principal-directory.js';
export { hashPassword, verifyPassword } from './directory/password.js';
export {
  HttpProblem,
  type ProblemBody,
  type ProblemReason,
  type ProblemStatus,
  refusalStatus,
  SERVER_REASONS,
  type ServerReason,
} from './http-problem.js';
export { openApiDocument } from './api/openapi.js';
export {
  checkOidcConfig,
  type OidcClaims,
  type OidcConfig,
} from './auth/oidc.js';
export { type AuthenticationConfig, loadServeConfig, type ServeConfig } from './serve-config.js';
export { ListenError, type RunningServer, type StartServerOptions, startServer } from './start-server.js';
