// Saving a card while paying (docs/customers.md): a card payment naming a customer and
// `setup_future_usage` seals its card in the vault in its first phase, inside the admit
// transaction; once the payment succeeded, its outcome's transaction attaches the saved payment
// method (pm_) with that vault record and the network transaction id the processor answered; a
// payment that failed saves nothing and its sealed card is erased. What the payment keeps of it
// lives in its payment_method column (`setup`), never shown as such: the view names only the pm_.
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import { payments } from '../../storage/schema.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import type { RequestContext } from '../../kernel/context.js';
import type { CardDetails, ChargeRequest } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { eraseRecord } from '../../vault/vault.js';
import { lockCustomerForUse } from '../customers/store.js';
import { attachPaymentMethod } from '../payment-methods/service.js';
import type { PaymentMethodUsage } from '../payment-methods/state.js';
import type { CardSummary } from './cards.js';
import type { CreatePaymentBody } from './schema.js';

type PaymentRow = typeof payments.$inferSelect;

/** What a saving payment keeps of its saving: whose, what for, the sealed card, then what came of it. */
export interface CardSetup {
  customer: string;
  usage: PaymentMethodUsage;
  vault_record: string;
  network_transaction_id?: string;
  /** The saved method's UUID, once the payment succeeded. */
  saved?: string;
}

export interface SaveRequest {
  customer: string;
  usage: PaymentMethodUsage;
}

/** The saving a new payment's body asks for, checked (typed 400s, 404 for a malformed customer id); undefined when it asks none. */
export function saveRequestOf(input: CreatePaymentBody): SaveRequest | undefined {
  const { customer, setup_future_usage: usage } = input;
  if (customer === undefined && usage === undefined) return undefined;
  if (usage === undefined) {
    throw new ApiError('parameter_missing', { param: 'setup_future_usage', message: 'A payment names a customer to save its card for: give setup_future_usage (on_session or off_session).' });
  }
  if (customer === undefined) throw new ApiError('parameter_missing', { param: 'customer', message: 'setup_future_usage saves the card for a customer: give customer (cus_…).' });
  if (input.payment_method.type !== 'card') {
    throw new ApiError('parameter_invalid', { param: 'setup_future_usage', message: 'Only a card payment can save its card (setup_future_usage).' });
  }
  const uuid = parseId('cus', customer);
  if (!uuid) throw noSuchCustomer(customer);
  return { customer: uuid, usage: usage as PaymentMethodUsage };
}

const noSuchCustomer = (id: string) => new ApiError('resource_missing', { param: 'customer', message: `No such customer: '${id.slice(0, 64)}'.` });

/** In the admit transaction: the customer share-locked (404 when not the caller's), the card sealed in the vault. */
export async function sealForSaving(tx: Executor, rt: Pick<Runtime, 'vault'>, ctx: RequestContext, save: SaveRequest, card: CardDetails): Promise<CardSetup> {
  if (!(await lockCustomerForUse(tx, ctx, save.customer))) throw noSuchCustomer(toPublicId('cus', save.customer));
  const record = await rt.vault.seal(tx, ctx, { number: card.number, expMonth: card.expMonth, expYear: card.expYear }, 'payment_method');
  return { customer: save.customer, usage: save.usage, vault_record: record };
}

export function setupOf(paymentMethod: Record<string, unknown>): CardSetup | undefined {
  return paymentMethod.setup as CardSetup | undefined;
}

/** The stored-credential flag of the request of a payment that saves its card. */
export function storedCredentialOf(row: Pick<PaymentRow, 'paymentMethod'>): Pick<ChargeRequest, 'storedCredential'> {
  const setup = setupOf(row.paymentMethod);
  return setup ? { storedCredential: { kind: 'first', usage: setup.usage } } : {};
}

/**
 * What an answer writes on the payment's card: the network transaction id of a saving payment, the
 * issuing country the processor reported (`reported_issuing_country`), and the merchant advice a
 * decline came with (`reported_merchant_advice`, counted by the reattempt limits: reattempts.ts). The card's
 * `issuing_country` — its routing segment, which the window's outcomes count it in
 * (routing/stats.ts) — stays what was known before the call, so that every outcome of a segment
 * is counted in it, declines and approvals alike.
 */
export function reportedCardColumns(
  update: { kind: string; networkTransactionId?: string; issuingCountry?: string; merchantAdvice?: string },
  row: PaymentRow,
): Partial<PaymentRow> {
  const setup = setupOf(row.paymentMethod);
  let method = row.paymentMethod;
  if (setup && update.networkTransactionId !== undefined) method = { ...method, setup: { ...setup, network_transaction_id: update.networkTransactionId } };
  const card = method.card as Record<string, unknown> | undefined;
  if (update.issuingCountry && card) method = { ...method, card: { ...card, reported_issuing_country: update.issuingCountry } };
  const advised = method.card as Record<string, unknown> | undefined;
  if (update.merchantAdvice && advised) method = { ...method, card: { ...advised, reported_merchant_advice: update.merchantAdvice } };
  return method === row.paymentMethod ? {} : { paymentMethod: method };
}

const tenancyOf = (ctx: RequestContext, payment: PaymentRow): RequestContext => ({ ...ctx, accountId: payment.accountId, livemode: payment.livemode });

/**
 * The effect of a success: the card saved for its customer, the payment naming it. A customer
 * deleted meanwhile gets nothing; the card is erased instead.
 */
export async function saveCardOf(tx: Executor, ctx: RequestContext, payment: PaymentRow): Promise<PaymentRow | undefined> {
  const setup = setupOf(payment.paymentMethod);
  if (!setup || setup.saved) return undefined;
  const owner = tenancyOf(ctx, payment);
  if (!(await lockCustomerForUse(tx, owner, setup.customer))) {
    await eraseRecord(tx, owner, setup.vault_record);
    return undefined;
  }
  const card = (payment.paymentMethod as { card: CardSummary & { reported_issuing_country?: string } }).card;
  const method = await attachPaymentMethod(tx, owner, {
    customerId: setup.customer,
    usage: setup.usage,
    card: { brand: card.brand, last4: card.last4, exp_month: card.exp_month, exp_year: card.exp_year, fingerprint: card.fingerprint, issuing_country: card.reported_issuing_country ?? null },
    vaultRecordId: setup.vault_record,
    networkTransactionId: setup.network_transaction_id ?? null,
    status: 'active',
  });
  const [updated] = await tx
    .update(payments)
    .set({ paymentMethod: { ...payment.paymentMethod, setup: { ...setup, saved: method.id } } })
    .where(and(eq(payments.accountId, payment.accountId), eq(payments.livemode, payment.livemode), eq(payments.id, payment.id)))
    .returning();
  return updated;
}

/** The effect of a failure: a card sealed to be saved is erased, nothing having been saved. */
export async function eraseUnsavedCard(ctx: RequestContext, tx: Executor, payment: PaymentRow): Promise<void> {
  const setup = setupOf(payment.paymentMethod);
  if (setup && !setup.saved) await eraseRecord(tx, tenancyOf(ctx, payment), setup.vault_record);
}

/** The pm_ a payment saved its card as, for its view. */
export function savedMethodOf(row: Pick<PaymentRow, 'paymentMethod'>): string | null {
  const saved = setupOf(row.paymentMethod)?.saved;
  return saved ? toPublicId('pm', saved) : null;
}
