// The simulated merchants' side of disputes (docs/disputes.md): the disputed test card's
// chargebacks answered with evidence that wins or loses, accepted, or only saved; some answers to
// disputes that no longer wait for one, which the API must refuse. And refunds, checked against
// the payment's disputes as they stand when the refund is asked for: refused (422 charge_disputed)
// while a dispute is open, lost or accepted, and never refused so otherwise.
import { sql } from 'drizzle-orm';
import type { CrashPoint } from '../src/config/payments.js';
import { parseId } from '../src/kernel/ids.js';
import { at, post, type Merchant, type Model, type Op } from './merchant.js';
import { rows } from './query.js';
import type { Rng } from './rng.js';
import type { SimService } from './service.js';

/** The statuses in which a dispute refuses its payment's refunds: open, lost or accepted (all but won). */
export const REFUSES_REFUNDS = new Set(['warning_needs_response', 'needs_response', 'under_review', 'lost', 'accepted']);
const WAITING = new Set(['warning_needs_response', 'needs_response']);

const EVIDENCE = {
  win: { product_description: 'A pair of boots', uncategorized_text: 'winning_evidence: signed delivery receipt' },
  lose: { product_description: 'A pair of boots', uncategorized_text: 'losing_evidence: no proof of delivery' },
};

/** A refund asked for, its answer checked against the payment's disputes as they stood just before. */
export async function refundChecked(s: SimService, model: Model, rng: Rng, m: Merchant, body: { payment: string; amount?: number }, crashAt?: CrashPoint) {
  const uuid = parseId('pay', body.payment);
  const open = uuid
    ? await rows(s.database.db, sql`SELECT id::text, status FROM disputes WHERE account_id = ${parseId('acct', m.accountId)} AND payment_id = ${uuid}`)
    : [];
  const refusing = open.filter((d) => REFUSES_REFUNDS.has(d.status));
  const a = await post(s, model, rng, m, '/v1/refunds', body, crashAt);
  if (!a) return;
  const code = (a.body as { error?: { code?: string } } | undefined)?.error?.code;
  if (refusing.length && a.status < 300) model.wrongAnswers.push(`refund of ${body.payment} answered ${a.status} while its dispute was ${refusing.map((d) => d.status).join(', ')}`);
  if (!refusing.length && code === 'charge_disputed') model.wrongAnswers.push(`refund of ${body.payment} refused charge_disputed, its disputes being ${open.map((d) => d.status).join(', ') || 'none'}`);
}

const DISPUTE_POINTS: CrashPoint[] = ['dispute_response_created', 'dispute_response_connector_answered'];

/** Answers one of the merchant's disputes: mostly one waiting for an answer, sometimes one that no longer does. */
const answerDispute: Op = async (s, model, rng, m, crash) => {
  const list = await s.request('GET', '/v1/disputes?limit=100', { key: m.key });
  if (list === 'crashed' || list.status !== 200) return;
  const all = (list.body as { data: { id: string; status: string }[] }).data;
  const waiting = all.filter((d) => WAITING.has(d.status));
  if (!all.length) return;
  const d = waiting.length && rng.chance(0.85) ? rng.pick(waiting) : rng.pick(all);
  const roll = rng.float();
  const a =
    roll < 0.12
      ? await post(s, model, rng, m, `/v1/disputes/${d.id}/accept`, undefined, at(rng, crash, DISPUTE_POINTS))
      : await post(s, model, rng, m, `/v1/disputes/${d.id}/evidence`, { evidence: roll < 0.55 ? EVIDENCE.win : EVIDENCE.lose, submit: rng.chance(0.8) }, at(rng, crash, DISPUTE_POINTS));
  // A dispute that no longer waits for an answer refuses one, and is left as it was.
  if (a && !WAITING.has(d.status) && a.status < 300) model.wrongAnswers.push(`dispute ${d.id} (${d.status}) took an answer: ${a.status}`);
};

export const DISPUTE_OPS: [number, string, Op][] = [[4, 'dispute', answerDispute]];
