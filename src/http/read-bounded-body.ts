/**
 * A request body read whole; or the news that it is larger than the limit (nothing past the limit
 * was read); or that the client broke off sending it.
 */
export type BoundedBody =
  | { readonly kind: 'read'; readonly bytes: Uint8Array }
  | { readonly kind: 'too_large' | 'broken'; readonly bytes?: never };

/**
 * Reads a request body up to `limit` bytes, counting the bytes as they stream in: a chunked body,
 * a body without `Content-Length` and one whose `Content-Length` lies are all held to the same
 * limit. A declared length over the limit is refused before the first byte is read; otherwise
 * reading stops (and the stream is cancelled) at the first chunk that crosses the limit, so at
 * most `limit` bytes plus one chunk are ever held in memory. The one body reader of the API, the
 * console and the MCP endpoint, so all three answer an oversized body alike (413 `body_too_large`).
 */
export async function readBoundedBody(request: Request, limit: number): Promise<BoundedBody> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > limit) {
    await request.body?.cancel().catch(() => undefined);
    return { kind: 'too_large' };
  }
  if (!request.body) return { kind: 'read', bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = await reader.read().catch(() => undefined);
    if (!next) return { kind: 'broken' };
    const { done, value } = next;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { kind: 'too_large' };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { kind: 'read', bytes };
}
