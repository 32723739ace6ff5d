// At-least-once webhook delivery, in three short transactions per batch and never one held across
// an HTTP call:
//
//   1. dispatch  — claim undispatched events (FOR UPDATE SKIP LOCKED), create one delivery per
//                  enabled endpoint subscribed to the type, mark the events dispatched: one statement.
//   2. claim     — take due deliveries (SKIP LOCKED) and lease them: next_attempt_at moves to the
//                  end of the lease and a fencing token (lease_id) is stored. One statement.
//   3. send      — outside any transaction, signed per Standard Webhooks, with a deadline.
//   4. record    — the attempts, each delivery's new state (succeeded, failed, or pending with its
//                  next retry) only if the lease is still ours, and endpoint health (410 Gone and
//                  failing for days disable the endpoint, with an event). One transaction.
//
// A worker killed between 2 and 4 loses nothing: its lease runs out and the delivery is due again,
// without having used up one of its retries (only recorded attempts count). Any number of workers
// share the queue through SKIP LOCKED; a worker whose lease was taken over cannot record over the
// newer holder.
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

export interface DeliveryDeps extends AttemptDeps, RecordDeps {
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  metrics?: Pick<Metrics, 'webhookRecorded' | 'webhookLag' | 'workerFailure'>;
}

// --- the loops -----------------------------------------------------------------------------------

/**
 * One complete pass, for the periodic worker and for tests with an injected clock: dispatches
 * every pending event, then sends every due delivery (and retries that fall due at once) until
 * nothing is due at `now`.
 */
export async function runDeliveryPass(deps: DeliveryDeps): Promise<{ dispatchedEvents: number; attempts: number }> {
  let dispatchedEvents = 0;
  let attempts = 0;
  for (let round = 0; round < 10_000; round++) {
    for (;;) {
      const d = await dispatchEvents(deps.db, deps.now(), deps.config.batchSize);
      dispatchedEvents += d.events;
      if (d.events < deps.config.batchSize) break;
    }
    const claimed = await claimDeliveries(deps.db, deps.now(), deps.config.leaseMs, deps.config.batchSize);
    if (claimed.length === 0) break;
    const done = await Promise.all(claimed.map((c) => attemptDelivery(deps, c)));
    await recordOutcomes(deps, done);
    attempts += done.filter((d) => d.kind === 'attempt').length;
  }
  return { dispatchedEvents, attempts };
}

export interface DeliveryEngine {
  /**
   * Stops claiming, lets the attempts in flight finish and records them. Those still in flight at
   * `deadlineMs` (epoch ms) are given up and their leases handed back, so that another worker
   * sends them at once rather than when the leases run out.
   */
  stop(deadlineMs?: number): Promise<void>;
  /** What was done since the last call (events dispatched, attempts recorded), for the worker's log. */
  takeCounts(): { dispatchedEvents: number; attempts: number };
}

/** A promise-based wake-up: sleep(ms) resolves after ms or as soon as wake() is called. */
function alarm() {
  let wakeUp: (() => void) | undefined;
  let pending = false;
  return {
    wake() {
      pending = true;
      const resolve = wakeUp;
      wakeUp = undefined;
      resolve?.();
    },
    sleep(ms: number) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wakeUp = undefined;
          resolve();
        }, ms);
        wakeUp = () => {
          clearTimeout(timer);
          pending = false;
          resolve();
        };
      });
    },
  };
}

/**
 * The continuous delivery of a worker process: three loops on their own connections, so that no
 * one's round trips wait for another's —
 *   dispatcher  fans committed events out into deliveries, then wakes the claimer;
 *   claimer     keeps up to `concurrency` attempts in flight;
 *   recorder    records completed attempts in batches as they arrive.
 * When idle, the dispatcher and claimer look again every pollIntervalMs (a cheap index probe),
 * which bounds the latency from commit to first attempt without the commit-serialising cost of
 * NOTIFY in every event-writing transaction.
 */
export function startDeliveryEngine(deps: DeliveryDeps): DeliveryEngine {
  const { config, log } = deps;
  let stopped = false;
  let handedBack = false;
  const inFlight = new Set<ClaimedDelivery>();
  let allDone: (() => void) | undefined;
  const completed: Completed[] = [];
  /** Lease ids of claims whose answer the database never gave (an outage): given back when it returns. */
  const lostClaims: string[] = [];
  const counts = { dispatchedEvents: 0, attempts: 0 };
  const dispatcherAlarm = alarm();
  const claimerAlarm = alarm();
  const recorderAlarm = alarm();

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
        if (inFlight.size === 0) allDone?.();
        recorderAlarm.wake();
        claimerAlarm.wake();
      });
  };

  /** Runs `step` until stopped; `step` answers whether to go again at once. */
  const forever = async (name: string, step: () => Promise<boolean>, idle: ReturnType<typeof alarm>, until: () => boolean) => {
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

  const dispatcher = forever(
    'dispatch',
    async () => {
      const dispatched = await dispatchEvents(deps.db, deps.now(), config.batchSize);
      counts.dispatchedEvents += dispatched.events;
      if (dispatched.deliveries > 0) claimerAlarm.wake();
      return dispatched.events === config.batchSize;
    },
    dispatcherAlarm,
    () => stopped,
  );

  const claimer = forever(
    'claim',
    async () => {
      const room = Math.min(config.batchSize, config.concurrency - inFlight.size);
      if (room <= 0) {
        await claimerAlarm.sleep(config.pollIntervalMs);
        return true;
      }
      if (lostClaims.length > 0) {
        await releaseLostClaims(deps.db, deps.now(), lostClaims);
        lostClaims.length = 0;
      }
      const leaseId = crypto.randomUUID();
      let claimed: ClaimedDelivery[];
      try {
        claimed = await claimDeliveries(deps.db, deps.now(), config.leaseMs, room, leaseId);
      } catch (err) {
        if (isDatabaseUnavailable(err)) lostClaims.push(leaseId);
        throw err;
      }
      for (const c of claimed) launch(c);
      return claimed.length === room;
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
      log.info({ in_flight: inFlight.size }, 'shutdown: webhook delivery stopped claiming');
      await releaseLostClaims(deps.db, deps.now(), lostClaims).catch(() => undefined);
      const finished = inFlight.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allDone = resolve));
      if (!(await settlesBy(finished, deadlineMs))) await handBack();
      await recorder;
    },
  };
}
