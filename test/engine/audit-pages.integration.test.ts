import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditChainer } from '../../src/audit/chain.js';
import { AuditLedger } from '../../src/ledger/audit-ledger.js';
import { AUDIT_STEPS, type AuditEvent, type AuditStep } from '../../src/audit/event.js';
import { ConfigurationError } from '../../src/canonical/errors.js';
import { REPEATABLE_STEPS } from '../../src/engine/audit-timeline.js';
import { isAuditCursor } from '../../src/engine/queries.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { type Harness, harnessOn } from '../support/engine.js';

describe.each(BACKENDS)('on %s', (backend) => {
  let h: Harness<Store>;
  beforeAll(async () => {
    await warmUp(backend);
    h = await harnessOn(backend);
  }, 120_000);
  afterAll(() => h.close());

  let proposals = 0;

  /** Appends `steps` to the chain, alternating between two proposals; returns the first one's events. */
  async function appendTrail(
    steps: readonly (readonly [AuditStep, string])[],
  ): Promise<{ id: string; seqs: number[] }> {
    const id = `prp_pages${++proposals}`;
    const other = `prp_other${proposals}`;
    const events: AuditEvent[] = [];
    await new AuditLedger(h.store, auditChainer(undefined)).transaction(
      async (_tx, audit) => {
        for (const [i, [step, actor]] of steps.entries()) {
          for (const proposalId of [id, other]) {
            audit.append({
              tenant: 'acme',
              proposalId,
              attemptId: null,
              runId: 'run-1',
              step,
              actor,
              reason: step === 'denied' ? 'forbidden' : null,
              digests: { proposed: 'a'.repeat(64) },
              commandId: null,
              detail: {},
              at: i,
              id: `evt_${proposalId}_${i}`,
            });
          }
        }
      },
      // On PostgreSQL a queued event has its seq once it is chained, after the commit.
      { onChained: (chained) => events.push(...chained.filter((e) => e.proposalId === id)) },
    );
    return { id, seqs: events.map((e) => e.seq) };
  }

  const trail = fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom<AuditStep>('denied', 'denied', 'replayed'), fc.constantFrom(...AUDIT_STEPS)),
      fc.constantFrom('agent:a', 'agent:b', 'user:c'),
    ),
    { minLength: 0, maxLength: 40 },
  );

  describe('audit pages', () => {
    it('pages by cursor are disjoint, in chain order and complete, with and without a step filter', async () => {
      await fc.assert(
        fc.asyncProperty(
          trail,
          fc.integer({ min: 1, max: 12 }),
          fc.boolean(),
          async (steps, limit, decisionsOnly) => {
            const { id, seqs } = await appendTrail(steps);
            const expected = decisionsOnly ? seqs.filter((_, i) => steps[i]![0] !== 'denied') : seqs;
            const seen: number[] = [];
            let cursor: string | undefined;
            for (let pages = 0; ; pages++) {
              const page = await h.engine.audit.page('acme', id, {
                limit,
                ...(cursor !== undefined ? { cursor } : {}),
                ...(decisionsOnly ? { exceptSteps: ['denied'] } : {}),
              });
              expect(page.events.length).toBeLessThanOrEqual(limit);
              expect(page.events.every((e) => e.proposalId === id)).toBe(true);
              seen.push(...page.events.map((e) => e.seq));
              if (page.nextCursor === undefined) break;
              expect(isAuditCursor(page.nextCursor)).toBe(true);
              expect(page.events).toHaveLength(limit);
              cursor = page.nextCursor;
              expect(pages).toBeLessThan(50);
            }
            expect(seen).toEqual(expected);
          },
        ),
        { numRuns: 40 },
      );
    });

    it('the timeline keeps every other event and collapses repeatable ones by step, actor and reason between them, counting all', async () => {
      await fc.assert(
        fc.asyncProperty(trail, async (steps) => {
          const { id, seqs } = await appendTrail(steps);
          const timeline = await h.engine.audit.timeline('acme', id);
          expect(timeline.eventCount).toBe(steps.length);
          const firstSeqs = timeline.entries.map((e) => (e.kind === 'event' ? e.line.seq : e.first.seq));
          expect(firstSeqs).toEqual([...firstSeqs].sort((a, b) => a - b));
          const kept = timeline.entries.flatMap((e) =>
            e.kind === 'event' && !REPEATABLE_STEPS.includes(e.line.step) ? [e.line.seq] : [],
          );
          expect(kept).toEqual(seqs.filter((_, i) => !REPEATABLE_STEPS.includes(steps[i]![0])));
          const counted = timeline.entries.reduce((n, e) => n + (e.kind === 'event' ? 1 : e.count), 0);
          expect(counted).toBe(steps.length);
          for (const e of timeline.entries) {
            if (e.kind !== 'repeated') continue;
            expect(e.count).toBeGreaterThan(1);
            expect([e.first.step, e.first.actor, e.last.step, e.last.actor]).toEqual([
              e.step,
              e.actor,
              e.step,
              e.actor,
            ]);
            // No event the run stands for is separated from its first by a kept event.
            expect(kept.some((s) => s > e.first.seq && s < e.last.seq)).toBe(false);
          }
        }),
        { numRuns: 40 },
      );
    });

    it('refuses a cursor it did not hand out', async () => {
      const { id } = await appendTrail([['proposed', 'agent:a']]);
      for (const cursor of [
        '',
        'abc',
        Buffer.from('seq~-1').toString('base64url'),
        Buffer.from('1~prp_x').toString('base64url'),
      ]) {
        expect(isAuditCursor(cursor)).toBe(false);
        await expect(h.engine.audit.page('acme', id, { cursor })).rejects.toThrow(ConfigurationError);
      }
    });
  });
});
