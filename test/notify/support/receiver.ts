import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver saw. */
export interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly at: number;
  /** What it answered (`hold`: nothing, until the connection closed). */
  readonly reply: Reply;
}

/**
 * How the receiver answers one request: a status, a status with a body, `hold` (never answers
 * until closed) or `garbage` (bytes that are not HTTP, then it closes the connection).
 */
export type Reply = number | 'hold' | 'garbage' | { readonly status: number; readonly body: string };

/** A real HTTP receiver on loopback whose answers the test scripts. */
export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Answers for the next requests, in order; after them, `fallback`. */
  script(replies: readonly Reply[], fallback?: Reply): void;
  /** Resolves when `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a webhook receiver on 127.0.0.1, on `port` (a receiver coming back where one was down) or any free one. */
export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  let queue: Reply[] = [];
  let fallback: Reply = 204;
  const held: ServerResponse[] = [];
  const waiters: { count: number; done: () => void }[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const reply = queue.shift() ?? fallback;
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), reply });
      if (reply === 'hold') held.push(res);
      else if (reply === 'garbage') res.socket?.end('NOT HTTP AT ALL\r\n\r\n');
      else if (typeof reply === 'number') res.writeHead(reply).end();
      else res.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.body);
      for (const w of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.done();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: listening } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${listening}/hooks`,
    received,
    script: (replies, otherwise = 204) => {
      queue = [...replies];
      fallback = otherwise;
    },
    waitFor: (count, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        if (received.length >= count) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`receiver: ${received.length} of ${count} requests after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    close: async () => {
      if (!server.listening) return;
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
