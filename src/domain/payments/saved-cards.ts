// Paying with a saved card (docs/customers.md): on session (the customer present, optionally
// giving the CVC again) or off session (merchant-initiated, `off_session: true`). The method is
// checked before the payment is created; its card stays sealed in the vault until phase 2, when it
// is unsealed — with its audit row naming the payment, written by the same statement — only to
// build the processor request (no transaction is held across the call). The payment keeps the method's
// summary and what a merchant-initiated request cites (the network transaction id).
import { paymentMethodStates } from '../payment-methods/state.js';
import { and, eq, isNull } from 'drizzle-orm';
import { selectOwnRow } from '../../storage/tenant.js';
import type { Db, Executor } from '../../storage/db.js';
import { paymentMethods, payments } from '../../storage/schema.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import type { RequestContext } from '../../kernel/context.js';
import type { ChargeRequest } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import type { Tenancy, VaultCard } from '../../vault/vault.js';
import type { CreatePaymentBody } from './schema.js';

type PaymentRow = typeof payments.$inferSelect;
type PaymentMethodRow = typeof paymentMethods.$inferSelect;
type OffSessionReason = NonNullable<ChargeRequest['merchantInitiated']>['reason'];

/** What a payment with a saved card keeps of it (its payment_method column, never shown as such). */
interface SavedCardUse {
  payment_method: string;
  vault_record: string;
  network_transaction_id: string | null;
  off_session: OffSessionReason | null;
}

/** The off-session request of a new payment, checked: its reason, or null when the customer is present. */
export function offSessionOf(input: CreatePaymentBody): OffSessionReason | null {
  if (input.off_session !== true) {
    if (input.off_session_reason !== undefined) throw new ApiError('parameter_invalid', { param: 'off_session_reason', message: 'off_session_reason goes with off_session: true.' });
    return null;
  }
  if (input.payment_method.type !== 'saved_card') {
    throw new ApiError('parameter_invalid', { param: 'off_session', message: 'An off_session payment charges a saved card: give payment_method.type saved_card.' });
  }
  if (input.return_url !== undefined) throw new ApiError('parameter_invalid', { param: 'return_url', message: 'An off_session payment cannot bring the customer back: no return_url.' });
  return (input.off_session_reason as OffSessionReason | undefined) ?? 'unscheduled';
}

const PARAM = 'payment_method.saved_card.id';

/** The saved method a new payment charges, checked for this use: 404, 422 payment_method_detached, not active, on session only. */
export async function usableSavedCard(db: Db, ctx: RequestContext, id: string, offSession: OffSessionReason | null): Promise<PaymentMethodRow> {
  const uuid = parseId('pm', id);
  const row = uuid ? await selectOwnRow(db, ctx, { table: paymentMethods }, uuid) : undefined;
  if (!row) throw new ApiError('resource_missing', { param: PARAM, message: `No such payment method: '${id.slice(0, 64)}'.` });
  if (paymentMethodStates.is(row.status, 'erased')) throw new ApiError('payment_method_detached', { param: PARAM, message: `The payment method ${id} is detached: its card data is erased; save the card again.` });
  if (!paymentMethodStates.is(row.status, 'chargeable') || row.vaultRecordId === null) throw new ApiError('payment_method_not_active', { param: PARAM, message: `The payment method ${id} is ${row.status}; only an active one can be charged.` });
  if (offSession !== null && row.usage !== 'off_session') {
    throw new ApiError('payment_method_on_session_only', { param: PARAM, message: `The payment method ${id} was saved for on_session use: it cannot be charged off session.` });
  }
  return row;
}

/** What the payment keeps: the card's summary, shown as any card payment's, and the use of the saved method. */
export function savedCardPaymentMethod(method: PaymentMethodRow, offSession: OffSessionReason | null): Record<string, unknown> {
  const use: SavedCardUse = { payment_method: method.id, vault_record: method.vaultRecordId!, network_transaction_id: method.networkTransactionId, off_session: offSession };
  const card = { brand: method.cardBrand, last4: method.cardLast4, exp_month: method.cardExpMonth, exp_year: method.cardExpYear, fingerprint: method.cardFingerprint };
  // Its issuing country, once a processor reported it: the payment's routing segment (routing/stats.ts).
  return { type: 'card', card: method.cardIssuingCountry ? { ...card, issuing_country: method.cardIssuingCountry } : card, saved_card: use };
}

/**
 * A saved card learns its issuing country from the first payment of it whose processor reports
 * one, so that its later payments are routed in that segment. One update per card at most: a
 * payment of a card that knew its country, or whose processor said none, writes nothing.
 */
export async function learnIssuingCountry(tx: Executor, payment: PaymentRow): Promise<void> {
  const learnt = issuingCountryToLearn(payment);
  if (!learnt) return;
  await tx
    .update(paymentMethods)
    .set({ cardIssuingCountry: learnt.country })
    .where(and(eq(paymentMethods.accountId, payment.accountId), eq(paymentMethods.livemode, payment.livemode), eq(paymentMethods.id, learnt.paymentMethod), isNull(paymentMethods.cardIssuingCountry)));
}

/** The saved card and the country it learns from `payment` (learnIssuingCountry); undefined when there is nothing to write. */
export function issuingCountryToLearn(payment: Pick<PaymentRow, 'paymentMethod'>): { paymentMethod: string; country: string } | undefined {
  const use = savedCardUseOf(payment);
  const card = payment.paymentMethod.card as { issuing_country?: string; reported_issuing_country?: string } | undefined;
  if (!use || !card?.reported_issuing_country || card.issuing_country) return undefined;
  return { paymentMethod: use.payment_method, country: card.reported_issuing_country };
}

export function savedCardUseOf(row: Pick<PaymentRow, 'paymentMethod'>): SavedCardUse | undefined {
  return row.paymentMethod.saved_card as SavedCardUse | undefined;
}

/** The card of `record` unsealed for this payment, its audit row committed by the same statement, before any call. */
export function unsealForPayment(db: Db, rt: Pick<Runtime, 'vault'>, ctx: Tenancy, row: Pick<PaymentRow, 'id'>, record: string): Promise<VaultCard> {
  return rt.vault.unseal(db, ctx, record, { type: 'payment', id: toPublicId('pay', row.id) });
}

/** Phase 2: the saved card unsealed for this payment, with the CVC given again if any, and the merchant-initiated fields. */
export async function unsealedCharge(db: Db, rt: Pick<Runtime, 'vault'>, ctx: RequestContext, row: PaymentRow, cvc: string | undefined): Promise<Pick<ChargeRequest, 'card' | 'merchantInitiated'>> {
  const use = savedCardUseOf(row)!;
  const card = await unsealForPayment(db, rt, ctx, row, use.vault_record);
  const charged = { card: { number: card.number, expMonth: card.expMonth, expYear: card.expYear, cvc: cvc ?? '' } };
  return use.off_session === null ? charged : { ...charged, merchantInitiated: { networkTransactionId: use.network_transaction_id, reason: use.off_session } };
}
