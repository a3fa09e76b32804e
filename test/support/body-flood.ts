import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';

/** A request body stream that counts the bytes the server pulled out of `request`'s body. */
export function counted(request: Request, read: { bytes: number }): Request {
  const body = request.body;
  if (!body) return request;
  const reader = body.getReader();
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await reader.read();
        if (next.done) controller.close();
        else {
          read.bytes += next.value.byteLength;
          controller.enqueue(next.value);
        }
      },
      cancel: (why) => reader.cancel(why),
    },
    { highWaterMark: 0 },
  );
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: stream,
    duplex: 'half',
  } as RequestInit);
}

/**
 * A body stream of up to `max` bytes of `a` that counts what was pulled from it: with a lying
 * `Content-Length`, what a reader that trusts the header would read past.
 */
export function lyingBody(max: number): { readonly stream: ReadableStream<Uint8Array>; produced(): number } {
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (produced >= max) return controller.close();
        produced += 4096;
        controller.enqueue(new Uint8Array(4096).fill(0x61));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, produced: () => produced };
}

/** What a chunked flood got back. */
export interface Flood {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Bytes the client had written when the response arrived. */
  readonly sentAtResponse: number;
  /** Whether the client got to send its whole body. */
  readonly finished: boolean;
}

/**
 * POSTs a chunked body (no Content-Length) of `prefix`, up to `max` bytes of `a`, then `suffix`
 * over a real socket, writing until the server answers or the connection ends.
 */
export function chunkedFlood(
  url: string,
  options: {
    readonly headers: Readonly<Record<string, string>>;
    readonly max: number;
    readonly prefix: string;
    readonly suffix: string;
  },
): Promise<Flood> {
  return new Promise((resolve, reject) => {
    const chunk = Buffer.alloc(16 * 1024, 'a');
    const { max } = options;
    let sent = 0;
    let sentAtResponse = -1;
    let stopped = false;
    const req = httpRequest(url, {
      method: 'POST',
      headers: { ...options.headers, 'transfer-encoding': 'chunked' },
    });
    req.on('response', (res) => {
      sentAtResponse = sent;
      stopped = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => {
        req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          sentAtResponse,
          finished: sent >= max,
        });
      });
    });
    req.on('error', (error) => {
      stopped = true;
      if (sentAtResponse < 0) reject(error);
    });
    req.write(options.prefix);
    const pump = () => {
      while (!stopped && sent < max) {
        sent += chunk.byteLength;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!stopped) req.end(options.suffix);
    };
    pump();
  });
}
