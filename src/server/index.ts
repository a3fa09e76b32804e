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
  type EndedSession,
  type LoginLimit,
  type LoginResult,
  normalizeEmail,
  type OperatorInfo,
  PrincipalDirectory,
  type ProviderSignInResult,
  type SessionLookup,
  type TrustedDevice,
} from './directory/principal-directory.js';
export type {
  OperatorAccount,
  OperatorChange,
  OperatorUpdateResult,
  ProviderRoleRemoval,
} from './directory/operator-accounts.js';
export { hashPassword, type PasswordHashOptions, verifyPassword } from './directory/password.js';
export { HttpProblem, ListenError } from './errors.js';
export {
  PROBLEM_MEDIA_TYPE,
  PROBLEM_TITLES,
  PROBLEM_TYPE_PREFIX,
  type ProblemBody,
  type ProblemDetails,
  type ProblemReason,
  type ProblemStatus,
  problemType,
  refusalStatus,
  SERVER_REASONS,
  type ServerReason,
} from '../http/http-problem.js';
export { openApiDocument } from './api/openapi.js';
export { findTextHazards, type TextHazard } from '../operation/text-hazards.js';
export { type EventStreamOptions, EventStreams } from './api/event-streams.js';
export { type LiveEvent, readLiveEvents } from '../notify/live-feed.js';
export {
  checkOidcConfig,
  type OidcClaims,
  type OidcConfig,
} from './auth/oidc.js';
export {
  type AuthenticationConfig,
  loadServeConfig,
  type RecoveryConfig,
  type ServeConfig,
  type ServeTimeouts,
} from './serve-config.js';
export { type RunningServer, type StartServerOptions, startServer } from './start-server.js';
export {
  type ReadinessCheck,
  type ReadinessOptions,
  type ReadinessReport,
  readiness,
} from './readiness.js';
export {
  approverEmails,
  createNotifications,
  emailRecipients,
  type NotificationDeps,
  type NotifiedOperator,
  type Notifications,
  tenantApprovers,
} from '../notify/notifications.js';
export type { NotificationApprovals, NotificationField } from '../notify/notification-facts.js';
export { createDispatcher, type Dispatcher, type DispatcherOptions } from '../notify/dispatcher.js';
export { type DeliveryAdmin, type DeliveryView, deliveryAdmin } from '../notify/deliveries.js';
export {
  type EmailContext,
  type EmailNotice,
  type EmailTarget,
  emailSender,
} from '../notify/email-sender.js';
export type { LifecycleEvent, LifecycleEventType } from '../notify/lifecycle-event.js';
export {
  type NotificationsConfig,
  type ResolvedNotifications,
  resolveNotifications,
} from '../notify/notify-config.js';
export { type NotificationPayload, notificationOutbox } from '../notify/outbox-writer.js';
export { DEFAULT_RETRY_SCHEDULE, type RetrySchedule } from '../notify/retry-schedule.js';
export { signWebhook } from '../notify/webhook-signature.js';
export { type WebhookTarget, webhookSender } from '../notify/webhook-sender.js';
export type { ChannelSender, SendResult } from '../notify/channel.js';
export type { DeliveryStatus, NotificationChannel, OutboxRecord } from '../store/sql-outbox.js';
export type { StepWriter } from '../engine/audit-step.js';
