// The backtest's traffic model (docs/backtest.md states each assumption and its source): a seeded
// stream of card payments from issuers per country and brand, and how the two simulated processors
// treat them — the issuers' answers, an outage and a degraded issuer segment on the first-priority
// processor (simulator_a), soft declines that recover elsewhere at the published rate, and each
// call's latency. It plugs into the processors' transport (sim/processors.ts ProcessorBehaviour):
// the simulators still book every charge and answer it, and the connectors read their answers.
//
// Every draw about one payment at one processor comes from a generator of its own (seed, payment,
// processor), so that each strategy faces the same issuers: payment 17 at simulator_b gets the
// same answer whichever strategy sent it there, and the strategies differ only by where they send.
import type { SimChargeRequest } from '../../src/connectors/simulator/protocol.js';
import type { ProcessorProfile } from '../../src/connectors/simulator/profiles.js';
import type { ProcessorBehaviour } from '../processors.js';
import { createRng, type Rng } from '../rng.js';

export const FIRST = 'simulator_a';
export const SECOND = 'simulator_b';

/** Each processor's price (its settlement report's fees): the first-priority one is the cheaper, which is why it is first. */
export const PROFILES: readonly ProcessorProfile[] = [
  { name: FIRST, errorsOn: [], fee: { bps: 120, fixedMinor: 8 } },
  { name: SECOND, errorsOn: [], fee: { bps: 160, fixedMinor: 12 } },
];

export interface Issuer {
  country: string;
  brand: 'visa' | 'mastercard';
  currency: string;
  /** Share of the payments. */
  share: number;
  /** How often the issuer means to approve a payment of its cards. */
  approval: number;
}

export const ISSUERS: readonly Issuer[] = [
  { country: 'DE', brand: 'visa', currency: 'EUR', share: 0.18, approval: 0.9 },
  { country: 'DE', brand: 'mastercard', currency: 'EUR', share: 0.1, approval: 0.89 },
  { country: 'FR', brand: 'visa', currency: 'EUR', share: 0.14, approval: 0.89 },
  { country: 'ES', brand: 'mastercard', currency: 'EUR', share: 0.08, approval: 0.86 },
  { country: 'GB', brand: 'visa', currency: 'GBP', share: 0.16, approval: 0.88 },
  { country: 'GB', brand: 'mastercard', currency: 'GBP', share: 0.09, approval: 0.87 },
  { country: 'US', brand: 'visa', currency: 'USD', share: 0.15, approval: 0.85 },
  { country: 'US', brand: 'mastercard', currency: 'USD', share: 0.1, approval: 0.84 },
];

/** Of the issuers' declines: soft (a quarter: Primer), insufficient funds, and never-retry (lost, stolen, closed). */
export const DECLINE_MIX = { soft: 0.25, insufficientFunds: 0.45, doNotRetry: 0.3 } as const;
/** A soft-declined payment retried at once elsewhere is approved this often (a fifth: Primer). */
export const SOFT_RECOVERY = 0.2;
/** The degraded issuer segment: GB-issued cards at the first-priority processor are declined (do not honour) this much more often. */
export const DEGRADED = { processor: FIRST, country: 'GB', extraDeclines: 0.3 } as const;
/** The second processor declines (do not honour) this share of what the issuers would approve: it is slightly worse, as well as dearer. */
export const SECOND_EXTRA_DECLINES = 0.03;
/** The outage of the first-priority processor, as shares of the stream: from 40 % to 55 % of the payments' arrivals. */
export const OUTAGE = { processor: FIRST, from: 0.4, to: 0.55, errorShare: 0.6 } as const;
/** Mean gap between two payments' arrivals (exponential gaps): 600 an hour, the window success_rate reads. */
export const MEAN_GAP_MS = 6000;
/** Latency of a call (log-normal): median per processor, spread, a fast error, and a ceiling under CONNECTOR_TIMEOUT_MS (1 s in sim/). */
export const LATENCY = { medianMs: { [FIRST]: 280, [SECOND]: 320 } as Record<string, number>, sigma: 0.35, errorMs: 60, maxMs: 950 };

/** The test cards that make the simulators answer as the issuer did (docs/test-mode.md). */
const ANSWER_CARD = { approve: '4242424242424242', doNotHonour: '4000000000000002', insufficientFunds: '4000000000009995', doNotRetry: '4000000000000853' } as const;

type Intent = 'approve' | 'soft' | 'insufficient_funds' | 'do_not_retry';

export interface StreamPayment {
  index: number;
  /** Arrival, ms after the stream's start. */
  atMs: number;
  issuer: Issuer;
  amount: number;
  intent: Intent;
}

export interface Stream {
  payments: StreamPayment[];
  /** The outage, in ms after the stream's start: [from, to). */
  outage: { fromMs: number; toMs: number };
}

function pickIssuer(rng: Rng): Issuer {
  let u = rng.float();
  for (const issuer of ISSUERS) if ((u -= issuer.share) < 0) return issuer;
  return ISSUERS[ISSUERS.length - 1]!;
}

function intentOf(rng: Rng, issuer: Issuer): Intent {
  if (rng.chance(issuer.approval)) return 'approve';
  const u = rng.float();
  return u < DECLINE_MIX.soft ? 'soft' : u < DECLINE_MIX.soft + DECLINE_MIX.insufficientFunds ? 'insufficient_funds' : 'do_not_retry';
}

/** The seed's payments: the same for every strategy. */
export function paymentStream(seed: number, count: number): Stream {
  const rng = createRng(seed).fork('stream');
  let atMs = 0;
  const payments: StreamPayment[] = [];
  for (let index = 0; index < count; index++) {
    atMs += Math.max(1, Math.round(-Math.log(1 - rng.float()) * MEAN_GAP_MS));
    const issuer = pickIssuer(rng);
    // Log-uniform between 5.00 and 300.00 of the currency.
    const amount = Math.round(Math.exp(Math.log(500) + rng.float() * (Math.log(30_000) - Math.log(500))));
    payments.push({ index, atMs, issuer, amount, intent: intentOf(rng, issuer) });
  }
  const at = (share: number) => payments[Math.min(count - 1, Math.floor(count * share))]?.atMs ?? 0;
  return { payments, outage: { fromMs: at(OUTAGE.from), toMs: at(OUTAGE.to) } };
}

function latency(rng: Rng, processor: string): number {
  // Box–Muller: one normal draw from two uniforms.
  const normal = Math.sqrt(-2 * Math.log(1 - rng.float())) * Math.cos(2 * Math.PI * rng.float());
  return Math.min(LATENCY.maxMs, Math.round((LATENCY.medianMs[processor] ?? 300) * Math.exp(LATENCY.sigma * normal)));
}

export interface Traffic extends ProcessorBehaviour {
  /** The payment whose charge requests come next (the backtest sends one payment at a time). */
  begin(payment: StreamPayment): void;
}

/**
 * The processors' behaviour for `stream`. The simulators know a card only by its test number, so
 * the model knows whose card a request carries from the payment in flight (`begin`), as an
 * issuer knows its own cards by their first digits.
 */
export function traffic(seed: number, stream: Stream): Traffic {
  const root = createRng(seed).fork('issuers');
  let current: StreamPayment | undefined;
  let softDeclined = false;
  return {
    begin(payment) {
      current = payment;
      softDeclined = false;
    },
    charge(processor: string, _body: SimChargeRequest) {
      const p = current!;
      // Always the same draws in the same order, whatever the outcome: the answers stay aligned across strategies.
      const rng = root.fork(`${p.index}:${processor}`);
      const [uOutage, uRoute, uRecovery] = [rng.float(), rng.float(), rng.float()];
      const latencyMs = latency(rng, processor);
      if (processor === OUTAGE.processor && p.atMs >= stream.outage.fromMs && p.atMs < stream.outage.toMs) {
        // Down: most requests fail before acting (HTTP 500), the rest are refused as if the issuers were unreachable.
        if (uOutage < OUTAGE.errorShare) return { latencyMs: LATENCY.errorMs, fault: 'error_500' as const };
        return { latencyMs, pan: ANSWER_CARD.doNotHonour };
      }
      const degraded = processor === DEGRADED.processor && p.issuer.country === DEGRADED.country && uRoute < DEGRADED.extraDeclines;
      const worse = processor === SECOND && uRoute < SECOND_EXTRA_DECLINES;
      if (p.intent === 'approve') return { latencyMs, pan: degraded || worse ? ANSWER_CARD.doNotHonour : ANSWER_CARD.approve };
      if (p.intent === 'insufficient_funds') return { latencyMs, pan: ANSWER_CARD.insufficientFunds };
      if (p.intent === 'do_not_retry') return { latencyMs, pan: ANSWER_CARD.doNotRetry };
      // Soft: declined the first time the issuer sees it; an immediate retry elsewhere recovers a fifth.
      const recovers = softDeclined && !degraded && uRecovery < SOFT_RECOVERY;
      softDeclined = true;
      return { latencyMs, pan: recovers ? ANSWER_CARD.approve : ANSWER_CARD.doNotHonour };
    },
  };
}
