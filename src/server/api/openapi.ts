import { GrantBody } from './grant-routes.js';
import { GroupBody, RouteBody } from './routing-routes.js';
import { OperatorPatchBody } from './operator-routes.js';
import { z } from 'zod';
import { REASONS } from '../../operation/reasons.js';
import { PROPOSAL_STATUSES } from '../../store/records.js';
import { PROBLEM_MEDIA_TYPE, PROBLEM_TYPE_PREFIX, SERVER_REASONS } from '../../http/http-problem.js';
import { ApproveBody, DeclineBody, EditBody, ProposeBody, ReconcileBody } from './request-bodies.js';

// OpenAPI 3.1 uses JSON Schema 2020-12 as is; only the `$schema` member is dropped.
function schema(type: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(type, { io: 'input' }) as Record<string, unknown>;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (s: object) => ({ 'application/json': { schema: s } });
const problem = (description: string) => ({
  description,
  content: { [PROBLEM_MEDIA_TYPE]: { schema: ref('Problem') } },
});
const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^prp_[0-9a-z]+$' },
};
const slackUserParam = {
  name: 'slackUser',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[UW][A-Z0-9]{2,20}$' },
  description: "Slack's user id (`U…`, or `W…` in an Enterprise Grid)",
};
const acceptLanguage = {
  name: 'Accept-Language',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description:
    'The language of `handback` (q-values honoured; en, de and fr have catalogs, anything else is en); each proposal names the language its handback is in as `handbackLanguage`, and `Content-Language` lists the languages of the handbacks in the answer',
};

const decisionErrors = {
  '400': problem('Malformed JSON (`invalid_json`)'),
  '401': problem('No valid bearer token or session (`unauthenticated`)'),
  '403': problem('`forbidden` (a viewer, an agent, the proposing principal) or `cross_site_request`'),
  '404': problem("`not_found`: missing, or another tenant's (indistinguishable)"),
  '409': problem(
    'The lifecycle refuses: `stale_view`, `expired`, `declined`, `superseded`, `replayed`, `recovering` (with `Retry-After`), …',
  ),
  '415': problem('Not application/json, or a charset other than UTF-8 (`unsupported_media_type`)'),
  '422': problem('The body does not match the schema (`invalid_request`, with `issues`)'),
};

let cached: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 document of the HTTP API v1, served at `GET /api/v1/openapi.json`. */
export function openApiDocument(): Record<string, unknown> {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'countersign HTTP API',
      version: '1.0.0',
      description:
        'Agents propose operations with their bearer token; operators approve exactly the digest they saw. ' +
        'Errors are RFC 9457 problem details (`application/problem+json`): `{ type, title, status, detail, reason, message, … }`, ' +
        `\`type\` being \`${PROBLEM_TYPE_PREFIX}<reason>\`. With a console session instead of a bearer ` +
        'token, state changes must be same-origin and send the `X-CSRF-Token` header.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { session: [] }],
    paths: withCommonErrors({
      '/healthz': {
        get: {
          summary: 'Liveness: the process serves HTTP (never touches the store)',
          security: [],
          responses: {
            '200': {
              description: 'Serving',
              content: json({ type: 'object', properties: { status: { const: 'ok' } } }),
            },
          },
        },
      },
      '/readyz': {
        get: {
          summary: 'Readiness: the store answers with its schema current, and the background workers run',
          security: [],
          responses: {
            '200': { description: 'Ready', content: json(ref('Readiness')) },
            '503': {
              description: 'Not ready (`Retry-After`); each failing check has a `detail`',
              content: json(ref('Readiness')),
            },
          },
        },
      },
      '/api/v1/openapi.json': {
        get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1' } } },
      },
      '/api/v1/proposals': {
        post: {
          summary: 'Propose an operation (agent token)',
          requestBody: { required: true, content: json(ref('ProposeBody')) },
          responses: {
            '201': { description: 'A frozen, pending proposal', content: json(ref('Proposal')) },
            '400': problem('`run_id_missing` or `invalid_json`'),
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden`: only agents propose'),
            '422': problem('`invalid_request` with `issues` and `modelMessage` the model can act on'),
            '429': problem(
              '`rate_limited`: the agent or its tenant is over a proposal quota; `Retry-After` (seconds), `limit`, `modelMessage`',
            ),
          },
        },
        get: {
          summary: "The tenant's proposals, newest first",
          parameters: [
            {
              name: 'status',
              in: 'query',
              schema: { type: 'string' },
              description: 'Comma-separated statuses, e.g. `pending`',
            },
            { name: 'runId', in: 'query', schema: { type: 'string' } },
            { name: 'operation', in: 'query', schema: { type: 'string' } },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
            },
            {
              name: 'cursor',
              in: 'query',
              schema: { type: 'string' },
              description: '`nextCursor` of the previous page',
            },
            {
              name: 'needs',
              in: 'query',
              schema: { type: 'string', enum: ['me'] },
              description:
                '`me`: "Needs you", only the pending, unexpired proposals the caller may still approve ' +
                '(approver role, the operation authorizes them, not the proposer, not the editor unless ' +
                'editor approval is allowed, not already one of its approvers). Pages with `cursor` like ' +
                'the full list; `status` may only be `pending` beside it',
            },
            acceptLanguage,
          ],
          responses: {
            '200': {
              description: 'One page',
              content: json({
                type: 'object',
                required: ['items'],
                properties: {
                  items: { type: 'array', items: ref('Proposal') },
                  nextCursor: { type: 'string' },
                },
              }),
            },
            '401': problem('`unauthenticated`'),
            '422': problem(
              '`invalid_request` with `issues` naming the field: an unknown status or parameter, a bad `limit`, `cursor` or `needs`',
            ),
          },
        },
      },
      '/api/v1/proposals/{id}': {
        get: {
          summary: 'One proposal: status, preview, short hash, outcome and handback text',
          parameters: [idParam, acceptLanguage],
          responses: {
            '200': { description: 'The proposal', content: json(ref('Proposal')) },
            '401': problem('`unauthenticated`'),
            '404': problem('`not_found`'),
          },
        },
      },
      '/api/v1/proposals/{id}/audit': {
        get: {
          summary: 'The audit events of one proposal, with short hashes, one page at a time',
          parameters: [
            idParam,
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: 1000, default: 200 },
            },
            {
              name: 'cursor',
              in: 'query',
              schema: { type: 'string' },
              description: '`nextCursor` of the previous page',
            },
            {
              name: 'step',
              in: 'query',
              schema: { type: 'string' },
              description: 'Comma-separated steps to keep, e.g. `approved,outcome`',
            },
            {
              name: 'exceptStep',
              in: 'query',
              schema: { type: 'string' },
              description: 'Comma-separated steps to leave out, e.g. `denied` to find the decisions',
            },
          ],
          responses: {
            '200': {
              description:
                'One page of events in chain order; a malformed stored digest shows as `invalid:"…"` in `short`',
              content: json({
                type: 'object',
                required: ['proposalId', 'short', 'events'],
                properties: {
                  proposalId: { type: 'string' },
                  short: { type: 'string' },
                  events: { type: 'array', items: ref('AuditEvent') },
                  nextCursor: { type: 'string' },
                },
              }),
            },
            '401': problem('`unauthenticated`'),
            '404': problem('`not_found`'),
            '422': problem('`invalid_request`: an unknown step or parameter, a bad limit or cursor'),
          },
        },
      },
      '/api/v1/proposals/{id}/approve': {
        post: {
          summary: 'Approve exactly the digest the operator saw; executes it once',
          parameters: [idParam],
          requestBody: { required: true, content: json(ref('ApproveBody')) },
          responses: {
            '200': {
              description:
                'The outcome of this approval, or the stored outcome of an earlier one (`replayed: true`)',
              content: json({
                type: 'object',
                required: ['outcome', 'replayed'],
                properties: {
                  outcome: ref('Outcome'),
                  replayed: { type: 'boolean' },
                  short: { type: 'string' },
                },
              }),
            },
            '202': {
              description:
                'This approval was recorded, but the proposal needs more approvers (`approvals`: "1 of 2"); nothing ran yet',
              content: json({
                type: 'object',
                required: ['id', 'approvals'],
                properties: { id: { type: 'string' }, approvals: ref('Approvals') },
              }),
            },
            ...decisionErrors,
          },
        },
      },
      '/api/v1/proposals/{id}/decline': {
        post: {
          summary: 'Decline a pending proposal',
          parameters: [idParam],
          requestBody: { required: true, content: json(ref('DeclineBody')) },
          responses: { '200': { description: 'Declined' }, ...decisionErrors },
        },
      },
      '/api/v1/proposals/{id}/edit': {
        post: {
          summary: 'Edit editable fields: a new proposal with a new digest supersedes this one',
          parameters: [idParam],
          requestBody: { required: true, content: json(ref('EditBody')) },
          responses: {
            '201': {
              description: 'The new pending proposal (`superseded` names the old one)',
              content: json(ref('Proposal')),
            },
            ...decisionErrors,
          },
        },
      },
      '/api/v1/proposals/{id}/reconcile': {
        post: {
          summary: 'Ask the provider about a lost response and record the authoritative outcome',
          parameters: [idParam],
          requestBody: { required: true, content: json(ref('ReconcileBody')) },
          responses: {
            '200': {
              description: 'Reconciled',
              content: json({ type: 'object', properties: { outcome: ref('Outcome') } }),
            },
            '202': { description: 'The provider has no final answer yet' },
            ...decisionErrors,
          },
        },
      },
      '/api/v1/grants': {
        get: {
          summary: "The tenant's grants with their usage (operators)",
          parameters: [{ name: 'subject', in: 'query', required: false, schema: { type: 'string' } }],
          responses: { '200': { description: 'Grants, newest first' }, '403': problem('Not an operator') },
        },
        post: {
          summary:
            'Create a bounded approval (admin role); constraints are checked against the scope schemas',
          requestBody: { required: true, content: json(schema(GrantBody)) },
          responses: {
            '201': { description: 'The grant' },
            '403': problem('Not an admin'),
            '422': problem('invalid_request, with issues naming each field'),
          },
        },
      },
      '/api/v1/routes': {
        get: {
          summary:
            "The tenant's routes in the order they are tried: operation, resource pattern, amount threshold, group, channel, escalation (admin role)",
          responses: {
            '200': { description: '{ items }' },
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden`: not an admin'),
          },
        },
        post: {
          summary:
            'Create a route (admin role): new proposals it matches go to its group only, which alone decides them (others are refused `forbidden`); audited (`route_changed`). Pending proposals keep their route.',
          requestBody: { required: true, content: json(schema(RouteBody)) },
          responses: {
            '201': { description: 'The route' },
            '403': problem('`forbidden`: not an admin'),
            '422': problem('`invalid_request`: a field, an unknown operation or group'),
          },
        },
      },
      '/api/v1/routes/{id}': {
        put: {
          summary: 'Replace a route (admin role); audited (`route_changed`)',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, content: json(schema(RouteBody)) },
          responses: {
            '200': { description: 'The route' },
            '403': problem('`forbidden`: not an admin'),
            '404': problem('`not_found`: no such route in this tenant'),
            '422': problem('`invalid_request`'),
          },
        },
        delete: {
          summary: 'Delete a route (admin role); audited (`route_changed`)',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '204': { description: 'Deleted' },
            '403': problem('`forbidden`: not an admin'),
            '404': problem('`not_found`'),
          },
        },
      },
      '/api/v1/groups': {
        get: {
          summary: "The tenant's groups of approvers and their members (admin role)",
          responses: {
            '200': { description: '{ items }' },
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden`: not an admin'),
          },
        },
      },
      '/api/v1/groups/{name}': {
        put: {
          summary:
            'Create a group or replace its members (admin role); audited (`group_changed`, who was added and removed)',
          parameters: [
            {
              name: 'name',
              in: 'path',
              required: true,
              schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,39}$' },
            },
          ],
          requestBody: { required: true, content: json(schema(GroupBody)) },
          responses: {
            '200': { description: 'The group' },
            '403': problem('`forbidden`: not an admin'),
            '422': problem('`invalid_request`'),
          },
        },
        delete: {
          summary: 'Delete a group no route names (admin role); audited (`group_changed`)',
          parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '204': { description: 'Deleted' },
            '403': problem('`forbidden`: not an admin'),
            '404': problem('`not_found`'),
            '422': problem('`invalid_request`: a route names the group'),
          },
        },
      },
      '/api/v1/operators': {
        get: {
          summary:
            "The tenant's operators, active and disabled, by email: roles, state, created, and whether they sign in through the identity provider (admin role)",
          responses: {
            '200': {
              description: '{ items }',
              content: json({
                type: 'object',
                properties: { items: { type: 'array', items: ref('Operator') } },
              }),
            },
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden`: not an admin'),
          },
        },
      },
      '/api/v1/operators/{id}': {
        patch: {
          summary:
            'Enable or disable an operator, or set their roles (admin role); holds from their next request, sessions and tokens alike; audited (`operator_changed`)',
          parameters: [
            {
              name: 'id',
              in: 'path',
              required: true,
              schema: { type: 'string', pattern: '^op_[0-9a-f]{16}$' },
              description:
                'The operator id from `GET /api/v1/operators` (`op_` and 16 hex digits of a SHA-256 of the email)',
            },
          ],
          requestBody: { required: true, content: json(ref('OperatorPatchBody')) },
          responses: {
            '200': {
              description: 'The operator after the change; `changed: false` when nothing was different',
              content: json(ref('Operator')),
            },
            '400': problem('Malformed JSON (`invalid_json`)'),
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden` (not an admin) or `cross_site_request`'),
            '404': problem("`not_found`: missing, or another tenant's (indistinguishable)"),
            '409': problem(
              '`last_admin`: the tenant would be left without an active admin · `corrupt_audit_chain`: nothing changed',
            ),
            '415': problem('Not application/json (`unsupported_media_type`)'),
            '422': problem('`invalid_request`, with `issues` naming each field'),
          },
        },
      },
      '/api/v1/grants/{id}': {
        get: {
          summary: 'One grant with its usage',
          parameters: [idParam],
          responses: { '200': { description: 'The grant' }, '404': problem('No such grant in this tenant') },
        },
      },
      '/api/v1/grants/{id}/revoke': {
        post: {
          summary: 'Revoke a grant (admin role)',
          parameters: [idParam],
          responses: {
            '200': { description: 'Revoked' },
            '403': problem('Not an admin'),
            '404': problem('No such grant in this tenant'),
            '409': problem('grant_revoked: already revoked'),
          },
        },
      },
      '/api/v1/events': {
        get: {
          summary: "The tenant's lifecycle events as Server-Sent Events (operators)",
          description:
            'Each event is `id: <audit seq>`, `event: proposal.created | proposal.approval_given | proposal.decided | ' +
            'proposal.outcome` (`proposal.approval_given`: an approval toward a quorum that is not complete), ' +
            '`data: { proposalId, operation, status, resolution?, short, title, at, actor, approvals: { required, given } }`. ' +
            'Send `Last-Event-ID` to ' +
            'get exactly the events after it; without it the stream starts now. A `: heartbeat` comment ' +
            'comes after 15 s of quiet.',
          parameters: [
            {
              name: 'Last-Event-ID',
              in: 'header',
              required: false,
              schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
            },
          ],
          responses: {
            '200': {
              description: 'The event stream',
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden`: agents do not receive events'),
            '422': problem('`invalid_request`: a malformed `Last-Event-ID` or a query parameter'),
            '429': problem('`rate_limited`: this principal has the most streams open (5); `Retry-After`'),
          },
        },
      },
      '/api/v1/deliveries': {
        get: {
          summary:
            "The tenant's notification deliveries, newest first: status, attempts, last error (admin role; served when notifications are configured)",
          parameters: [
            {
              name: 'status',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: ['pending', 'delivered', 'skipped', 'dead'] },
            },
            {
              name: 'limit',
              in: 'query',
              required: false,
              schema: { type: 'integer', minimum: 1, maximum: 200 },
            },
          ],
          responses: { '200': { description: '{ items }' }, '403': problem('Not an admin') },
        },
      },
      '/api/v1/slack/users': {
        get: {
          summary:
            "The tenant's Slack user links: which operator each linked Slack user acts as when they click a card (admin role; served when Slack is configured)",
          responses: {
            '200': { description: '{ links: [{ slackUser, email, linkedBy, linkedAt }] }' },
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden`: not an admin'),
          },
        },
      },
      '/api/v1/slack/users/{slackUser}': {
        put: {
          summary:
            'Link a Slack user to an operator of your tenant by email, replacing an earlier link (admin role; audited as `operator_changed`)',
          parameters: [slackUserParam],
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              additionalProperties: false,
              required: ['email'],
              properties: {
                email: { type: 'string', description: 'The email of an operator of your tenant' },
              },
            }),
          },
          responses: {
            '200': { description: '{ status: linked, link }' },
            '400': problem('Malformed JSON (`invalid_json`)'),
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden` (not an admin) or `cross_site_request`'),
            '404': problem('`not_found`: no operator of your tenant has that email'),
            '409': problem('`corrupt_audit_chain`: nothing changed'),
            '415': problem('Not application/json (`unsupported_media_type`)'),
            '422': problem('`invalid_request`: not a Slack user id, or no email'),
          },
        },
        delete: {
          summary: "Remove a Slack user's link (admin role; audited as `operator_changed`)",
          parameters: [slackUserParam],
          responses: {
            '200': { description: '{ status: unlinked, link }' },
            '401': problem('`unauthenticated`'),
            '403': problem('`forbidden` (not an admin) or `cross_site_request`'),
            '404': problem('`not_found`: no such link'),
            '409': problem('`corrupt_audit_chain`: nothing changed'),
          },
        },
      },
      '/api/v1/deliveries/{id}/redeliver': {
        post: {
          summary:
            'Queue a finished delivery again, with the same webhook-id and a fresh retry budget (admin role)',
          parameters: [idParam],
          responses: {
            '200': { description: '{ id, status: pending, queued }' },
            '403': problem('Not an admin'),
            '404': problem('No such delivery in this tenant'),
          },
        },
      },
    }),
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An agent token (proposes) or an operator API token (decides)',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-countersign_session',
          description: 'The console session; send X-CSRF-Token on state changes',
        },
      },
      schemas: {
        OperatorPatchBody: schema(OperatorPatchBody),
        Operator: {
          type: 'object',
          required: ['id', 'email', 'roles', 'active', 'sso', 'createdAt', 'disabledAt'],
          properties: {
            id: { type: 'string', pattern: '^op_[0-9a-f]{16}$' },
            email: { type: 'string' },
            roles: { type: 'array', items: { type: 'string' } },
            active: { type: 'boolean' },
            sso: {
              type: 'boolean',
              description: 'Signs in through the identity provider, which sets the roles at each sign-in',
            },
            createdAt: { type: 'string', format: 'date-time' },
            disabledAt: { type: ['string', 'null'], format: 'date-time' },
            changed: { type: 'boolean', description: 'In a PATCH answer: whether anything was written' },
          },
        },
        Problem: {
          type: 'object',
          description:
            "RFC 9457 problem details with countersign's `reason` and `message` (the same text as `detail`); further members depend on the reason",
          required: ['type', 'title', 'status', 'detail', 'reason', 'message'],
          properties: {
            type: {
              type: 'string',
              format: 'uri',
              pattern: `^${PROBLEM_TYPE_PREFIX}[a-z_]+$`,
              description: `\`${PROBLEM_TYPE_PREFIX}<reason>\`: one stable URI per reason code`,
            },
            title: { type: 'string', description: 'A short text fixed per reason' },
            status: { type: 'integer', minimum: 400, maximum: 599 },
            detail: { type: 'string', description: 'What went wrong this time (the same text as `message`)' },
            reason: {
              enum: [
                ...new Set([
                  ...REASONS.filter((r) => r !== 'approved' && r !== 'approved_by_grant'),
                  ...SERVER_REASONS,
                ]),
              ],
            },
            message: { type: 'string' },
            correlationId: { type: 'string' },
            issues: {
              type: 'array',
              items: {
                type: 'object',
                properties: { path: { type: 'string' }, message: { type: 'string' } },
              },
            },
            modelMessage: { type: 'string' },
            retryAfterSeconds: { type: 'integer', minimum: 1 },
            limit: { type: 'string', description: 'Which quota refused (`rate_limited`)' },
            maxBytes: { type: 'integer', description: 'The body limit that refused (`body_too_large`)' },
            jsonError: {
              type: 'string',
              description:
                'What is wrong with the JSON (`invalid_json`): `duplicate_key`, `too_deep`, `proto_key`, …',
            },
          },
        },
        Outcome: {
          oneOf: [
            {
              type: 'object',
              required: ['kind', 'result'],
              properties: { kind: { const: 'succeeded' }, result: {} },
            },
            {
              type: 'object',
              required: ['kind', 'statusPath'],
              properties: { kind: { const: 'needs_reconciliation' }, statusPath: { type: 'string' } },
            },
            {
              type: 'object',
              required: ['kind', 'reason'],
              properties: { kind: { const: 'revision_required' }, reason: { type: 'string' } },
            },
            {
              type: 'object',
              required: ['kind', 'correlationId', 'message'],
              properties: {
                kind: { const: 'terminal_failure' },
                correlationId: { type: 'string' },
                reason: { type: 'string' },
                message: { type: 'string' },
              },
            },
          ],
        },
        Proposal: {
          type: 'object',
          required: [
            'id',
            'operation',
            'status',
            'runId',
            'digest',
            'short',
            'preview',
            'expiresAt',
            'approvalUrl',
            'handback',
            'handbackLanguage',
          ],
          properties: {
            id: { type: 'string' },
            operation: { type: 'string' },
            status: { enum: [...PROPOSAL_STATUSES] },
            runId: { type: 'string' },
            resource: { type: 'string' },
            section: { type: ['string', 'null'] },
            requestedBy: { type: 'string' },
            editedBy: {
              type: ['string', 'null'],
              description: 'The operator whose edit produced this proposal; they do not approve it',
            },
            scopeVersion: { type: 'integer' },
            viewVersion: { type: 'integer' },
            digest: {
              type: 'string',
              description: 'Full SHA-256 contract digest: what an approval must carry',
            },
            short: { type: 'string', description: 'First 12 hex characters of the digest' },
            textHazards: {
              type: 'array',
              description:
                'Invisible code points (kind hidden: codePoint, hidden, count, decoded for tag text), blank lines or spaces that push text out of view (kind whitespace_run: run blank_lines | spaces, count), combining marks stacked on one letter past two (kind stacked_marks: codePoint, count) and words that mix scripts or only look Latin (kind mixed_script | latin_lookalike: word, scripts, odd), each with the path of the preview string (or resource) holding it. A client that renders the preview must mark them.',
              items: { type: 'object', required: ['kind', 'path'] },
            },
            preview: { description: 'The frozen view model a human reviews' },
            request: { description: "The model's parsed request" },
            createdAt: { type: 'string', format: 'date-time' },
            expiresAt: { type: 'string', format: 'date-time' },
            supersedes: { type: ['string', 'null'] },
            supersededBy: { type: ['string', 'null'] },
            decidedBy: { type: ['string', 'null'] },
            decidedAt: { type: ['string', 'null'], format: 'date-time' },
            decisionNote: { type: ['string', 'null'] },
            approvalKind: { enum: ['exact', 'grant', null] },
            approvals: ref('Approvals'),
            outcome: { oneOf: [ref('Outcome'), { type: 'null' }] },
            handback: {
              type: 'string',
              description:
                "Safe text about what happened (who approved it, whether the application executed it, the operation's own text), in the language of `Accept-Language` where the operation has text in it (en, de, fr; else en)",
            },
            handbackLanguage: {
              type: 'string',
              description:
                'The BCP 47 tag of the language `handback` is in: the one asked for, or `en` when the operation has no text in it',
            },
            approvalUrl: {
              type: 'string',
              description: 'The console page of this proposal, carrying its run id',
            },
          },
        },
        Approvals: {
          type: 'object',
          description:
            'The approval policy frozen into the proposal and who has approved its digest so far: "1 of 2" is `required: 2` with one entry in `given`. The proposer and the editor never count; each person counts once.',
          required: ['required', 'given'],
          properties: {
            required: { type: 'integer', minimum: 1 },
            roles: {
              type: 'array',
              items: { type: 'string' },
              description: 'An approver must hold one of these roles (empty: any approver)',
            },
            given: {
              type: 'array',
              items: {
                type: 'object',
                required: ['by', 'at'],
                properties: { by: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
              },
            },
          },
        },
        AuditEvent: {
          type: 'object',
          properties: {
            seq: { type: 'integer' },
            id: { type: 'string' },
            step: { type: 'string' },
            at: { type: 'string', format: 'date-time' },
            actor: { type: 'string' },
            reason: { type: ['string', 'null'] },
            runId: { type: 'string' },
            attemptId: { type: ['string', 'null'] },
            commandId: { type: ['string', 'null'] },
            digests: { type: 'object' },
            short: { type: 'object' },
            detail: { type: 'object' },
            chainHash: { type: 'string' },
          },
        },
        Readiness: {
          type: 'object',
          required: ['status', 'checks'],
          properties: {
            status: { enum: ['ready', 'not_ready'] },
            checks: {
              type: 'object',
              description: '`store`, `sweeps` and (with notifications) `notifications`',
              additionalProperties: {
                type: 'object',
                required: ['ok'],
                properties: { ok: { type: 'boolean' }, detail: { type: 'string' } },
              },
            },
          },
        },
        ProposeBody: schema(ProposeBody),
        ApproveBody: schema(ApproveBody),
        DeclineBody: schema(DeclineBody),
        EditBody: schema(EditBody),
        ReconcileBody: schema(ReconcileBody),
      },
    },
  };
  return cached;
}

const storeUnavailable = problem(
  '`store_unavailable`: the database or its disk is unavailable for a while, or the request passed its deadline; `Retry-After` (seconds) and `retryAfterSeconds`',
);

const bodyTooLarge = problem(
  '`body_too_large`: the body is over the limit (64 KiB of JSON), counted as it streams; the connection closes',
);

// Every API operation may meet a store that is down: each lists the same 503; each that reads a
// body lists the 413 of one over the limit.
type PathOperation = { readonly responses: Record<string, unknown>; readonly [member: string]: unknown };
function withCommonErrors<P extends Record<string, Record<string, PathOperation>>>(paths: P): P {
  for (const [path, operations] of Object.entries(paths)) {
    if (!path.startsWith('/api/v1/') || path === '/api/v1/openapi.json') continue;
    for (const operation of Object.values(operations)) {
      operation.responses['503'] ??= storeUnavailable;
      if (operation['requestBody'] !== undefined) operation.responses['413'] ??= bodyTooLarge;
    }
  }
  return paths;
}
