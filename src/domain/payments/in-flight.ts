// A card payment in flight keeps its card in the vault until it no longer needs it (docs/vault.md,
// docs/processors.md "Crash recovery"): the worker may then send an interrupted payment again to
// a processor that replays sends under our id instead of answering status questions (Adyen), with
// no customer and no retry to bring the card back (status-checks.ts). Only the number and expiry
// are kept, never the CVC, so such a replay carries none.
//
// A typed card is sealed (purpose `payment`) in the admit transaction, only when its route holds
// such a processor: elsewhere the worker asks the processor and never sends again, and the card
// would be kept for nothing. A payment saving its card already holds it sealed (saving.ts), and a
// saved card lives in its method's record (saved-cards.ts): neither seals a second copy. The kept
// card is erased by the transaction that records the payment final, authorised or with its
// customer: by then the processor holds it (a reference), and no replay can need the card.
import type { Executor } from '../../storage/db.js';
import type { payments } from '../../storage/schema.js';
import type { RequestContext } from '../../kernel/context.js';
import type { CardDetails } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { eraseRecord } from '../../vault/vault.js';
import { savedCardUseOf } from './saved-cards.js';
import { setupOf } from './saving.js';

type PaymentRow = typeof payments.$inferSelect;

/** What a payment keeps of its typed card while in flight, in its payment_method column (never shown). */
interface InFlight {
  in_flight_record?: string;
}

/** In the admit transaction: the typed card sealed for the worker's replay, as columns of the payment method. */
export async function keepInFlight(tx: Executor, rt: Pick<Runtime, 'vault'>, ctx: RequestContext, card: CardDetails): Promise<InFlight> {
  return { in_flight_record: await rt.vault.seal(tx, ctx, { number: card.number, expMonth: card.expMonth, expYear: card.expYear }, 'payment') };
}

/** The vault record a replay of this payment unseals (its kept card, the card it saves, or its saved card); undefined for one that keeps none. */
export function replayRecordOf(row: Pick<PaymentRow, 'paymentMethod'>): string | undefined {
  return (row.paymentMethod as InFlight).in_flight_record ?? setupOf(row.paymentMethod)?.vault_record ?? savedCardUseOf(row)?.vault_record;
}

/** The effect of every status but pending: the kept typed card erased (a card being saved, or a saved one, is another record). */
export async function eraseInFlightCard(tx: Executor, payment: PaymentRow): Promise<void> {
  const record = (payment.paymentMethod as InFlight).in_flight_record;
  if (record !== undefined) await eraseRecord(tx, { accountId: payment.accountId, livemode: payment.livemode }, record);
}
