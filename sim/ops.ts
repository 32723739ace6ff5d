// What the simulated merchants do: random but valid API sequences (and some the API must refuse:
// refunds above what remains, payouts above the balance, captures above what an authorisation
// holds, voids of what holds no authorisation), each money-moving POST under an
// Idempotency-Key that may be sent again later, whatever became of the first try.
import { TEST_CARDS } from '../src/connectors/simulator/cards.js';
import type { CrashPoint } from '../src/config/payments.js';
import { TEST_BANK_ACCOUNTS, type TestBankAccountEnding } from '../src/domain/bank-accounts/test-accounts.js';
import type { Rng } from './rng.js';
import type { Answer, SimService } from './service.js';
import { at, card, post, record, type Merchant, type Model, type Op } from './merchant.js';
import { DISPUTE_OPS, refundChecked } from './ops-disputes.js';
import { ROUTING_OPS } from './ops-routing.js';

export type { Merchant, Model, Sent } from './merchant.js';

// The cards the simulated merchants pay with: the test cards of docs/test-mode.md as the seeds were
// recorded against. A card added to the table later is left out, so that every seed draws the same
// card at the same step as before (the simulation's recorded findings stay reproducible).
const LATER_CARDS: ReadonlySet<string> = new Set(['4000000000003246', '4000000000000580']);
const CARDS = Object.keys(TEST_CARDS).filter((number) => !LATER_CARDS.has(number));
/** Declined at simulator_a only (generic), do_not_retry everywhere, retry_later everywhere: what cascades and their limits are about. */
const CASCADE_CARDS = ['4000000000000440', '4000000000000853', '4000000000009995'];
/** Succeeds, then is disputed within seconds (docs/disputes.md). */
const DISPUTED_CARD = '4000000000000259';
const ENDINGS = Object.keys(TEST_BANK_ACCOUNTS) as TestBankAccountEnding[];
const CURRENCIES = ['EUR', 'EUR', 'EUR', 'GBP'];
const EVENT_SETS = [['*'], ['payment.succeeded', 'payment.failed', 'payment_order.paid'], ['payout.paid', 'payout.failed', 'refund.succeeded', 'refund.failed'], ['*']];

/** The same request again under the same key: a final answer must come back byte for byte. */
async function retry(s: SimService, model: Model, rng: Rng) {
  if (model.sent.length === 0) return;
  // A merchant whose request got no answer sends it again, as the API asks; others retry at random.
  const sent = model.unanswered.length && rng.chance(0.8) ? model.unanswered.shift()! : model.sent[model.sent.length - 1 - rng.int(Math.min(model.sent.length, 12))]!;
  const again = await s.request('POST', sent.path, { key: sent.merchant.key, body: sent.body, idempotencyKey: sent.idempotencyKey });
  if (again === 'crashed') return void model.unanswered.push(sent);
  if (again.status === 409 || again.status >= 500) model.unanswered.push(sent);
  record(model, again);
  const first = sent.answer;
  const final = (a: Answer) => a.status < 500 && a.status !== 409;
  const kept = Date.now() - (sent.answeredAtMs ?? 0) < s.config.idempotencyRetentionS * 1000;
  if (first && kept && final(first) && final(again) && (again.status !== first.status || again.text !== first.text)) {
    model.violations.push(`replaysAnswerTheSameBytes: ${sent.path} key ${sent.idempotencyKey} answered ${first.status} then ${again.status}`, `  first: ${first.text}`, `  again: ${again.text}`);
  }
  if (!first || !final(first) || !kept) Object.assign(sent, { answer: again, answeredAtMs: Date.now() });
}


const PAYMENT_POINTS: CrashPoint[] = ['payment_created', 'payment_connector_answered'];

async function order(s: SimService, model: Model, rng: Rng, m: Merchant): Promise<string | undefined> {
  const a = await post(s, model, rng, m, '/v1/payment-orders', { amount: rng.between(100, 40_000), currency: rng.pick(CURRENCIES), reference: `o${model.keySeq}`, customer: { email: 'c@example.com', name: 'C' } });
  if (a?.status !== 201) return undefined;
  m.orders.push(a.body.id);
  return a.body.id;
}

const ops: [number, string, Op][] = [
  [10, 'order', async (s, model, rng, m) => void (await order(s, model, rng, m))],
  [18, 'pay', async (s, model, rng, m, crash) => {
    // Most pay an order of their own, made just before, so that most payments reach a processor.
    const payOrder = m.orders.length && rng.chance(0.3) ? rng.pick(m.orders) : await order(s, model, rng, m);
    if (!payOrder) return;
    const roll = rng.float();
    const number = roll < 0.3 ? '4242424242424242' : roll < 0.5 ? rng.pick(CASCADE_CARDS) : roll < 0.7 ? DISPUTED_CARD : rng.pick(CARDS);
    const body = {
      payment_order: payOrder,
      payment_method: card(number),
      ...(rng.chance(0.5) ? { return_url: 'https://shop.example.com/back' } : {}),
      // Some authorise now and capture later.
      ...(rng.chance(0.3) ? { capture_method: 'manual' } : {}),
    };
    const a = await post(s, model, rng, m, '/v1/payments', body, at(rng, crash, PAYMENT_POINTS));
    if (a && a.status < 300) m.payments.push({ id: a.body.id, amount: a.body.amount, succeeded: a.body.status === 'succeeded', authorized: a.body.status === 'requires_capture' });
  }],
  [2, 'customer', async (s, model, rng, m) => {
    const a = await post(s, model, rng, m, '/v1/customers', { email: `c${model.keySeq}@example.com`, reference: `c${model.keySeq}` });
    if (a?.status === 201) m.customers.push(a.body.id);
  }],
  [4, 'save', async (s, model, rng, m, crash) => {
    if (!m.orders.length || !m.customers.length) return;
    const number = rng.chance(0.7) ? '4242424242424242' : rng.pick(CARDS);
    const body = { payment_order: rng.pick(m.orders), payment_method: card(number), customer: rng.pick(m.customers), setup_future_usage: 'off_session' };
    const a = await post(s, model, rng, m, '/v1/payments', body, at(rng, crash, PAYMENT_POINTS));
    if (a && a.status < 300) m.payments.push({ id: a.body.id, amount: a.body.amount, succeeded: a.body.status === 'succeeded' });
    if (a?.body?.payment_method_saved) m.savedCards.push(a.body.payment_method_saved);
  }],
  [4, 'off-session', async (s, model, rng, m, crash) => {
    if (!m.orders.length || !m.savedCards.length) return;
    const method = { type: 'saved_card', saved_card: { id: rng.pick(m.savedCards) } };
    const body = { payment_order: rng.pick(m.orders), payment_method: method, off_session: true, off_session_reason: rng.pick(['unscheduled', 'subscription']) };
    const a = await post(s, model, rng, m, '/v1/payments', body, at(rng, crash, PAYMENT_POINTS));
    if (a && a.status < 300) m.payments.push({ id: a.body.id, amount: a.body.amount, succeeded: a.body.status === 'succeeded' });
  }],
  [4, 'debit', async (s, model, rng, m, crash) => {
    if (!m.orders.length || !m.mandates.length) return;
    const a = await post(s, model, rng, m, '/v1/payments', { payment_order: rng.pick(m.orders), payment_method: { type: 'mandate', mandate: rng.pick(m.mandates) } }, at(rng, crash, PAYMENT_POINTS));
    if (a && a.status < 300) m.payments.push({ id: a.body.id, amount: a.body.amount });
  }],
  [8, 'refund', async (s, model, rng, m, crash) => {
    if (!m.payments.length) return;
    const succeeded = m.payments.filter((x) => x.succeeded);
    const p = succeeded.length && rng.chance(0.8) ? rng.pick(succeeded) : rng.pick(m.payments);
    // Some ask for more than the payment: the API must refuse them.
    const roll = rng.float();
    const amount = roll < 0.3 ? undefined : roll < 0.8 ? rng.between(1, p.amount) : p.amount + rng.between(1, p.amount);
    await refundChecked(s, model, rng, m, { payment: p.id, ...(amount === undefined ? {} : { amount }) }, at(rng, crash, ['refund_created']));
  }],
  [6, 'capture', async (s, model, rng, m, crash) => {
    if (!m.payments.length) return;
    const authorized = m.payments.filter((x) => x.authorized);
    const p = authorized.length && rng.chance(0.85) ? rng.pick(authorized) : rng.pick(m.payments);
    // Partial (some of them not final, for more captures later), all that is left, or more than the
    // payment: the API must refuse what the authorisation does not hold.
    const roll = rng.float();
    const amount = roll < 0.3 ? undefined : roll < 0.85 ? rng.between(1, Math.max(1, Math.floor(p.amount / 3))) : p.amount + rng.between(1, p.amount);
    const body = { ...(amount === undefined ? {} : { amount }), final_capture: rng.chance(0.4) };
    const a = await post(s, model, rng, m, `/v1/payments/${p.id}/capture`, body, at(rng, crash, ['capture_created', 'capture_connector_answered']));
    if (a?.status === 201 && body.final_capture) p.authorized = false;
  }],
  [3, 'void', async (s, model, rng, m, crash) => {
    if (!m.payments.length) return;
    const authorized = m.payments.filter((x) => x.authorized);
    // Mostly an authorisation; sometimes anything else, which the API must refuse (422) moving nothing.
    const p = authorized.length && rng.chance(0.85) ? rng.pick(authorized) : rng.pick(m.payments);
    const body = rng.chance(0.5) ? {} : { cancellation_reason: rng.pick(['requested_by_customer', 'duplicate', 'fraudulent', 'abandoned']) };
    const a = await post(s, model, rng, m, `/v1/payments/${p.id}/cancel`, body, at(rng, crash, ['void_created', 'void_connector_answered']));
    if (a?.status === 200 && a.body.status === 'canceled') p.authorized = false;
  }],
  [4, 'fund', async (s, model, rng, m) => {
    await post(s, model, rng, m, '/v1/test-helpers/balance/fund', { amount: rng.between(1000, 20_000), currency: rng.pick(CURRENCIES) });
  }],
  [3, 'beneficiary', async (s, model, rng, m) => {
    const format = rng.pick(['iban', 'gb'] as const);
    const a = await post(s, model, rng, m, '/v1/beneficiaries', { name: 'Ada', type: 'individual', bank_account: TEST_BANK_ACCOUNTS[rng.pick(ENDINGS)][format] });
    if (a?.status === 201) m.beneficiaries.push({ id: a.body.id, currency: format === 'iban' ? 'EUR' : 'GBP' });
  }],
  [7, 'payout', async (s, model, rng, m) => {
    if (!m.beneficiaries.length) return;
    const b = rng.pick(m.beneficiaries);
    // Some ask for more than the balance holds: the API must refuse them.
    const amount = rng.chance(0.7) ? rng.between(100, 20_000) : rng.between(20_000, 90_000);
    await post(s, model, rng, m, '/v1/payouts', { beneficiary: b.id, amount, currency: b.currency, reference: `p${model.keySeq}` });
  }],
  [3, 'mandate', async (s, model, rng, m, crash) => {
    const ending = rng.pick(ENDINGS);
    const a = await post(s, model, rng, m, '/v1/mandates', {
      customer: { email: 'payer@example.com', name: 'Erika' },
      bank_account: { country: 'DE', currency: 'EUR', iban: TEST_BANK_ACCOUNTS[ending].iban.iban },
      scheme: 'sepa_core', currency: 'EUR', reference: `m${model.keySeq}`,
    }, at(rng, crash, ['mandate_created']));
    if (a && a.status < 300) m.mandates.push(a.body.id);
  }],
  [3, 'endpoint', async (s, model, rng, m) => {
    const url = `https://${m.name}-r${rng.int(3)}.receivers.example/hooks`;
    const a = await post(s, model, rng, m, '/v1/webhook-endpoints', { url, enabled_events: rng.pick(EVENT_SETS) });
    if (a?.status === 201) m.endpoints.push(a.body.id);
  }],
  [2, 'endpoint-change', async (s, model, rng, m) => {
    if (!m.endpoints.length) return;
    const id = rng.pick(m.endpoints);
    const change = rng.pick(['disable', 'enable', 'events', 'delete'] as const);
    const body = change === 'disable' ? { status: 'disabled' } : change === 'enable' ? { status: 'enabled' } : { enabled_events: rng.pick(EVENT_SETS) };
    const a = change === 'delete'
      ? await s.request('DELETE', `/v1/webhook-endpoints/${id}`, { key: m.key })
      : await s.request('PATCH', `/v1/webhook-endpoints/${id}`, { key: m.key, body });
    if (a !== 'crashed') record(model, a);
    if (change === 'delete') m.endpoints = m.endpoints.filter((e) => e !== id);
  }],
  [3, 'cancel', async (s, model, rng, m) => {
    if (m.orders.length) await post(s, model, rng, m, `/v1/payment-orders/${rng.pick(m.orders)}/cancel`, undefined);
  }],
  [3, 'resolve', async (s, model, rng, m) => {
    if (m.payments.length) await post(s, model, rng, m, `/v1/test-helpers/payments/${rng.pick(m.payments).id}/resolve`, { outcome: rng.pick(['succeeded', 'failed']) });
  }],
  [8, 'retry', async (s, model, rng) => retry(s, model, rng)],
  ...ROUTING_OPS,
  ...DISPUTE_OPS,
];

const TOTAL = ops.reduce((sum, [w]) => sum + w, 0);

/** One merchant operation; `crash`: the process dies at a crash point the seed picked, if the request gets there. */
export async function merchantStep(s: SimService, model: Model, rng: Rng, crash: boolean): Promise<string> {
  const m = rng.pick(model.merchants);
  let roll = rng.int(TOTAL);
  const [, name, op] = ops.find(([w]) => (roll -= w) < 0)!;
  const crashes = s.crashes;
  await op(s, model, rng, m, crash);
  return `${m.name} ${name}${s.crashes > crashes ? ` crashed@${s.lastCrashPoint ?? 'before answering'}` : ''}`;
}
