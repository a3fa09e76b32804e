/** One thing a Server-Sent Events stream sent: an event (with data) or a comment. */
export type SseMessage =
  | { readonly kind: 'event'; readonly id: string | undefined; readonly event: string; readonly data: string }
  | { readonly kind: 'comment'; readonly text: string };

/** A stream opened with fetch, parsed as the EventSource processing model reads it. */
export interface SseStream {
  readonly status: number;
  readonly headers: Headers;
  /** The JSON body of a refusal (non-200). */
  readonly problem: Record<string, unknown> | undefined;
  /** The next event or comment; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** The next event (comments skipped). */
  nextEvent(timeoutMs?: number): Promise<Extract<SseMessage, { kind: 'event' }>>;
  /** Disconnects, as a closed browser tab does. */
  close(): void;
}

function parseBlock(block: string): SseMessage | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  let comment: string | undefined;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) {
      comment = line.slice(1).trim();
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length > 0) return { kind: 'event', id, event, data: data.join('\n') };
  return comment === undefined ? undefined : { kind: 'comment', text: comment };
}

/** Opens `GET path` as an event stream (with a bearer token or a cookie header). */
export async function openSse(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const response = await fetch(`${base}${path}`, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  if (response.status !== 200) {
    const problem = (await response.json()) as Record<string, unknown>;
    return {
      status: response.status,
      headers: response.headers,
      problem,
      next: () => Promise.reject(new Error('not a stream')),
      nextEvent: () => Promise.reject(new Error('not a stream')),
      close: () => {},
    };
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const queue: SseMessage[] = [];
  const next = async (timeoutMs = 5000): Promise<SseMessage> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const queued = queue.shift();
      if (queued) return queued;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no message in time');
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left))),
      ]).finally(() => clearTimeout(timer));
      if (chunk === 'timeout') throw new Error('no message in time');
      if (chunk.done) throw new Error('the stream ended');
      buffer += chunk.value.replace(/\r\n?/g, '\n');
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const message = parseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (message) queue.push(message);
        end = buffer.indexOf('\n\n');
      }
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    problem: undefined,
    next,
    nextEvent: async (timeoutMs = 5000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const message = await next(Math.max(1, deadline - Date.now()));
        if (message.kind === 'event') return message;
      }
    },
    close: () => controller.abort(),
  };
}
