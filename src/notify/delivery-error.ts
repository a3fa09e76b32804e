/**
 * Why a delivery attempt failed, as a code from a closed list. Never a library's message: those
 * carry URLs (with tokens in their query), internal host names and receivers' replies.
 *
 * - `http_status` / `smtp_status`: the receiver answered with a status that is not success
 * - `timeout`, `connection_refused`, `connection_reset`, `dns_failure`, `tls_error`: the network
 * - `network_error`: another network failure
 * - `invalid_response`: the receiver's answer was not valid HTTP or SMTP
 * - `auth_failed`: the mail server refused the credentials
 * - `slack_error`: Slack's Web API answered `{ ok: false, error }` (its error code follows:
 *   `slack_error channel_not_found`)
 * - `no_recipients`: no approver of the tenant to email
 * - `channel_not_configured`: no sender for the delivery's channel
 * - `sender_failed`: the sender threw (its error is logged, not stored)
 */
export type DeliveryError =
  | { readonly code: StatusCode; readonly status: number }
  | { readonly code: 'slack_error'; readonly slackError: string }
  | { readonly code: Exclude<DeliveryErrorCode, StatusCode | 'slack_error'> };

const DELIVERY_ERROR_CODES = [
  'http_status',
  'smtp_status',
  'timeout',
  'connection_refused',
  'connection_reset',
  'dns_failure',
  'tls_error',
  'network_error',
  'invalid_response',
  'auth_failed',
  'slack_error',
  'no_recipients',
  'channel_not_configured',
  'sender_failed',
] as const;

/** Every code of a {@link DeliveryError}. */
export type DeliveryErrorCode = (typeof DELIVERY_ERROR_CODES)[number];

/** The codes that carry the receiver's status number. */
type StatusCode = 'http_status' | 'smtp_status';

const CODES: ReadonlySet<string> = new Set<DeliveryErrorCode>(DELIVERY_ERROR_CODES);

/**
 * The stored `lastError` of a failed attempt: its code, and for a status its number
 * (`http_status 503`, `smtp_status 550`, `timeout`). Checked again here, so a custom sender
 * (or plain JavaScript) returning anything else stores `sender_failed`, never its text.
 *
 * @example
 * deliveryErrorText({ code: 'http_status', status: 503 }); // 'http_status 503'
 */
export function deliveryErrorText(error: DeliveryError): string {
  const code: unknown = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !CODES.has(code)) return 'sender_failed';
  if (code === 'slack_error') {
    // Slack's error codes are short snake_case words (`not_in_channel`); anything else is left out.
    const slackError: unknown = (error as { slackError?: unknown }).slackError;
    return typeof slackError === 'string' && /^[a-z0-9_]{1,64}$/.test(slackError)
      ? `slack_error ${slackError}`
      : code;
  }
  if (code !== 'http_status' && code !== 'smtp_status') return code;
  const status: unknown = (error as { status?: unknown }).status;
  return Number.isSafeInteger(status) && (status as number) >= 100 && (status as number) <= 999
    ? `${code} ${status as number}`
    : code;
}

// System, undici and nodemailer error codes, by what they mean for the operator.
const TIMEOUT = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const REFUSED = new Set(['ECONNREFUSED']);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNECTION']);
const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA', 'EDNS']);
const INVALID = new Set([
  'EPROTOCOL',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_RES_EXCEEDED_MAX_SIZE',
  'UND_ERR_INVALID_RESPONSE',
]);
const isTls = (code: string) =>
  code === 'ETLS' ||
  code === 'EPROTO' ||
  code.startsWith('ERR_TLS_') ||
  code.startsWith('ERR_SSL_') ||
  code.includes('CERT') ||
  code.startsWith('UNABLE_TO_') ||
  code === 'HOSTNAME_MISMATCH';

function classify(code: string): DeliveryError | undefined {
  if (TIMEOUT.has(code)) return { code: 'timeout' };
  if (REFUSED.has(code)) return { code: 'connection_refused' };
  if (DNS.has(code)) return { code: 'dns_failure' };
  if (isTls(code)) return { code: 'tls_error' };
  if (INVALID.has(code) || code.startsWith('HPE_')) return { code: 'invalid_response' };
  if (code === 'EAUTH') return { code: 'auth_failed' };
  if (RESET.has(code)) return { code: 'connection_reset' };
  return undefined;
}

/**
 * What a thrown network error (from `fetch` or nodemailer) means, read from its `code`, the
 * system code nodemailer keeps in `originalCode`, its `cause` chain, an SMTP `responseCode`, or a
 * `TimeoutError` / `AbortError` name. Its message is never read. Unknown: `network_error`.
 */
export function networkFailure(error: unknown): DeliveryError {
  const codes: string[] = [];
  let smtpStatus: number | undefined;
  let timedOut = false;
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const e = current as { name?: unknown; code?: unknown; originalCode?: unknown; responseCode?: unknown };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') timedOut = true;
    if (typeof e.originalCode === 'string') codes.push(e.originalCode);
    if (typeof e.code === 'string') codes.push(e.code);
    if (smtpStatus === undefined && Number.isSafeInteger(e.responseCode))
      smtpStatus = e.responseCode as number;
    current = (current as { cause?: unknown }).cause;
  }
  if (timedOut) return { code: 'timeout' };
  // A system code says more than the wrapper's (ESOCKET, ECONNECTION): it comes first.
  for (const code of codes) {
    const found = classify(code);
    if (found) return found;
  }
  if (smtpStatus !== undefined && smtpStatus >= 400) return { code: 'smtp_status', status: smtpStatus };
  return { code: 'network_error' };
}
