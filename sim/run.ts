// One seeded run of the whole service: merchants are onboarded, then each step is a merchant's
// request (perhaps crashing the process at a crash point inside it), a worker pass, the
// processors acting on their own and reporting by webhook, a crash between requests, a clock jump
// or a receiver going down or coming back, all chosen by the seed. The invariants are checked
// after every step and, once the world is drained, at the end. The run answers the first
// violation found (with its step) or the final digest.
import { createAccount, issueKey } from '../src/domain/accounts/service.js';
import { installClock } from './clock.js';
import { createRng, type Rng } from './rng.js';
import { startSimService, type SimService } from './service.js';
import type { Database } from '../src/storage/db.js';
import { merchantStep, type Model } from './ops.js';
import { AT_THE_END, EVERY_STEP, type Invariant } from './invariants.js';
import { stateDigest } from './digest.js';
import type { ReceiverMode } from './receivers.js';
import { openConnectorAccounts, setRouting } from './ops-routing.js';
import { nightsFrom, reconcileNights } from './nightly.js';

export interface RunOptions {
  seed: number;
  steps: number;
  merchants?: number;
  /** A database to reuse (emptied first): one per process instead of one per seed. */
  database?: Database;
  /** Leaves the simulated clock installed after the run (to look at the database as it ended). */
  keepClock?: boolean;
  /** Prints each step. */
  trace?: (line: string) => void;
  /** Receives the normalised final state, line by line. */
  dump?: (line: string) => void;
}

export interface RunResult {
  seed: number;
  steps: number;
  ok: boolean;
  /** The invariant that failed first, and what it found. */
  failure?: { invariant: string; step: number; details: string[] };
  digest: string;
  /** The operations and faults as chosen, one line each (the same for the same seed). */
  log: string[];
}

async function check(s: SimService, model: Model, invariants: Record<string, Invariant>): Promise<{ invariant: string; details: string[] } | undefined> {
  for (const [name, invariant] of Object.entries(invariants)) {
    const details = await invariant(s, model);
    if (details.length) return { invariant: name, details };
  }
  return undefined;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** Clock jumps: a moment, past the idempotency lock, past the processors' pending delay, past an order's expiry, a webhook retry day, past an authorisation's capture_before. */
const JUMPS_MS = [1000, 12_000, 35_000, 5 * MINUTE, 61 * MINUTE, DAY, 8 * DAY];

async function faultStep(s: SimService, rng: Rng, clock: ReturnType<typeof installClock>): Promise<string> {
  const roll = rng.int(100);
  if (roll < 30) return (await s.worker(), 'worker pass');
  if (roll < 55) return (await s.pumpProcessors(), 'processors act and report');
  if (roll < 63) return (await s.crash(), 'crash between requests');
  if (roll < 85) {
    const ms = rng.pick(JUMPS_MS);
    clock.advance(ms);
    return `clock +${ms} ms`;
  }
  if (roll < 93) {
    const urls = [...s.receivers.seen.keys()];
    if (!urls.length) return 'no receiver yet';
    const url = rng.pick(urls);
    const mode: ReceiverMode = rng.pick(['up', 'up', 'failing', 'timing_out']);
    s.receivers.modes.set(url, mode);
    return `receiver ${url} ${mode}`;
  }
  s.world.faultRate = rng.pick([0, 0, 0.1, 0.3]);
  return `processor fault rate ${s.world.faultRate}`;
}

/** Heals the world and runs the clock past every deadline: receivers up, no faults, the worker and the processors until quiet. */
async function drain(s: SimService, clock: ReturnType<typeof installClock>, nightly: () => Promise<unknown>) {
  s.world.faultRate = 0;
  for (const url of s.receivers.seen.keys()) s.receivers.modes.set(url, 'up');
  for (let i = 0; i < 12; i++) {
    // The last jump passes every authorisation's capture_before (7 days): the worker voids or closes it.
    clock.advance(i < 6 ? 35_000 : i < 11 ? 12 * 60 * MINUTE : 8 * DAY);
    await s.pumpProcessors();
    await s.worker();
    await s.pumpProcessors();
    await s.worker();
    await nightly();
  }
}

export async function runSeed(opts: RunOptions): Promise<RunResult> {
  const clock = installClock();
  const rng = createRng(opts.seed);
  const s = await startSimService(clock, rng, opts.database);
  const log: string[] = [];
  const note = (line: string) => {
    log.push(line);
    opts.trace?.(line);
  };
  const model: Model = { merchants: [], sent: [], acknowledged: new Map(), violations: [], wrongAnswers: [], unanswered: [], keySeq: 0 };
  const ops = rng.fork('operations');
  const faults = rng.fork('faults');
  try {
    for (let i = 0; i < (opts.merchants ?? 3); i++) {
      const account = await createAccount(s.database.db, `Merchant ${i}`);
      const key = await issueKey(s.database.db, account.id, { livemode: false });
      model.merchants.push({ name: `m${i}`, accountId: account.id, key: key.secret, orders: [], payments: [], beneficiaries: [], mandates: [], endpoints: [], customers: [], savedCards: [], connectorAccounts: [] });
      // A float to refund and pay out of from the start, so that the balance checks are not all that answers.
      for (const currency of ['EUR', 'GBP']) {
        await s.request('POST', '/v1/test-helpers/balance/fund', { key: key.secret, body: { amount: 50_000, currency }, idempotencyKey: `fund-${i}-${currency}` });
      }
      // Its own simulator accounts (its default route, reconciled nightly); all but the first set rules of their own.
      const m = model.merchants[i]!;
      await openConnectorAccounts(s, model, m);
      if (i > 0) await setRouting(s, model, ops, m, false);
    }
    const nights = nightsFrom(clock.nowMs());
    let failure: RunResult['failure'];
    for (let step = 1; step <= opts.steps && !failure; step++) {
      const line = faults.chance(0.35) ? await faultStep(s, faults, clock) : await merchantStep(s, model, ops, faults.chance(0.12));
      note(`${step} ${line}`);
      const reconciled = await reconcileNights(s, model, nights);
      if (reconciled) note(`${step} ${reconciled}`);
      const found = await check(s, model, EVERY_STEP);
      if (found) failure = { ...found, step };
    }
    if (!failure) {
      await drain(s, clock, () => reconcileNights(s, model, nights));
      const reconciled = await reconcileNights(s, model, nights);
      if (reconciled) note(`end ${reconciled}`);
      // The last nights' runs announce themselves (reconciliation_run.completed): fanned out and delivered.
      await s.worker();
      await s.worker();
      const found = await check(s, model, AT_THE_END);
      if (found) failure = { ...found, step: opts.steps + 1 };
    }
    const digest = await stateDigest(s.database.db, opts.dump);
    return { seed: opts.seed, steps: opts.steps, ok: !failure, failure, digest, log };
  } finally {
    await s.close();
    if (!opts.keepClock) clock.uninstall();
  }
}
