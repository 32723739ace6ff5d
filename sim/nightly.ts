// Every simulated night (a UTC day boundary passed on the simulated clock, docs/reconciliation.md),
// each merchant reconciles each of its simulator connector accounts for the day that ended, through
// the API (POST /v1/reconciliation-runs). A run the processor could not answer (the seed's faults
// on the processors' transport: 503 processor_unavailable) is asked again after the next step,
// under a new key. The days a clock jump passes over whole are not run: the clock never stood in
// them, so nothing (no movement, no report) can have happened then.
import type { Model } from './merchant.js';
import type { SimService } from './service.js';

const DAY_MS = 86_400_000;

export interface Nights {
  /** The day (days since the epoch) the clock stands in, not yet queued. */
  current: number;
  pending: { merchant: number; account: string; day: number; tries: number }[];
  runs: number;
}

export const nightsFrom = (nowMs: number): Nights => ({ current: Math.floor(nowMs / DAY_MS), pending: [], runs: 0 });

/** Queues the nights passed and runs what is queued; answers a line for the trace, or undefined when nothing ran. */
export async function reconcileNights(s: SimService, model: Model, nights: Nights): Promise<string | undefined> {
  const today = Math.floor(Date.now() / DAY_MS);
  if (nights.current < today) {
    const day = nights.current;
    model.merchants.forEach((m, merchant) => m.connectorAccounts.forEach((a) => nights.pending.push({ merchant, account: a.id, day, tries: 0 })));
    nights.current = today;
  }
  if (!nights.pending.length) return undefined;
  const left: Nights['pending'] = [];
  let ran = 0;
  for (const job of nights.pending) {
    const m = model.merchants[job.merchant]!;
    job.tries += 1;
    const body = { connector_account: job.account, period_start: new Date(job.day * DAY_MS).toISOString(), period_end: new Date((job.day + 1) * DAY_MS).toISOString() };
    const a = await s.request('POST', '/v1/reconciliation-runs', { key: m.key, body, idempotencyKey: `rec-${job.account}-${job.day}-${job.tries}` });
    if (a === 'crashed' || a.status === 409 || a.status >= 500) left.push(job);
    else if (a.status === 201) ran += 1;
    else model.wrongAnswers.push(`reconciliation of ${job.account} for ${body.period_start} refused: ${a.status} ${a.text}`);
  }
  nights.pending = left;
  nights.runs += ran;
  return `reconciliation: ${ran} run(s)${left.length ? `, ${left.length} to ask again` : ''}`;
}
