import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Logger } from '../../engine/engine-context.js';
import { type FeedEngine, type FeedRead, readLiveEvents } from '../../notify/live-feed.js';
import type { AppEnv } from '../app-env.js';
import { type PrincipalRecheck, unauthenticated } from '../auth/authenticate.js';
import { HttpProblem, refusal } from '../http-problem.js';
import type { EventStreams } from './event-streams.js';

/** What the live event route is wired from. */
export interface EventRouteDependencies {
  readonly engine: FeedEngine;
  readonly streams: EventStreams;
  readonly logger: Logger;
  /** Checks before every read that the caller's token or session still stands. */
  readonly recheck: PrincipalRecheck;
}

// EventSource reconnects after this long (ms) when a stream drops.
const RETRY_MS = 3000;

function invalidLastEventId(): HttpProblem {
  const message = 'Last-Event-ID must be the id of an event this stream sent (a whole number)';
  return new HttpProblem(422, 'invalid_request', message, {
    extra: { issues: [{ path: 'Last-Event-ID', message }] },
  });
}

/** The `seq` a stream resumes after, or undefined (start at the head of the chain). */
function resumePoint(header: string | undefined): number | undefined {
  const value = header?.trim() ?? '';
  if (value === '') return undefined;
  if (!/^\d{1,15}$/.test(value)) throw invalidLastEventId();
  return Number(value);
}

/** Resolves after `ms`, or as soon as `stopped` does; never leaves its timer behind. */
async function pause(ms: number, stopped: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), stopped]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /api/v1/events`: the caller's tenant's lifecycle events as Server-Sent Events, for
 * operators (an API token or the console session; agents are refused `forbidden`). Each event's id
 * is its audit `seq`: a client that sends `Last-Event-ID` gets exactly the events after it;
 * without one, the stream starts at the chain's head. The chain is read every `pollMs` while the
 * client is connected, with a comment after `heartbeatMs` of quiet so proxies keep the stream.
 * Before every read the token or session is checked again: once it is revoked, signed out,
 * expired or its operator disabled, the stream ends (a reconnect is 401 `unauthenticated`).
 */
export function eventRoutes(deps: EventRouteDependencies): Hono<AppEnv> {
  const { engine, streams, logger, recheck } = deps;
  const app = new Hono<AppEnv>();

  app.get('/', async (c) => {
    const principal = c.get('principal');
    if (!principal) throw unauthenticated();
    const actor = principal.actor;
    if (actor.kind !== 'operator')
      throw refusal('forbidden', 'live events are for operators; an agent reads its own proposals');
    const unknown = Object.keys(c.req.query());
    if (unknown.length > 0)
      throw new HttpProblem(422, 'invalid_request', 'this endpoint takes no query parameters', {
        extra: { issues: unknown.map((key) => ({ path: `$.${key}`, message: 'unknown query parameter' })) },
      });
    const afterSeq = resumePoint(c.req.header('last-event-id'));
    const authorization = c.req.header('authorization');
    const slot = streams.acquire(`${actor.tenant}\u0000${actor.id}`);
    if (!slot)
      throw new HttpProblem(
        429,
        'rate_limited',
        `at most ${streams.maxPerPrincipal} event streams may be open at once; close one first`,
        { extra: { limit: 'event_streams' }, headers: { 'Retry-After': String(RETRY_MS / 1000) } },
      );
    const tenant = actor.tenant;
    let first: FeedRead;
    try {
      // Read before answering: the stream's start is fixed when the client sees the 200.
      first = await readLiveEvents(engine, tenant, afterSeq === undefined ? {} : { afterSeq });
    } catch (error) {
      slot.release();
      throw error;
    }
    c.header('X-Accel-Buffering', 'no');
    return streamSSE(c, async (stream) => {
      let ended = false;
      let stop = () => {};
      const stopped = new Promise<void>((resolve) => {
        stop = () => {
          ended = true;
          resolve();
        };
      });
      stream.onAbort(stop);
      void slot.ended.then(stop);
      c.req.raw.signal.addEventListener('abort', stop, { once: true });
      try {
        await stream.write(`retry: ${RETRY_MS}\n\n`);
        let read = first;
        let quietSince = Date.now();
        while (!ended && !stream.aborted) {
          for (const event of read.events)
            await stream.writeSSE({
              id: String(event.seq),
              event: event.type,
              data: JSON.stringify(event.data),
            });
          if (read.events.length > 0) quietSince = Date.now();
          if (!read.more) {
            await pause(streams.pollMs, stopped);
            if (ended || stream.aborted) break;
            if (Date.now() - quietSince >= streams.heartbeatMs) {
              await stream.write(': heartbeat\n\n');
              quietSince = Date.now();
            }
          }
          // A stream outlives the request's authentication: a revoked token or an ended session
          // must stop it, not only the next request.
          if (!(await recheck(principal, authorization))) {
            logger.info(
              { tenant, actor: actor.id, via: principal.via },
              'live event stream ended: signed out',
            );
            break;
          }
          read = await readLiveEvents(engine, tenant, read.position);
        }
      } catch (error) {
        // The store went away (shutdown) or failed: end the stream; EventSource reconnects.
        logger.warn({ err: error, tenant }, 'live event stream ended by an error');
      } finally {
        c.req.raw.signal.removeEventListener('abort', stop);
        slot.release();
      }
    });
  });

  return app;
}
