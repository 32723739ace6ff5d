// The connector contract's direct-debit scenarios, for harnesses with the `mandates` capability:
// a mandate set up at the processor and settled by its webhook (active, failed, cancelled by the
// payer), debits under it (confirmed, failed, and the money coming back after success: a late
// failure or a charge-back, the booking reversed), batches, duplicate and out-of-order webhooks,
// and an answer lost after the processor acted. Each through the service's HTTP API. What not every
// processor does (money back after a confirmed debit, several events a webhook) is a capability.
import { expect } from 'vitest';
import { mandateBody } from '../../support/mandates.js';
import { availableOf, eventTypesOf, newOrder } from '../../support/payments.js';
import { postWebhook, type Webhook } from './harness.js';
import type { Scenario, ScenarioContext } from './scenarios.js';

const NEEDS = ['mandates'] as const;
const LATE_FAILURES = ['mandates', 'late_debit_failures'] as const;

async function deliver(ctx: ScenarioContext, webhook: Webhook, receipt = { duplicate: false, applied: true }) {
  const res = await postWebhook(ctx.processor.webhookUrl, webhook);
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ received: true, ...receipt });
}

/** A mandate created through the API: pending at the processor until its bank answers. */
async function pendingMandate(ctx: ScenarioContext) {
  const res = await ctx.api.post('/v1/mandates', mandateBody('sepa_core', ctx.harness.mandates!.pendingAccount));
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ status: 'pending', connector: ctx.processor.connector, connector_reference: expect.any(String) });
  expect(await ctx.harness.mandates!.held(res.body.id)).toBe(1);
  return res.body as { id: string; version: number };
}

async function activeMandate(ctx: ScenarioContext) {
  const mandate = await pendingMandate(ctx);
  await deliver(ctx, await ctx.harness.mandates!.mandate(ctx.processor, mandate.id, 'active'));
  return mandate;
}

/** A debit of a new order under the active `mandate`: pending at the processor. */
async function debitUnder(ctx: ScenarioContext, mandate: { id: string }, amount: number) {
  const order = await newOrder(ctx.api, { amount, currency: 'EUR' });
  const res = await ctx.api.post('/v1/payments', { payment_order: order.id, payment_method: { type: 'mandate', mandate: mandate.id } });
  expect(res.status, res.text).toBe(201);
  expect(res.body).toMatchObject({ status: 'pending', connector: ctx.processor.connector, payment_method: { type: 'mandate', mandate: mandate.id } });
  return { order, payment: res.body as { id: string } };
}

/** A debit of a new order under a new active mandate. */
async function pendingDebit(ctx: ScenarioContext, amount = 2500) {
  const mandate = await activeMandate(ctx);
  return { mandate, ...(await debitUnder(ctx, mandate, amount)) };
}

const get = async (ctx: ScenarioContext, path: string) => (await ctx.api.get(path)).body;

export const MANDATE_SCENARIOS: readonly Scenario[] = [
  {
    name: 'mandate: set up at the processor under our id, not debitable until active, revoked by the merchant',
    needs: ['mandate_setup'],
    async run(ctx) {
      const res = await ctx.api.post('/v1/mandates', mandateBody('sepa_core'));
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ status: expect.stringMatching(/^(pending|active)$/), connector: ctx.processor.connector, connector_reference: expect.any(String) });
      if (res.body.status === 'pending') {
        const order = await newOrder(ctx.api, { currency: 'EUR' });
        const debit = await ctx.api.post('/v1/payments', { payment_order: order.id, payment_method: { type: 'mandate', mandate: res.body.id } });
        expect(debit.status, debit.text).toBe(422);
        expect(debit.body.error.code).toBe('mandate_not_active');
        return;
      }
      const revoked = await ctx.api.post(`/v1/mandates/${res.body.id}/revoke`, {});
      expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'merchant' });
    },
  },
  {
    name: 'mandate: pending at the processor, then active by its webhook',
    needs: NEEDS,
    async run(ctx) {
      const mandate = await activeMandate(ctx);
      expect(await get(ctx, `/v1/mandates/${mandate.id}`)).toMatchObject({ status: 'active', activated_at: expect.any(String) });
      expect(await eventTypesOf(ctx.api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.active']);
    },
  },
  {
    name: 'mandate: failed by the processor (the bank refused it); a debit under it is refused',
    needs: NEEDS,
    async run(ctx) {
      const mandate = await pendingMandate(ctx);
      await deliver(ctx, await ctx.harness.mandates!.mandate(ctx.processor, mandate.id, 'failed'));
      expect(await get(ctx, `/v1/mandates/${mandate.id}`)).toMatchObject({ status: 'failed', failure_code: expect.stringMatching(/^(mandate_declined|account_closed)$/) });
      const order = await newOrder(ctx.api, { currency: 'EUR' });
      const res = await ctx.api.post('/v1/payments', { payment_order: order.id, payment_method: { type: 'mandate', mandate: mandate.id } });
      expect(res.status, res.text).toBe(422);
      expect(res.body.error.code).toBe('mandate_not_active');
    },
  },
  {
    name: 'mandate: cancelled by the payer through their bank, revoked by the bank',
    needs: NEEDS,
    async run(ctx) {
      const mandate = await activeMandate(ctx);
      await deliver(ctx, await ctx.harness.mandates!.mandate(ctx.processor, mandate.id, 'revoked'));
      expect(await get(ctx, `/v1/mandates/${mandate.id}`)).toMatchObject({ status: 'revoked', revoked_by: 'bank' });
      expect(await eventTypesOf(ctx.api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.active', 'mandate.revoked']);
    },
  },
  {
    name: 'mandate: revoked by the merchant, cancelled at the processor',
    needs: NEEDS,
    async run(ctx) {
      const mandate = await activeMandate(ctx);
      const res = await ctx.api.post(`/v1/mandates/${mandate.id}/revoke`, {});
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ status: 'revoked', revoked_by: 'merchant' });
    },
  },
  {
    name: 'debit confirmed: succeeded, the order paid, the balance credited once',
    needs: NEEDS,
    async run(ctx) {
      const before = await availableOf(ctx.api);
      const { order, payment } = await pendingDebit(ctx, 2500);
      const webhook = await ctx.harness.mandates!.debit(ctx.processor, payment.id, 'confirmed');
      await deliver(ctx, webhook);
      expect(await get(ctx, `/v1/payments/${payment.id}`)).toMatchObject({ status: 'succeeded', connector: ctx.processor.connector });
      expect((await get(ctx, `/v1/payment-orders/${order.id}`)).status).toBe('paid');
      expect(await availableOf(ctx.api)).toBe(before + 2500);
      expect(await ctx.harness.mandates!.held(payment.id)).toBe(1);
    },
  },
  {
    name: 'debit failed: failed debit_declined, the order open again, nothing booked',
    needs: NEEDS,
    async run(ctx) {
      const before = await availableOf(ctx.api);
      const { order, payment } = await pendingDebit(ctx);
      await deliver(ctx, await ctx.harness.mandates!.debit(ctx.processor, payment.id, 'failed'));
      expect(await get(ctx, `/v1/payments/${payment.id}`)).toMatchObject({ status: 'failed', failure_code: 'debit_declined' });
      expect((await get(ctx, `/v1/payment-orders/${order.id}`)).status).toBe('open');
      expect(await availableOf(ctx.api)).toBe(before);
    },
  },
  ...(['late_failure', 'charged_back'] as const).map(
    (outcome): Scenario => ({
      name: `debit ${outcome === 'charged_back' ? 'charged back' : 'failed late'} after success: failed, the booking reversed, events succeeded then failed`,
      needs: LATE_FAILURES,
      async run(ctx) {
        const before = await availableOf(ctx.api);
        const { order, payment } = await pendingDebit(ctx, 1800);
        await deliver(ctx, await ctx.harness.mandates!.debit(ctx.processor, payment.id, 'confirmed'));
        expect(await availableOf(ctx.api)).toBe(before + 1800);
        await deliver(ctx, await ctx.harness.mandates!.debit(ctx.processor, payment.id, outcome));
        expect(await get(ctx, `/v1/payments/${payment.id}`)).toMatchObject({ status: 'failed', failure_code: outcome === 'charged_back' ? 'charged_back' : 'debit_declined' });
        expect(await availableOf(ctx.api)).toBe(before);
        expect(await eventTypesOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded', 'payment.failed']);
        // The order was paid; the money then left again (docs/processors.md, GoCardless).
        expect((await get(ctx, `/v1/payment-orders/${order.id}`)).status).toBe('paid');
        const entries = (await get(ctx, `/v1/balance-transactions?source=${payment.id}`)).data.map((t: { type: string }) => t.type);
        expect(entries.sort()).toEqual(['payment', 'payment_reversal']);
      },
    }),
  ),
  {
    name: 'the same webhook twice: applied once, the second a duplicate',
    needs: NEEDS,
    async run(ctx) {
      const before = await availableOf(ctx.api);
      const mandate = await pendingMandate(ctx);
      const active = await ctx.harness.mandates!.mandate(ctx.processor, mandate.id, 'active');
      await deliver(ctx, active);
      await deliver(ctx, active, { duplicate: true, applied: false });
      expect(await eventTypesOf(ctx.api, mandate.id)).toEqual(['mandate.created', 'mandate.pending', 'mandate.active']);
      const { payment } = await debitUnder(ctx, mandate, 600);
      const confirmed = await ctx.harness.mandates!.debit(ctx.processor, payment.id, 'confirmed');
      await deliver(ctx, confirmed);
      await deliver(ctx, confirmed, { duplicate: true, applied: false });
      expect(await get(ctx, `/v1/payments/${payment.id}`)).toMatchObject({ status: 'succeeded' });
      expect(await availableOf(ctx.api)).toBe(before + 600);
      expect(await eventTypesOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    },
  },
  {
    name: 'a batch of events is applied once each; the same batch again changes nothing',
    needs: ['mandates', 'webhook_batches'],
    async run(ctx) {
      const before = await availableOf(ctx.api);
      const { mandate, payment } = await pendingDebit(ctx, 700);
      const other = await pendingMandate(ctx);
      const batch = ctx.harness.mandates!.batch!([
        await ctx.harness.mandates!.debit(ctx.processor, payment.id, 'confirmed'),
        await ctx.harness.mandates!.mandate(ctx.processor, other.id, 'active'),
      ]);
      await deliver(ctx, batch);
      await deliver(ctx, batch, { duplicate: true, applied: false });
      expect((await get(ctx, `/v1/payments/${payment.id}`)).status).toBe('succeeded');
      expect((await get(ctx, `/v1/mandates/${other.id}`)).status).toBe('active');
      expect(await availableOf(ctx.api)).toBe(before + 700);
      expect(await eventTypesOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
      expect((await get(ctx, `/v1/mandates/${mandate.id}`)).status).toBe('active');
    },
  },
  {
    name: 'mandate webhooks out of order: an older state after a newer one changes nothing',
    needs: NEEDS,
    async run(ctx) {
      const { mandates } = ctx.harness;
      const mandate = await pendingMandate(ctx);
      const active = await mandates!.mandate(ctx.processor, mandate.id, 'active');
      const revoked = await mandates!.mandate(ctx.processor, mandate.id, 'revoked');
      await deliver(ctx, revoked);
      // Cancelled before we ever saw it active: it never became usable.
      expect((await get(ctx, `/v1/mandates/${mandate.id}`)).status).toBe('failed');
      await deliver(ctx, active, { duplicate: false, applied: true });
      expect((await get(ctx, `/v1/mandates/${mandate.id}`)).status).toBe('failed');
    },
  },
  {
    name: 'debit webhooks out of order: the confirmation after the charge-back changes nothing',
    needs: LATE_FAILURES,
    async run(ctx) {
      const { mandates } = ctx.harness;
      const before = await availableOf(ctx.api);
      const { payment } = await pendingDebit(ctx, 900);
      const confirmed = await mandates!.debit(ctx.processor, payment.id, 'confirmed');
      const chargedBack = await mandates!.debit(ctx.processor, payment.id, 'charged_back');
      await deliver(ctx, chargedBack);
      await deliver(ctx, confirmed);
      expect(await get(ctx, `/v1/payments/${payment.id}`)).toMatchObject({ status: 'failed', failure_code: 'charged_back' });
      expect(await availableOf(ctx.api)).toBe(before);
      expect(await eventTypesOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.failed']);
    },
  },
  {
    name: 'debit: 500 after the processor acted: pending, never sent elsewhere; a status check finds the one debit',
    needs: ['mandates', 'faults', 'status_lookup'],
    async run(ctx) {
      const mandate = await activeMandate(ctx);
      const order = await newOrder(ctx.api, { amount: 1200, currency: 'EUR' });
      ctx.harness.faults!.serverErrorAfterNext();
      const idempotencyKey = `lost-${order.id}`;
      const body = { payment_order: order.id, payment_method: { type: 'mandate', mandate: mandate.id } };
      const first = await ctx.api.post('/v1/payments', body, { idempotencyKey });
      expect(first.status, first.text).toBe(201);
      expect(first.body).toMatchObject({ status: 'pending', connector: ctx.processor.connector, connector_reference: null });
      expect((await ctx.api.post('/v1/payments', body, { idempotencyKey })).text).toBe(first.text);
      const checked = await get(ctx, `/v1/payments/${first.body.id}?refresh=true`);
      expect(checked).toMatchObject({ status: 'pending', connector: ctx.processor.connector, connector_reference: expect.any(String) });
      expect(await ctx.harness.mandates!.held(first.body.id)).toBe(1);
    },
  },
];
