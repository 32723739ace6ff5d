// Payouts: money sent from the merchant's available balance to a beneficiary. Creating one is a
// single transaction (docs/payouts-and-mandates.md): the eligibility checks, the reservation of the amount in the
// ledger (available → reserved, with every slot of the available balance locked, so concurrent
// payouts can never overdraw it), the payout row `pending`, its event and the idempotency record
// commit together or not at all. Sending it to a bank happens afterwards (submission.ts): by the
// worker, and right after the request in the background when PAYOUT_SUBMIT_ON_CREATE allows.
//
// Eligibility, in this order: the beneficiary exists (404), payouts are enabled for the account
// (live mode only; test mode always has them), the beneficiary is active, the currency is the
// beneficiary account's, the amount is within the account's maximum payout, a connector can send
// it, and the available balance covers it.
//
// Routing: the account's routing rules decide, as for payments, with method type `payout`: the
// first rule matching the currency and amount whose payment_method_types is absent or lists
// `payout` names the connectors; those able to send payouts are kept in order. Without such a rule
// (or when none of its connectors can pay out) the mode's default connectors that can pay out are
// used (src/domain/routing/targets.ts) — in test mode without connector accounts simulator_a then
// simulator_b, so fallback works out of the box.
import { beneficiaryStates } from '../beneficiaries/state.js';
import { payoutAtBank, resolveThroughTestControl } from '../test-controls.js';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { accounts, beneficiaries, payouts } from '../../storage/schema.js';
import { newId, parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import { notFound } from '../../storage/lookup.js';
import { idParam } from '../../kernel/pagination.js';
import { changeOne, loadOne, type Resource, tenantReads } from '../../storage/tenant.js';
import { routingFor } from '../routing/targets.js';
import { planMovementRoute } from '../routing/planner.js';
import { lockAvailableBalance, payoutCreated } from '../../ledger/journal.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import { payoutFee } from '../terms/service.js';
import type { Runtime } from '../../runtime.js';
import type { CreatePayoutBody, ListPayoutsQuery } from './schema.js';
import { markCancelled, payoutView, type PayoutRow } from './transitions.js';
import { payoutKind } from './kind.js';
import { applyState } from '../../movement/apply.js';
import type { PayoutStatus } from './state.js';
import { planted } from '../../kernel/plants.js';

const PAYOUTS: Resource<typeof payouts> = { table: payouts, prefix: 'po', name: 'payout' };

export interface CreatePayoutOptions {
  /** Called after the payout committed (outside any transaction), e.g. to submit it at once. */
  onCreated?: (payout: { accountId: string; id: string }) => void;
}

export async function createPayout(db: Db, rt: Runtime, ctx: RequestContext, input: CreatePayoutBody, opts: CreatePayoutOptions = {}): Promise<Outcome> {
  const now = rt.now();
  const beneficiaryUuid = parseId('ben', input.beneficiary);
  const route = planMovementRoute(rt, await routingFor(db, rt, ctx), { need: 'payout', currency: input.currency, amount: input.amount }, { fallback: true });
  const { uuid } = newId('po');
  const outcome = beneficiaryUuid
    ? await db.transaction(async (tx) => {
        // Shared lock: a concurrent DELETE of the beneficiary waits for this payout, or this payout sees it disabled.
        const [beneficiary] = await tx
          .select()
          .from(beneficiaries)
          .where(and(eq(beneficiaries.accountId, ctx.accountId), eq(beneficiaries.livemode, ctx.livemode), eq(beneficiaries.id, beneficiaryUuid)))
          .for('share');
        if (!beneficiary) return undefined;
        const [account] = await tx
          .select({ payoutsEnabled: accounts.payoutsEnabled, payoutMaxAmount: accounts.payoutMaxAmount })
          .from(accounts)
          .where(eq(accounts.id, ctx.accountId));
        if (ctx.livemode && !account?.payoutsEnabled) throw new ApiError('payouts_not_enabled');
        if (!beneficiaryStates.is(beneficiary.status, 'payable')) {
          throw new ApiError('beneficiary_disabled', { param: 'beneficiary', message: `The beneficiary ${input.beneficiary} is ${beneficiary.status}; only an active beneficiary can be paid.` });
        }
        if (input.currency !== beneficiary.bankCurrency) {
          throw new ApiError('currency_mismatch', {
            param: 'currency',
            message: `The payout currency ${input.currency} differs from the currency of the beneficiary's bank account (${beneficiary.bankCurrency}).`,
          });
        }
        const max = account?.payoutMaxAmount ?? null;
        if (max !== null && input.amount > max) {
          throw new ApiError('amount_above_limit', { param: 'amount', message: `The amount ${input.amount} is above this account's maximum payout of ${max}.` });
        }
        if (route.length === 0) {
          throw new ApiError('routing_no_match', { message: `No connector can send ${ctx.livemode ? 'live' : 'test'}-mode payouts for this account.` });
        }
        // Payouts draw only on available money: pending money is not the merchant's to send yet.
        const fee = await payoutFee(tx, ctx.accountId, input.currency, input.amount);
        const balance = planted('payout-skips-balance-lock')
          ? { available: Number.MAX_SAFE_INTEGER, debitSlot: 0 }
          : await lockAvailableBalance(tx, { accountId: ctx.accountId, livemode: ctx.livemode, currency: input.currency });
        if (balance.debitSlot === undefined || balance.available < input.amount + fee) {
          throw new ApiError('insufficient_balance', {
            param: 'amount',
            message: `The available ${input.currency} balance (${Math.max(0, balance.available)}) does not cover the payout amount ${input.amount}${fee ? ` and its fee ${fee}` : ''}.`,
          });
        }
        const [row] = await tx
          .insert(payouts)
          .values({
            accountId: ctx.accountId,
            id: uuid,
            livemode: ctx.livemode,
            beneficiaryId: beneficiary.id,
            status: 'pending',
            amount: input.amount,
            currency: input.currency,
            reference: input.reference,
            description: input.description ?? null,
            metadata: input.metadata ?? {},
            route,
            nextActionAt: now,
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        await payoutCreated(
          tx,
          { accountId: ctx.accountId, livemode: ctx.livemode, currency: input.currency, amount: input.amount, source: { type: 'payout', id: uuid }, createdAt: now },
          balance.debitSlot,
          fee,
        );
        const view = payoutView(row!);
        await recordEvent(tx, ctx, 'payout.created', view, now);
        return respond(tx, ctx, 201, view);
      })
    : undefined;
  if (!outcome) {
    const missing = await notFound(db, ctx, beneficiaries, beneficiaryUuid, 'beneficiary', input.beneficiary);
    throw new ApiError('resource_missing', { param: 'beneficiary', message: missing.message });
  }
  opts.onCreated?.({ accountId: ctx.accountId, id: uuid });
  return outcome;
}

export const { retrieve: retrievePayout, list: listPayouts } = tenantReads(PAYOUTS, payoutView, (q: ListPayoutsQuery) => {
  const beneficiaryUuid = q.beneficiary ? idParam('ben', 'beneficiary', q.beneficiary) : undefined;
  return [
    q.status ? eq(payouts.status, q.status as PayoutStatus) : undefined,
    beneficiaryUuid ? eq(payouts.beneficiaryId, beneficiaryUuid) : undefined,
    q.reference ? eq(payouts.reference, q.reference) : undefined,
  ];
});

/**
 * Cancels a pending payout; the reserved amount returns to available. Submission locks the same
 * row, so whichever commits first wins: a payout already sent answers invalid_state.
 */
export async function cancelPayout(db: Db, rt: Runtime, ctx: RequestContext, id: string): Promise<Outcome> {
  const { outcome, row } = await changeOne(db, ctx, PAYOUTS, id, async (tx, locked) => {
    const cancelled = await markCancelled(tx, ctx, locked, rt.now());
    return { outcome: await respond(tx, ctx, 200, payoutView(cancelled)), row: cancelled };
  });
  rt.metrics.movement('payout', 'cancelled', row.connector);
  return outcome;
}

/**
 * Test helper: has the simulated bank settle a payout in transit (paid, failed) or send back a
 * paid one (returned), then applies what the bank reports (its webhook, arriving too, finds the
 * work done). A payout not sent yet is sent first. A payout the bank had already settled keeps
 * its true outcome, as with the timeout account.
 */
export async function resolveTestPayout(db: Db, rt: Runtime, ctx: RequestContext, id: string, outcome: 'paid' | 'failed' | 'returned'): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  const row = await payoutAtBank(db, rt, await loadOne(db, ctx, PAYOUTS, id), () => loadOne(db, ctx, PAYOUTS, id));
  const allowed: PayoutStatus[] = outcome === 'returned' ? ['processing', 'paid'] : ['processing'];
  if (!allowed.includes(row.status)) throw invalidState('payout', row.status, allowed, `resolve (${outcome})`);
  if (row.connector === null) {
    throw invalidState('payout', 'processing (being sent; no bank has taken it yet)', ['processing at a bank'], 'resolve');
  }
  const connector = row.connector;
  const reference = toPublicId('po', row.id);
  const state = await resolveThroughTestControl(rt, ctx, connector, 'payout', (c, signal) => c.resolvePendingPayout(reference, outcome, signal));
  return db.transaction(async (tx) => {
    const after = await applyState<PayoutRow>(db, rt, payoutKind, ctx, row.id, connector, state, { tx });
    return respond(tx, ctx, 200, payoutView(after ?? row));
  });
}

