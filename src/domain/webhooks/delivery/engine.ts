// At-least-once webhook delivery, in short transactions and never one held across an HTTP call:
//
//   1. dispatch  — claim undispatched events (FOR UPDATE SKIP LOCKED), create one delivery per
//                  enabled endpoint subscribed to the type, mark the events dispatched: one statement.
//                  As many of the new deliveries as the worker's sender has room for are inserted
//                  already leased to it (as step 2 would) and handed to the sender; the rest are
//                  inserted due, for any worker's claim.
//   2. claim     — take due deliveries (SKIP LOCKED) and lease them: next_attempt_at moves to the
//                  end of the lease and a fencing token (lease_id) is stored. One statement.
//   3. send      — outside any transaction, signed per Standard Webhooks, with a deadline.
//   4. record    — the attempts, each delivery's new state (succeeded, failed, or pending with its
//                  next retry) only if the lease is still ours, and endpoint health (410 Gone and
//                  failing for days disable the endpoint, with an event). One transaction.
//
// Leasing at dispatch spares a first attempt the claim's write of the indexed next_attempt_at and
// a round trip. A worker killed between its lease (1 or 2) and 4 loses nothing: the lease runs out
// and the delivery is due again, without having used up one of its retries (only recorded
// attempts count) — a delivery leased at dispatch waits for its lease like one claimed. Any number
// of workers share the queue through SKIP LOCKED; a worker whose lease was taken over cannot
// record over the newer holder.
//
// Steps 1 and 2 are in queue.ts, 3 in attempt.ts, 4 in record.ts; this file runs them.
import type { FastifyBaseLogger } from 'fastify';
import { attemptDelivery, type AttemptDeps, type Completed } from './attempt.js';
import crypto from 'node:crypto';
import { claimDeliveries, dispatchEvents, releaseLeases, releaseLostClaims, type ClaimedDelivery } from './queue.js';
import { LONGEST_OUTAGE_BACKOFF_MS, isDatabaseUnavailable } from '../../../kernel/outage.js';
import { settlesBy } from '../../../kernel/deadline.js';
import { recordOutcomes, type RecordDeps } from './record.js';
import type { Metrics } from '../../../metrics/registry.js';
import { alarm, completions, type Alarm } from './pacing.js';

export interface DeliveryDeps extends AttemptDeps, RecordDeps {
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  metrics?: Pick<Metrics, 'webhookRecorded' | 'webhookLag' | 'workerFailure'>;
}

// --- the loops -----------------------------------------------------------------------------------

/**
 * One complete pass, for the periodic worker and for tests with an injected clock: dispatches
 * every pending event, then sends every due delivery (and retries that fall due at once) until
 * nothing is due at `now`. A round's batch is first what its dispatches leased, then claims.
 */
export async function runDeliveryPass(deps: DeliveryDeps): Promise<{ dispatchedEvents: number; attempts: number }> {
  const { batchSize, leaseMs } = deps.config;
  let dispatchedEvents = 0;
  let attempts = 0;
  for (let round = 0; round < 10_000; round++) {
    const batch: ClaimedDelivery[] = [];
    for (;;) {
      const d = await dispatchEvents(deps.db, deps.now(), batchSize, { id: crypto.randomUUID(), ms: leaseMs, limit: batchSize - batch.length });
      dispatchedEvents += d.events;
      batch.push(...d.leased);
      // A full batch is sent before more is leased, so that no lease ages while the rest is fanned out.
      if (d.events < batchSize || batch.length >= batchSize) break;
    }
    if (batch.length < batchSize) batch.push(...(await claimDeliveries(deps.db, deps.now(), leaseMs, batchSize - batch.length)));
    if (batch.length === 0) break;
    const done = await Promise.all(batch.map((c) => attemptDelivery(deps, c)));
    await recordOutcomes(deps, done);
    attempts += done.filter((d) => d.kind === 'attempt').length;
  }
  return { dispatchedEvents, attempts };
}

export interface DeliveryEngine {
  /**
   * Stops leasing, hands back the leases not yet sent, lets the attempts in flight finish and
   * records them. Those still in flight at `deadlineMs` (epoch ms) are given up and their leases
   * handed back too, so that another worker sends them at once rather than when the leases run out.
   */
  stop(deadlineMs?: number): Promise<void>;
  /** What was done since the last call (events dispatched, attempts recorded), for the worker's log. */
  takeCounts(): { dispatchedEvents: number; attempts: number };
}

/**
 * The continuous delivery of a worker process: three loops on their own connections, so that no
 * one's round trips wait for another's —
 *   dispatcher  fans committed events out into deliveries, leasing those the sender has room for;
 *   claimer     leases due deliveries (retries, and what the dispatcher did not lease);
 *   recorder    records completed attempts in batches as they arrive.
 * The sender keeps up to `concurrency` attempts in flight, and the two leasing loops keep about as
 * many deliveries again waiting as it completed in the last 100–200 ms (about batchSize at most;
 * a claim overlapping a dispatch can add as many again), so that the next batch's round trip does
 * not leave it idle; neither loop leases a handful at a time while the sender is busy, unless
 * slots would otherwise stay idle. When idle, the dispatcher and claimer look again every
 * pollIntervalMs (a cheap index probe), which bounds the latency from commit to first attempt
 * without the commit-serialising cost of NOTIFY in every event-writing transaction.
 */
export function startDeliveryEngine(deps: DeliveryDeps): DeliveryEngine {
  const { config, log } = deps;
  let stopped = false;
  let handedBack = false;
  const inFlight = new Set<ClaimedDelivery>();
  /** Leased, waiting for a free slot of the sender, oldest first. */
  const waiting: ClaimedDelivery[] = [];
  /** Leases to hand back: they waited until too little of them was left for a whole attempt. */
  const stale: ClaimedDelivery[] = [];
  /** Room set aside for a dispatch on its way, so that a claim meanwhile does not take it too. */
  let asked = 0;
  let allDone: (() => void) | undefined;
  const completed: Completed[] = [];
  /** Lease ids of claims and dispatches whose answer the database never gave (an outage): given back when it returns. */
  const lostClaims: string[] = [];
  const counts = { dispatchedEvents: 0, attempts: 0 };
  const dispatcherAlarm = alarm();
  const claimerAlarm = alarm();
  const recorderAlarm = alarm();
  const finished = completions();
  /** A statement leasing fewer is not worth its round trip while the sender is busy. */
  const worthLeasing = Math.max(1, Math.floor(Math.min(config.batchSize, config.concurrency) / 4));
  /** Whether a leasing loop goes now: for a batch worth a statement, or for free slots nothing waits to fill (slow receivers hold the rest). */
  const mayLease = (free: number) => free >= worthLeasing || (free > 0 && waiting.length === 0 && inFlight.size < config.concurrency);
  /** A leasing loop waits for room: woken when enough is free. */
  let starved = false;

  const room = () => config.concurrency + Math.min(config.batchSize, finished.lately()) - inFlight.size - waiting.length - asked;

  const launch = (claimed: ClaimedDelivery) => {
    inFlight.add(claimed);
    attemptDelivery(deps, claimed)
      .then((done) => {
        // An attempt given up at shutdown is not recorded: its lease was handed back.
        if (inFlight.has(claimed)) completed.push(done);
      })
      .catch((err) => log.error({ err }, 'webhook attempt failed unexpectedly; its lease will expire and it will be retried'))
      .finally(() => {
        inFlight.delete(claimed);
        finished.add();
        if (inFlight.size === 0) allDone?.();
        recorderAlarm.wake();
        sendWaiting();
        if (starved && mayLease(room())) {
          starved = false;
          dispatcherAlarm.wake();
          claimerAlarm.wake();
        }
      });
  };

  // How long a leased delivery may wait ahead of the sender. Its endpoint (enabled, URL, secrets)
  // was read when it was leased, and a disabled or re-pointed endpoint must not be sent to on that
  // reading for long; and after the attempt's deadline half the rest of the lease stays in hand, to
  // record the attempt before another worker may take the lease over (and for clocks that differ).
  const longestWaitMs = Math.min(1000, (config.leaseMs - config.timeoutMs) / 2);

  /** Fills the free slots; a delivery that waited too long is handed back instead (claimed again, its endpoint is read again). */
  const sendWaiting = () => {
    if (stopped) return;
    const now = deps.now().getTime();
    while (inFlight.size < config.concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      if (now - (next.leasedUntilMs - config.leaseMs) <= longestWaitMs) launch(next);
      else stale.push(next);
    }
    if (stale.length > 0) claimerAlarm.wake();
  };

  /** Runs one dispatch or claim, `reserve` of the sender's room set aside for it meanwhile; answers how many it leased. */
  const lease = async (reserve: number, leaseId: string, statement: () => Promise<ClaimedDelivery[]>) => {
    asked += reserve;
    let leased: ClaimedDelivery[];
    try {
      leased = await statement();
    } catch (err) {
      if (isDatabaseUnavailable(err)) lostClaims.push(leaseId);
      throw err;
    } finally {
      asked -= reserve;
    }
    waiting.push(...leased);
    sendWaiting();
    return leased.length;
  };

  /** Hands back what this worker holds but will not send, so that it is due again at once. */
  const giveBack = async <T>(held: T[], release: (taken: T[]) => Promise<number>) => {
    if (held.length === 0) return;
    const taken = held.splice(0);
    try {
      await release(taken);
    } catch (err) {
      held.push(...taken);
      throw err;
    }
  };

  /** Runs `step` until stopped; `step` answers whether to go again at once. */
  const forever = async (name: string, step: () => Promise<boolean>, idle: Alarm, until: () => boolean) => {
    let failures = 0;
    while (!until()) {
      try {
        const again = await step();
        failures = 0;
        if (!again) await idle.sleep(stopped ? 100 : config.pollIntervalMs);
      } catch (err) {
        failures++;
        log.error({ err }, `webhook ${name} failed; retrying`);
        deps.metrics?.workerFailure(`webhook_${name}`);
        // Unrecorded outcomes are not worth waiting for forever at shutdown: their leases expire.
        if (stopped && failures >= 3) break;
        await idle.sleep(Math.min(1000 * failures, LONGEST_OUTAGE_BACKOFF_MS));
      }
    }
  };

  /** A leasing loop without room enough waits until an attempt's end makes it, or a poll interval. */
  const waitForRoom = async (loopAlarm: Alarm) => {
    starved = true;
    await loopAlarm.sleep(config.pollIntervalMs);
    return true;
  };

  const dispatcher = forever(
    'dispatch',
    async () => {
      const free = room();
      if (!mayLease(free)) return waitForRoom(dispatcherAlarm);
      // No more events than the sender has room for (each has a delivery, if any endpoint wants
      // it): a delivery the dispatch cannot lease costs a claim later.
      const limit = Math.min(config.batchSize, free);
      const leaseId = crypto.randomUUID();
      let dispatched = { events: 0, deliveries: 0 };
      const leased = await lease(free, leaseId, async () => {
        const d = await dispatchEvents(deps.db, deps.now(), limit, { id: leaseId, ms: config.leaseMs, limit: free });
        dispatched = d;
        return d.leased;
      });
      counts.dispatchedEvents += dispatched.events;
      if (dispatched.deliveries > leased) claimerAlarm.wake();
      return dispatched.events === limit;
    },
    dispatcherAlarm,
    () => stopped,
  );

  const claimer = forever(
    'claim',
    async () => {
      await giveBack(lostClaims, (ids) => releaseLostClaims(deps.db, deps.now(), ids));
      await giveBack(stale, async (leases) => {
        const released = await releaseLeases(deps.db, deps.now(), leases);
        log.warn({ deliveries: released }, 'webhook leases handed back unsent: they waited too long for a free slot');
        return released;
      });
      const free = room();
      if (!mayLease(free)) return waitForRoom(claimerAlarm);
      const limit = Math.min(config.batchSize, free);
      const leaseId = crypto.randomUUID();
      // Sets no room aside: a claim mostly finds nothing during a backlog of new events, and the
      // dispatcher's batch should not shrink for it; what it does find waits at most a batch longer.
      const claimed = await lease(0, leaseId, () => claimDeliveries(deps.db, deps.now(), config.leaseMs, limit, leaseId));
      return claimed === limit;
    },
    claimerAlarm,
    () => stopped,
  );

  const recorder = forever(
    'record',
    async () => {
      if (completed.length === 0) {
        await recorderAlarm.sleep(stopped ? 100 : 1000);
        return true;
      }
      const batch = completed.splice(0, completed.length);
      try {
        await recordOutcomes(deps, batch);
        counts.attempts += batch.filter((done) => done.kind === 'attempt').length;
      } catch (err) {
        completed.unshift(...batch);
        throw err;
      }
      return true;
    },
    recorderAlarm,
    () => stopped && (inFlight.size === 0 || handedBack) && completed.length === 0,
  );

  /** At the deadline, the attempts still in flight are given up and their leases handed back. */
  const handBack = async () => {
    const given = [...inFlight];
    inFlight.clear();
    handedBack = true;
    recorderAlarm.wake();
    try {
      const released = await releaseLeases(deps.db, deps.now(), given);
      log.info({ deliveries: released }, 'shutdown: webhook attempts still in flight given up; their leases handed back');
    } catch (err) {
      log.error({ err }, `shutdown: could not hand ${given.length} webhook leases back; they are sent again when the leases run out`);
    }
  };

  return {
    takeCounts() {
      const taken = { ...counts };
      counts.dispatchedEvents = 0;
      counts.attempts = 0;
      return taken;
    },
    async stop(deadlineMs = Infinity) {
      stopped = true;
      dispatcherAlarm.wake();
      claimerAlarm.wake();
      recorderAlarm.wake();
      await Promise.all([dispatcher, claimer]);
      const held = [...waiting.splice(0), ...stale.splice(0)];
      log.info({ in_flight: inFlight.size, not_sent: held.length }, 'shutdown: webhook delivery stopped claiming');
      await releaseLostClaims(deps.db, deps.now(), lostClaims).catch(() => undefined);
      await releaseLeases(deps.db, deps.now(), held).catch((err) =>
        log.error({ err }, `shutdown: could not hand ${held.length} unsent webhook leases back; they are sent again when the leases run out`),
      );
      const done = inFlight.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allDone = resolve));
      if (!(await settlesBy(done, deadlineMs))) await handBack();
      await recorder;
    },
  };
}
