// The fake Stripe's disputes (stripe.ts holds them): GET /v1/disputes/{id}, the update that saves
// text evidence and, with submit=true, submits it (https://docs.stripe.com/api/disputes/update), and
// close (https://docs.stripe.com/api/disputes/close). Parameters are checked against Stripe's
// published dispute object (its `evidence` keys, test/support/fixtures/stripe/objects.json): an
// unknown one is refused as Stripe refuses it. A dispute no longer waiting for evidence, or past
// evidence_details.due_by, refuses both, as Stripe does.
import crypto from 'node:crypto';
import examples from '../fixtures/stripe/objects.json' with { type: 'json' };

type Obj = Record<string, any>;
type Answer = { status: number; body: Obj };

/** The fields of a balance transaction a dispute's funds movements carry (Stripe's BalanceTransaction). */
const balanceTransaction = { object: 'balance_transaction', currency: 'usd', fee: 0, fee_details: [], status: 'available', type: 'adjustment', description: 'Chargeback' };

/**
 * The cardholder's dispute of a PaymentIntent's charge, as Stripe's published dispute object (its
 * example), in `status` with `balance_transactions` of the funds withdrawn (and reinstated); kept in
 * `disputes` with the evidence the merchant gave it so far.
 */
export function disputeOf(disputes: Map<string, Obj>, intent: Obj, id: string, status: string, funds: { withdrawn: boolean; reinstated: boolean }, reason: string): Obj {
  const move = (amount: number) => ({ ...balanceTransaction, id: `txn_${crypto.randomBytes(8).toString('hex')}`, amount, net: amount, reporting_category: amount < 0 ? 'dispute' : 'dispute_reversal' });
  const moves = [...(funds.withdrawn ? [move(-intent.amount)] : []), ...(funds.reinstated ? [move(intent.amount)] : [])];
  const held = disputes.get(id);
  const evidence = held ? { evidence: held.evidence, evidence_details: held.evidence_details } : { evidence_details: { ...examples.dispute.evidence_details, due_by: Math.floor(Date.now() / 1000) + 7 * 86_400 } };
  const dispute = { ...structuredClone(examples.dispute), id, amount: intent.amount, currency: intent.currency, payment_intent: intent.id, charge: intent.latest_charge ?? `ch_${intent.id}`, status, reason, balance_transactions: moves, ...evidence, livemode: intent.livemode };
  disputes.set(id, dispute);
  return structuredClone(dispute);
}

const EVIDENCE_KEYS = new Set(Object.keys(examples.dispute.evidence).filter((k) => k !== 'enhanced_evidence'));
const ANSWERABLE = ['warning_needs_response', 'needs_response'];
const invalid = (message: string, extra: Obj = {}): Answer => ({ status: 400, body: { error: { type: 'invalid_request_error', message, ...extra } } });

function refusal(dispute: Obj | undefined, id: string): Answer | undefined {
  if (!dispute) return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such dispute: '${id}'` } } };
  if (!ANSWERABLE.includes(dispute.status)) return invalid(`This dispute is already ${dispute.status} and cannot be updated.`);
  if (dispute.evidence_details.due_by * 1000 < Date.now()) return invalid('The evidence due date for this dispute has passed.');
  return undefined;
}

/** POST /v1/disputes/{id}[/close]; undefined for another path. */
export function answerDispute(disputes: Map<string, Obj>, path: string, params: Obj): Answer | undefined {
  const match = /^\/v1\/disputes\/([^/]+)(\/close)?$/.exec(path);
  if (!match) return undefined;
  const id = match[1]!;
  const dispute = disputes.get(id);
  const refused = refusal(dispute, id);
  if (refused) return refused;
  if (match[2]) {
    const unknown = Object.keys(params).find((k) => !k.startsWith('expand'));
    if (unknown) return invalid(`Received unknown parameter: ${unknown}`, { code: 'parameter_unknown', param: unknown });
    Object.assign(dispute!, { status: 'lost', is_charge_refundable: false });
    return { status: 200, body: dispute! };
  }
  const unknown = Object.keys(params).find((k) => !['evidence', 'submit', 'metadata'].includes(k) && !k.startsWith('expand'));
  if (unknown) return invalid(`Received unknown parameter: ${unknown}`, { code: 'parameter_unknown', param: unknown });
  const field = Object.keys(params.evidence ?? {}).find((k) => !EVIDENCE_KEYS.has(k));
  if (field) return invalid(`Received unknown parameter: evidence[${field}]`, { code: 'parameter_unknown', param: `evidence[${field}]` });
  if (params.submit !== undefined && !['true', 'false'].includes(params.submit)) return invalid('Invalid boolean: submit', { code: 'parameter_invalid_boolean', param: 'submit' });
  Object.assign(dispute!.evidence, params.evidence ?? {});
  dispute!.evidence_details.has_evidence = true;
  if (params.submit === 'true') {
    dispute!.evidence_details.submission_count += 1;
    dispute!.status = dispute!.status === 'warning_needs_response' ? 'warning_under_review' : 'under_review';
  }
  return { status: 200, body: dispute! };
}
