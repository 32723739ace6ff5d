// Stripe's settlement records: the balance transactions of the account (GET /v1/balance_transactions,
// created in the period, 100 a page, each with its source expanded so that the charge names its
// PaymentIntent and a refund carries our refund id in its metadata). In our words
// (src/connectors/settlements.ts): charges are payments (their PaymentIntent is the object we know),
// refunds refunds, a dispute's withdrawal and reinstatement (adjustments of reporting category
// dispute / dispute_reversal) the dispute; Stripe's own payouts to the merchant's bank and fees
// billed on their own are `other` and `fee`.
import Stripe from 'stripe';
import { beforeAbort, TransportError, type ConnectorError, type SettlementKind, type SettlementPeriod, type SettlementRecord } from '../types.js';
import { callErrorOf } from './mapping.js';
import { fromStripeAmount } from './money.js';

const PAGE = 100;

type Source = { id?: string; object?: string; payment_intent?: string | { id: string } | null; metadata?: Record<string, string> | null } | string | null;

function kindOf(bt: Stripe.BalanceTransaction): SettlementKind {
  if (bt.type === 'charge' || bt.type === 'payment') return 'payment';
  if (bt.type === 'refund' || bt.type === 'payment_refund') return 'refund';
  if (bt.reporting_category === 'dispute' || bt.reporting_category === 'dispute_reversal') return 'dispute';
  if (bt.type === 'stripe_fee' || bt.reporting_category === 'fee') return 'fee';
  return 'other';
}

/** `keys`: the metadata keys under which the connector sends our ids (payment_id, refund_id). */
export function recordOf(bt: Stripe.BalanceTransaction, keys: { payment: string; refund: string }): SettlementRecord {
  const source = bt.source as Source;
  const object = typeof source === 'string' ? { id: source } : (source ?? {});
  const kind = kindOf(bt);
  const intent = typeof object.payment_intent === 'string' ? object.payment_intent : (object.payment_intent?.id ?? null);
  const reference = object.metadata?.[kind === 'refund' ? keys.refund : keys.payment] ?? null;
  const amount = fromStripeAmount(bt.amount, bt.currency);
  return {
    recordId: bt.id,
    kind,
    reference,
    // A charge is known to us by its PaymentIntent, a refund and a dispute by their own ids.
    objectReference: kind === 'payment' ? intent : (object.id ?? null),
    amount: kind === 'fee' ? 0 : amount,
    currency: bt.currency.toUpperCase(),
    fee: kind === 'fee' ? -amount : fromStripeAmount(bt.fee, bt.currency),
    at: new Date(bt.created * 1000),
  };
}

/** Every balance transaction created in `period`, page after page. */
export async function balanceTransactions(stripe: Stripe, period: SettlementPeriod, keys: { payment: string; refund: string }, signal: AbortSignal): Promise<SettlementRecord[] | ConnectorError> {
  const records: SettlementRecord[] = [];
  const created = { gte: Math.floor(+period.from / 1000), lt: Math.ceil(+period.to / 1000) };
  let after: string | undefined;
  try {
    for (;;) {
      if (signal.aborted) throw new TransportError('timeout', 'Stripe did not list the balance transactions in time');
      const params: Stripe.BalanceTransactionListParams = { created, limit: PAGE, expand: ['data.source'], ...(after ? { starting_after: after } : {}) };
      const page = await beforeAbort(stripe.balanceTransactions.list(params), signal, 'Stripe did not answer in time');
      records.push(...page.data.map((bt) => recordOf(bt, keys)));
      if (!page.has_more || page.data.length === 0) return records;
      after = page.data[page.data.length - 1]!.id;
    }
  } catch (err) {
    if (err instanceof TransportError) throw err;
    return callErrorOf(err);
  }
}
