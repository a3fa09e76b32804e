import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../engine/engine-context.js';
import { PROBLEM_MEDIA_TYPE, type ProblemBody, problemDetails } from '../http/http-problem.js';

/** What the server answers a request Node's HTTP parser refused before the app saw it. */
export interface ClientErrorAnswer {
  readonly status: 400 | 408 | 413 | 431;
  readonly body: ProblemBody;
}

/**
 * The answer to a request Node refused while parsing it, by the error's code: 431 for headers
 * over `maxHeaderSize` (`HPE_HEADER_OVERFLOW`), 408 when the headers or the whole request did not
 * arrive in time (`ERR_HTTP_REQUEST_TIMEOUT`), 413 for chunk extensions over Node's limit
 * (`HPE_CHUNK_EXTENSIONS_OVERFLOW`), 400 for anything else (a garbage request line, a malformed
 * header, a bad chunk). The message is fixed per status: nothing of the request is echoed.
 */
export function clientErrorAnswer(code: string | undefined): ClientErrorAnswer {
  // DESIGN.md names no HTTP-layer code for a malformed, oversized or late request: it is the
  // client's fault, so it carries the lifecycle's `invalid_request`, as Hono's own 4xx do in the
  // app's error handler. Oversized chunk extensions are an oversized body: `body_too_large`, as
  // the MCP body limit answers.
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return answer(431, 'invalid_request', 'the request headers are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return answer(408, 'invalid_request', 'the request did not arrive in time');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return answer(413, 'body_too_large', 'the request body has too many chunk extensions');
    default:
      return answer(400, 'invalid_request', 'the request is not valid HTTP');
  }
}

function answer(
  status: ClientErrorAnswer['status'],
  reason: ProblemBody['reason'],
  message: string,
): ClientErrorAnswer {
  return { status, body: { reason, message } };
}

/** The raw HTTP/1.1 response of {@link clientErrorAnswer}, closing the connection. */
export function clientErrorResponse(answered: ClientErrorAnswer): string {
  const json = JSON.stringify(problemDetails(answered.status, answered.body));
  return (
    `HTTP/1.1 ${answered.status} ${STATUS_CODES[answered.status]}\r\n` +
    'Connection: close\r\n' +
    // The app's own refusals: RFC 9457 problem details, never cached.
    `Content-Type: ${PROBLEM_MEDIA_TYPE}\r\n` +
    'Cache-Control: no-store\r\n' +
    `Content-Length: ${Buffer.byteLength(json)}\r\n` +
    '\r\n' +
    json
  );
}

// The response Node is writing on this connection, if any (a pipelined request's): not public
// API, but it is what Node's own default clientError handling checks before writing.
interface ServerSocket extends Duplex {
  readonly _httpMessage?: { readonly headersSent: boolean } | null;
}

/**
 * A `clientError` listener for a node:http server: answers a request Node refused while parsing
 * it with the app's problem details (`application/problem+json`) ({@link clientErrorAnswer}) instead of Node's bare,
 * bodiless response, then destroys the socket. A reset connection (`ECONNRESET`), one that can no
 * longer be written, or one whose response already started is just destroyed. Logs one warn
 * line with the error's code and the status answered, never request bytes.
 */
export function onClientError(
  logger: Logger | undefined,
): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    const code = error.code;
    const responding = (socket as ServerSocket)._httpMessage?.headersSent === true;
    if (code === 'ECONNRESET' || !socket.writable || responding) {
      socket.destroy();
      return;
    }
    const answered = clientErrorAnswer(code);
    logger?.warn({ code: code ?? 'unknown', status: answered.status }, 'request refused by the HTTP parser');
    socket.end(clientErrorResponse(answered));
    socket.destroy();
  };
}
