import type { Context } from 'hono';

/** The slice of Node's `net.Socket` (as @hono/node-server hands it over) this module reads. */
interface AcceptedSocket {
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
  readonly encrypted?: boolean | undefined;
}

/** The slice of @hono/node-server's bindings (`c.env`) this module reads. */
interface NodeBindings {
  readonly incoming?: { readonly socket?: AcceptedSocket | undefined } | undefined;
  readonly server?: NodeBindings | undefined;
}

function acceptedSocket(c: Context): AcceptedSocket | undefined {
  const env = c.env as NodeBindings | undefined;
  return (env?.server ?? env)?.incoming?.socket;
}

/**
 * The origin of the socket the server accepted this connection on: its own address and port
 * (`http://127.0.0.1:8787` for a server listening there), taken from the kernel, never from a
 * header. Undefined when the app is not served by Node's HTTP server.
 */
function socketOrigin(c: Context): string | undefined {
  const socket = acceptedSocket(c);
  const address = socket?.localAddress;
  const port = socket?.localPort;
  if (!address || port === undefined) return undefined;
  // A dual-stack socket reports an IPv4 client's connection as ::ffff:127.0.0.1.
  const host = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  const scheme = socket.encrypted ? 'https' : 'http';
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The origin this server hands out in links (an agent's `approvalUrl`): the configured public
 * URL, else the address and port the server itself listens on. Never the request's `Host` (or
 * `X-Forwarded-Host`) header, which any client sets: with it, `Host: evil.example` made the API
 * hand an agent an approval link to `http://evil.example/…`. Undefined only when neither is
 * known (no public URL, and not served by Node's HTTP server): links are then relative.
 */
export function linkOrigin(c: Context, publicUrl: URL | undefined): string | undefined {
  return publicUrl?.origin ?? socketOrigin(c);
}

/**
 * The console page of a proposal, carrying its run id, on {@link linkOrigin}.
 *
 * @example
 * approvalUrl(c, publicUrl, proposal); // 'https://approvals.example.com/proposals/prp_…?run=run-7'
 */
export function approvalUrl(
  c: Context,
  publicUrl: URL | undefined,
  proposal: { readonly id: string; readonly runId: string },
): string {
  return approvalLink(linkOrigin(c, publicUrl) ?? '', proposal);
}

/**
 * The console page of a proposal on `origin` (no trailing slash), carrying its run id: the link
 * the API, notifications and the MCP tools hand out.
 *
 * @example
 * approvalLink('https://approvals.example.com', p); // 'https://approvals.example.com/proposals/prp_…?run=run-7'
 */
export function approvalLink(
  origin: string,
  proposal: { readonly id: string; readonly runId: string },
): string {
  return `${origin}/proposals/${proposal.id}?run=${encodeURIComponent(proposal.runId)}`;
}
