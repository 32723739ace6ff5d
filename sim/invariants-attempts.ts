// The invariants of cascades and routing (docs/declines.md): what the payments recorded of their
// attempts, checked against the simulated processors' own books (every charge they received, under
// the payment's id for attempt 1 and `pay_…_n` for attempt n > 1), so that a charge the service
// sent and forgot to record is seen too.
import { sql } from 'drizzle-orm';
import { toPublicId } from '../src/kernel/ids.js';
import { publicIdOfReference } from '../src/movement/kind.js';
import { DECLINE_OF_REFUSAL } from '../src/connectors/simulator/declines.js';
import type { Attempt } from '../src/connectors/router.js';
import { json, rows, type Invariant, type Row } from './query.js';

/** A decline after which nothing may be tried again with the same card data (docs/declines.md). */
const FINAL = new Set(['do_not_retry', 'fix_data']);
const declineTypeOf = (refusal: string | null | undefined) => (refusal ? (DECLINE_OF_REFUSAL as Record<string, { declineType: string }>)[refusal]?.declineType : undefined);
const attemptOf = (reference: string) => Number(/_([2-9])$/.exec(reference)?.[1] ?? 1);

/** Every charge the processors hold for a payment (verifications and mandates' own objects aside). */
async function charges(s: Parameters<Invariant>[0]): Promise<Row[]> {
  return (await rows(s.database.db, sql`
    SELECT processor, reference, object_id, body->>'state' AS state, body->>'refusal' AS refusal, body->>'created_at' AS created_at
    FROM simulator_objects WHERE kind = 'charge' AND reference LIKE 'pay\_%'`)).map((c) => ({ ...c, payment: publicIdOfReference(c.reference), attempt: attemptOf(c.reference) }));
}

/**
 * At most one attempt of a payment succeeded: in what the payment recorded (one `succeeded`
 * attempt at most), and at the processors (one charge at most that was not refused, over every
 * processor and every attempt's reference).
 */
export const atMostOneSuccessfulAttempt: Invariant = async (s) => {
  const found: string[] = [];
  for (const p of await rows(s.database.db, sql`SELECT id::text, attempts FROM payments`)) {
    const ok = json<Attempt[]>(p.attempts).filter((a) => a.outcome === 'succeeded');
    if (ok.length > 1) found.push(`payment ${toPublicId('pay', p.id)} recorded ${ok.length} succeeded attempts (${ok.map((a) => a.connector).join(', ')})`);
  }
  const taken = new Map<string, string[]>();
  for (const c of await charges(s)) if (c.state !== 'REFUSED') taken.set(c.payment, [...(taken.get(c.payment) ?? []), `${c.reference} at ${c.processor} (${c.state})`]);
  for (const [payment, list] of taken) if (list.length > 1) found.push(`payment ${payment} holds ${list.length} charges not refused: ${list.join(', ')}`);
  return found;
};

/**
 * Nothing is tried after a `do_not_retry` or `fix_data` decline: no attempt of the payment recorded
 * after it, and no charge of a later attempt of the payment at any processor.
 */
export const noAttemptAfterFinalDecline: Invariant = async (s) => {
  const found: string[] = [];
  for (const p of await rows(s.database.db, sql`SELECT id::text, attempts FROM payments`)) {
    const attempts = json<Attempt[]>(p.attempts);
    const at = attempts.findIndex((a) => a.outcome === 'declined' && FINAL.has(a.decline_type ?? ''));
    if (at >= 0 && at < attempts.length - 1) {
      found.push(`payment ${toPublicId('pay', p.id)}: ${attempts.length - 1 - at} attempt(s) after ${attempts[at]!.connector} declined it ${attempts[at]!.decline_type}`);
    }
  }
  const all = await charges(s);
  for (const c of all.filter((x) => x.state === 'REFUSED' && FINAL.has(declineTypeOf(x.refusal) ?? ''))) {
    const later = all.filter((x) => x.payment === c.payment && x.attempt > c.attempt);
    if (later.length) found.push(`${c.processor} refused ${c.reference} (${c.refusal}), and ${later.map((x) => `${x.reference} at ${x.processor}`).join(', ')} came after`);
  }
  return found;
};

const DAY_MS = 86_400_000;
/** The networks' limits (docs/declines.md "Reattempt limits"), by brand: Mastercard's, else Visa's. */
const LIMITS: Record<string, { max: number; windowMs: number }> = { mastercard: { max: 10, windowMs: DAY_MS }, visa: { max: 15, windowMs: 30 * DAY_MS } };
const MEMORY_MS = 30 * DAY_MS;

/**
 * The networks' reattempt limits, recounted from the processors' books (what the issuers saw), not
 * from the service's own count: per account, mode and card, a reattempt is a charge of a cascaded
 * attempt (n > 1), or the charge of an off-session payment of a card an issuer refused within the
 * 30 days before. No reattempt within 30 days after a `do_not_retry` refusal of the card, and never
 * more than the brand's limit within its window. Refusals at the same instant by another payment
 * are not counted as before (the clock stands still within a step, so their order is unknown).
 */
export const reattemptLimitsRespected: Invariant = async (s) => {
  const cards = new Map(
    (await rows(s.database.db, sql`
      SELECT id::text, account_id::text AS account, livemode, payment_method->'card'->>'fingerprint' AS fingerprint, payment_method->'card'->>'brand' AS brand,
        (payment_method->'saved_card'->>'off_session') IS NOT NULL AS off_session
      FROM payments WHERE payment_method->'card'->>'fingerprint' IS NOT NULL`)).map((p) => [toPublicId('pay', p.id), p]),
  );
  const byCard = new Map<string, (Row & { at: number })[]>();
  for (const c of await charges(s)) {
    const p = cards.get(c.payment);
    if (!p) continue;
    const key = `${p.account}/${p.livemode}/${p.fingerprint}`;
    byCard.set(key, [...(byCard.get(key) ?? []), { ...c, at: Date.parse(c.created_at), offSession: p.off_session, brand: p.brand }]);
  }
  const found: string[] = [];
  for (const [card, list] of byCard) {
    const refusals = list.filter((c) => c.state === 'REFUSED' && declineTypeOf(c.refusal) !== undefined && declineTypeOf(c.refusal) !== 'processor');
    const before = (r: Row & { at: number }, c: Row & { at: number }) => (r.payment === c.payment ? r.attempt < c.attempt : r.at < c.at) && r.at >= c.at - MEMORY_MS;
    const reattempts = list.filter((c) => c.attempt > 1 || (c.offSession && refusals.some((r) => before(r, c))));
    for (const c of reattempts) {
      const final = refusals.find((r) => before(r, c) && declineTypeOf(r.refusal) === 'do_not_retry');
      if (final) found.push(`card ${card}: ${c.reference} sent to ${c.processor} after ${final.processor} refused ${final.reference} (${final.refusal}, do_not_retry)`);
      const limit = LIMITS[c.brand] ?? LIMITS.visa!;
      const within = reattempts.filter((x) => x.at <= c.at && x.at >= c.at - limit.windowMs).length;
      if (within > limit.max) found.push(`card ${card} (${c.brand}): ${within} reattempts within ${limit.windowMs / DAY_MS} day(s) up to ${c.reference}, above ${limit.max}`);
    }
  }
  return [...new Set(found)];
};

export const ATTEMPT_INVARIANTS: Record<string, Invariant> = { atMostOneSuccessfulAttempt, noAttemptAfterFinalDecline, reattemptLimitsRespected };
