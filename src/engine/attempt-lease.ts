import type { EngineContext } from './engine-context.js';

/** When a lease was renewed, by the engine's clock and by the monotonic one. */
export interface LeaseClock {
  readonly at: number;
  readonly monotonic: number;
}

/** The lease's renewal time, read just before the renewal is written. */
export function leaseClock(ctx: EngineContext): LeaseClock {
  return { at: ctx.clock.now(), monotonic: performance.now() };
}

/**
 * Whether a sweep may have taken over an attempt whose lease was renewed at `renewed` (read just
 * before the renewal was written, so the age is never underestimated). A sweep takes an attempt
 * only once its own clock passes the lease, so while half the lease is left no sweep whose clock
 * runs less than half a lease ahead of this one can have. Both clocks must agree: the engine's
 * clock (a test's fake clock, or a wall clock set back during a pause) and the monotonic one
 * (which a paused process cannot fool).
 */
export function leaseMayHaveLapsed(ctx: EngineContext, renewed: LeaseClock): boolean {
  const young = ctx.leaseMs / 2;
  return ctx.clock.now() - renewed.at >= young || performance.now() - renewed.monotonic >= young;
}
