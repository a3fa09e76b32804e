import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../src/server/index.js';
import { ListenError, startServer } from '../../src/server/index.js';

describe('startServer', () => {
  it('finishes an in-flight request on shutdown, refuses new connections, then runs onClose', async () => {
    const app = new Hono<AppEnv>();
    const order: string[] = [];
    let release: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      app.get('/slow', async (c) => {
        resolve();
        await new Promise<void>((r) => {
          release = r;
        });
        order.push('handler finished');
        return c.text('finished');
      });
    });
    const server = await startServer(app, { port: 0, onClose: async () => void order.push('onClose') });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const inFlight = fetch(`${server.url}/slow`).then(async (r) => ({
      status: r.status,
      text: await r.text(),
    }));
    await started;
    const closed = server.close().then(() => order.push('closed'));
    await new Promise((r) => setTimeout(r, 50));
    await expect(fetch(`${server.url}/slow`)).rejects.toThrow();
    expect(order).toEqual([]);
    release();
    expect(await inFlight).toEqual({ status: 200, text: 'finished' });
    await closed;
    expect(order).toEqual(['handler finished', 'onClose', 'closed']);
  });

  it('reports a taken port as a ListenError naming it', async () => {
    const app = new Hono<AppEnv>();
    const first = await startServer(app, { port: 0 });
    try {
      await expect(startServer(app, { port: first.port })).rejects.toThrow(
        new ListenError(`cannot listen on 127.0.0.1:${first.port}: the port is in use`),
      );
    } finally {
      await first.close();
    }
  });
});
