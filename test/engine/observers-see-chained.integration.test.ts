import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/event.js';
import type { LifecycleObserver } from '../../src/engine/audit-step.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { type Harness, harnessOn, proposePayment } from '../support/engine.js';

// The engine's lifecycle observers (metrics, traces, a user's hook) are told of a step only once
// its audit event is chained: never an event with `seq` 0 and an empty chain hash, not even when
// concurrent transactions queue their events on PostgreSQL and a chaining pass chains them later.

const CONCURRENT = 8;
const ROUNDS = 10;

for (const backend of BACKENDS) {
  describe(`Lifecycle observers see chained events only (${backend})`, () => {
    let h: Harness<Store> | undefined;
    beforeAll(() => warmUp(backend), 120_000);
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it(`${CONCURRENT} concurrent proposals × ${ROUNDS} rounds: every observed event is the chained one`, async () => {
      const seen: AuditEvent[] = [];
      let allSeen!: () => void;
      const everyCall = new Promise<void>((resolve) => {
        allSeen = resolve;
      });
      const observer: LifecycleObserver = (event) => {
        if (event.tenant !== 'acme' || event.runId === 'run-first') return;
        // A copy as it is at the call: a placeholder filled in later would pass a later look.
        seen.push({ ...event });
        if (seen.length === CONCURRENT * ROUNDS) allSeen();
      };
      h = await harnessOn(backend, { observers: [observer], limits: false });
      const engine = h.engine;
      // The tenant's head exists before the rounds start (its first event creates it; not counted).
      await proposePayment(engine, 'acme', 'inv-104', 'run-first');
      await proposePayment(engine, 'globex', 'inv-104');
      for (let round = 0; round < ROUNDS; round++)
        await Promise.all(
          Array.from({ length: CONCURRENT }, (_, i) =>
            proposePayment(engine, 'acme', 'inv-104', `run-${round}-${i}`),
          ),
        );
      // Observers of events chained in the background are called once their pass ends.
      await everyCall;

      const unchained = seen.filter((e) => e.seq === 0 || e.chainHash === '' || e.leafHash === '');
      expect(`${unchained.length}/${seen.length} observer calls saw an unchained event`).toBe(
        `0/${CONCURRENT * ROUNDS} observer calls saw an unchained event`,
      );
      // Each observed event is exactly the one the chain holds.
      const stored = await h.store.read((tx) => tx.listAudit('acme', { limit: 1_000 }));
      const byId = new Map(stored.map((e) => [e.id, e]));
      for (const event of seen) expect(event).toEqual(byId.get(event.id));
      expect(new Set(seen.map((e) => e.id)).size).toBe(CONCURRENT * ROUNDS);
      expect(stored).toHaveLength(CONCURRENT * ROUNDS + 1);
    });
  });
}
