import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Logger } from '../../engine/engine-context.js';
import { type FeedEngine, type FeedRead, readLiveEvents } from '../../notify/live-feed.js';
import type { AppEnv } from '../app-env.js';
import { type PrincipalRecheck, unauthenticated } from '../auth/authenticate.js';
import { HttpProblem, refusal } from '../../http/http-problem.js';
import type { EventStreams } from './event-streams.js';
import { type FeedEnd, type FeedSubscription, LiveFeedHub } from './live-feed-hub.js';

/** What the live event route is wired from. */
export interface EventRouteDependencies {
  readonly engine: FeedEngine;
  readonly streams: EventStreams;
  readonly logger: Logger;
  /** Checks once per poll, before a stream sends anything, that its token or session still stands. */
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

/** The slice of @hono/node-server's bindings (`c.env`) a dropped stream needs: its response, to destroy. */
interface NodeResponseBindings {
  readonly outgoing?: { destroy(): void } | undefined;
}

/**
 * `GET /api/v1/events`: the caller's tenant's lifecycle events as Server-Sent Events, for
 * operators (an API token or the console session; agents are refused `forbidden`). Each event's id
 * is its audit `seq`: a client that sends `Last-Event-ID` gets exactly the events after it (its
 * backlog read for it alone); without one, the stream starts at the chain's head. Then it joins
 * its tenant's shared feed ({@link LiveFeedHub}): one read of the chain every `pollMs` for all
 * of the tenant's streams, with a comment after `heartbeatMs` of quiet so proxies keep the stream.
 * Once per poll, before it sends anything, each stream checks its token or session again: once it
 * is revoked, signed out, expired or its operator disabled, the stream ends (a reconnect is 401
 * `unauthenticated`). A client that stops reading is dropped when its buffer is full.
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
    const hub = streams.hub(engine);
    let first: FeedRead;
    try {
      // Read before answering: the stream's start is fixed when the client sees the 200.
      first = await readLiveEvents(engine, tenant, afterSeq === undefined ? {} : { afterSeq });
    } catch (error) {
      slot.release();
      throw error;
    }
    const response = (c.env as NodeResponseBindings | undefined)?.outgoing;
    c.header('X-Accel-Buffering', 'no');
    return streamSSE(c, async (stream) => {
      let ended = false;
      let subscription: FeedSubscription | undefined;
      const stop = () => {
        ended = true;
        subscription?.release();
      };
      // Told by the hub, possibly while this stream is stuck in a write to a client that stopped
      // reading: abort the write and close the connection so nothing of it stays behind.
      const onEnd = (end: FeedEnd) => {
        ended = true;
        if (end.kind !== 'overflow') return;
        logger.warn(
          { tenant, actor: actor.id, queued: end.queued, bytes: end.bytes },
          'live event stream dropped: the client stopped reading',
        );
        stream.abort();
        response?.destroy();
      };
      stream.onAbort(stop);
      void slot.ended.then(stop);
      c.req.raw.signal.addEventListener('abort', stop, { once: true });
      // A stream outlives the request's authentication: a revoked token or an ended session must
      // stop it, not only the next request.
      const signedIn = async (): Promise<boolean> => {
        if (await recheck(principal, authorization)) return true;
        logger.info({ tenant, actor: actor.id, via: principal.via }, 'live event stream ended: signed out');
        return false;
      };
      try {
        await stream.write(`retry: ${RETRY_MS}\n\n`);
        let read = first;
        let quietSince = Date.now();
        // Its own backlog first (everything up to the shared feed's position), then the feed.
        for (;;) {
          if (read.events.length > 0) await stream.write(LiveFeedHub.frames(LiveFeedHub.items(read.events)));
          if (read.events.length > 0) quietSince = Date.now();
          if (ended || stream.aborted) return;
          if (!read.more) {
            subscription = hub.subscribe(tenant, read.position, onEnd);
            if (subscription) break;
          }
          if (!(await signedIn())) return;
          read = await readLiveEvents(engine, tenant, read.position);
        }
        while (!ended && !stream.aborted) {
          const delivery = await subscription.next();
          if (delivery.kind === 'ended') {
            if (delivery.end.kind === 'failed') throw delivery.end.error;
            break;
          }
          if (ended || stream.aborted) break;
          if (!(await signedIn())) break;
          if (delivery.items.length > 0) await stream.write(LiveFeedHub.frames(delivery.items));
          if (delivery.items.length > 0) quietSince = Date.now();
          else if (Date.now() - quietSince >= streams.heartbeatMs) {
            await stream.write(': heartbeat\n\n');
            quietSince = Date.now();
          }
        }
      } catch (error) {
        // The store went away (shutdown) or failed: end the stream; EventSource reconnects.
        logger.warn({ err: error, tenant }, 'live event stream ended by an error');
      } finally {
        c.req.raw.signal.removeEventListener('abort', stop);
        subscription?.release();
        slot.release();
      }
    });
  });

  return app;
}
