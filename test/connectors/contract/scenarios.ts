// The connector contract: the scenarios every processor passes, each through the service's HTTP
// API (so the movement core, the router and the inbound webhooks take part), run over every
// harness by test/connectors/contract.test.ts and, those needing no fake, against a real sandbox
// by `npm run connectors:smoke`. The crash scenarios (a real process killed) are in
// test/engine/crash.test.ts. Every tenant routes to the processor first, then to simulator_b.
import type { SQL } from 'drizzle-orm';
import type { Db } from '../../../src/storage/db.js';
import type { Owner } from '../../support/customers.js';
import { expect } from 'vitest';
import { orderAndPay, pay, newOrder } from '../../support/payments.js';
import type { Api } from '../../support/helpers.js';
import { browse, MERCHANT_RETURN } from '../../support/payments.actions.js';
import { postWebhook, type Capability, type Connected, type PaymentLike, type ProcessorHarness } from './harness.js';

export const BACKUP = 'simulator_b';

export interface ScenarioContext {
  api: Api;
  harness: ProcessorHarness;
  processor: Connected;
  /** The service's URL, against which the customer's browser resolves the relative URLs it is given. */
  url: string;
  /** The service's database, where the harness runs beside it (fakes), to read what the API never shows. */
  query?: (statement: SQL) => Promise<Record<string, unknown>[]>;
  /** The same database and the tenant, to put a saved card of any number in place (test/support/customers.ts). */
  saving?: { db: Db; owner: Owner };
}

export interface Scenario {
  name: string;
  needs: readonly Capability[];
  run(ctx: ScenarioContext): Promise<void>;
}

/** The tenant's route: the processor, then the backup. */
export async function routeThrough(api: Api, processor: Connected) {
  const res = await api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [processor.route, { name: BACKUP }] }] } });
  expect(res.status, res.text).toBe(200);
}

/** The tenant's connector account at the harness's processor, routed through: what a crash test prepares. */
export async function connectRouted(harness: ProcessorHarness, api: Api, serviceUrl: string): Promise<Connected> {
  const processor = await harness.connect(api, serviceUrl);
  await routeThrough(api, processor);
  return processor;
}

const attempts = (payment: { attempts: { connector: string; outcome: string; error_code: string | null }[] }) =>
  payment.attempts.map((a) => [a.connector, a.outcome, a.error_code]);

/** What the processor's own books say about the payment, where the harness can read them. */
async function expectBooks({ harness }: ScenarioContext, paymentId: string, held: number, requests?: number) {
  if (!harness.books) return;
  expect(await harness.books.chargesHeld(paymentId)).toBe(held);
  if (requests !== undefined) expect(await harness.books.chargeRequests(paymentId)).toBe(requests);
}

async function declined(ctx: ScenarioContext, card: string, failureCode: string) {
  const { order, payment } = await orderAndPay(ctx.api, card);
  expect(payment).toMatchObject({ status: 'failed', failure_code: failureCode, connector: ctx.processor.connector });
  // A decline is an answer: never sent to the next connector.
  expect(attempts(payment)).toEqual([[ctx.processor.connector, 'declined', failureCode]]);
  expect((await ctx.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
  await expectBooks(ctx, payment.id, 1, 1);
}

/** A payment the processor answered pending, then settled at the processor (its webhook not sent yet). */
async function pendingThenSettled(ctx: ScenarioContext) {
  const { order, payment } = await orderAndPay(ctx.api, ctx.harness.pendingCard!());
  expect(payment).toMatchObject({ status: 'pending', connector: ctx.processor.connector });
  await ctx.harness.settle!(payment, 'succeeded');
  return { order, payment: payment as PaymentLike & { version: number } };
}

/** Sends the processor's webhook; undefined where the processor sends no such webhook. */
async function send(ctx: ScenarioContext, payment: PaymentLike, state: 'pending' | 'succeeded' | 'failed', signing?: 'wrong_secret' | 'stale') {
  const webhook = ctx.harness.webhook!(ctx.processor, payment, state, signing);
  return webhook && postWebhook(ctx.processor.webhookUrl, webhook);
}

/** The service's receipt of a webhook, or the fixed text the processor expects instead (which says nothing of what was done). */
function expectReceipt(ctx: ScenarioContext, res: { status: number; body?: unknown; text: string } | undefined, receipt: { duplicate: boolean; applied: boolean }) {
  expect(res?.status, res?.text).toBe(200);
  if (ctx.harness.webhookAcknowledgement) expect(res!.text).toBe(ctx.harness.webhookAcknowledgement);
  else expect(res!.body).toEqual({ received: true, ...receipt });
}

/** A refund through the API, settled at the processor where it is taken pending first. */
async function refund(ctx: ScenarioContext, paymentId: string, amount?: number) {
  const res = await ctx.api.post('/v1/refunds', { payment: paymentId, ...(amount === undefined ? {} : { amount }) });
  expect(res.status, res.text).toBe(201);
  if (!ctx.harness.settleRefund) return res.body;
  expect(res.body.status).toBe('pending');
  await ctx.harness.settleRefund(ctx.processor, res.body.id);
  return (await ctx.api.get(`/v1/refunds/${res.body.id}`)).body;
}

async function eventsOf(api: Api, id: string) {
  const res = await api.get(`/v1/events?limit=100`);
  return (res.body.data as { type: string; data: { object: { id: string } } }[]).filter((e) => e.data.object.id === id).map((e) => e.type).reverse();
}

/** The processor acted but its answer says nothing certain: pending, never sent elsewhere; a status check finds the one charge. */
async function unknownThenVerified(ctx: ScenarioContext, code: string, outcome: string) {
  const order = await newOrder(ctx.api, { amount: 2200 });
  const idempotencyKey = `unknown-${order.id}`;
  const first = await pay(ctx.api, order.id, ctx.harness.cards.success, {}, { idempotencyKey });
  expect(first.status, first.text).toBe(201);
  expect(first.body).toMatchObject({ status: 'pending', connector: ctx.processor.connector });
  expect(attempts(first.body)).toEqual([[ctx.processor.connector, outcome, code]]);
  // The same request again (same key): its answer, not a second charge.
  const again = await pay(ctx.api, order.id, ctx.harness.cards.success, {}, { idempotencyKey });
  expect(again.text).toBe(first.text);
  let verified = await ctx.api.get(`/v1/payments/${first.body.id}?refresh=true`);
  if (!ctx.harness.capabilities.has('status_lookup')) {
    // Nothing to ask: the payment waits for the processor's webhook, sent here.
    expect(verified.body).toMatchObject({ status: 'pending', connector: ctx.processor.connector });
    expectReceipt(ctx, await send(ctx, first.body, 'succeeded'), { duplicate: false, applied: true });
    verified = await ctx.api.get(`/v1/payments/${first.body.id}`);
  }
  expect(verified.body).toMatchObject({ status: 'succeeded', connector: ctx.processor.connector, connector_reference: expect.any(String) });
  expect((await ctx.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
  await expectBooks(ctx, first.body.id, 1, 1);
}

/**
 * A payment with the harness's 3-D Secure card and a return_url: requires_action with next_action;
 * the customer answers the processor's challenge, comes back to our return endpoint, and is sent on
 * to the merchant's page. Returns the payment as the API shows it afterwards.
 */
async function customerAction(ctx: ScenarioContext, outcome: 'completed' | 'failed') {
  const order = await newOrder(ctx.api);
  const res = await pay(ctx.api, order.id, ctx.harness.actions!.card, { return_url: MERCHANT_RETURN });
  expect(res.status, res.text).toBe(201);
  const payment = res.body;
  expect(payment).toMatchObject({ status: 'requires_action', connector: ctx.processor.connector, next_action: { type: 'redirect_to_url', url: expect.any(String), return_url: MERCHANT_RETURN } });
  expect((await ctx.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('processing');
  const action = { ...payment, next_action: { ...payment.next_action, url: new URL(payment.next_action.url, ctx.url).toString() } };
  const back = new URL(await ctx.harness.actions!.answer(action, outcome), ctx.url).toString();
  expect(new URL(back).pathname).toMatch(new RegExp(`^/v1/payments/${payment.id}/return/`));
  const landed = await browse(back);
  expect(landed.status, landed.text).toBe(303);
  const merchant = new URL(landed.location!);
  expect(`${merchant.origin}${merchant.pathname}`).toBe(MERCHANT_RETURN.split('?')[0]);
  expect(merchant.searchParams.get('payment')).toBe(payment.id);
  return { order, payment, after: (await ctx.api.get(`/v1/payments/${payment.id}`)).body };
}

async function fellBack(ctx: ScenarioContext, code: string) {
  const { payment } = await orderAndPay(ctx.api, ctx.harness.cards.success);
  expect(payment).toMatchObject({ status: 'succeeded', connector: BACKUP });
  expect(attempts(payment)).toEqual([
    [ctx.processor.connector, 'error', code],
    [BACKUP, 'succeeded', null],
  ]);
  await expectBooks(ctx, payment.id, 0);
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'success: succeeded at once, the order paid, one charge at the processor',
    needs: [],
    async run(ctx) {
      const { order, payment } = await orderAndPay(ctx.api, ctx.harness.cards.success, { amount: 1500 });
      expect(payment).toMatchObject({ status: 'succeeded', amount: 1500, connector: ctx.processor.connector, connector_reference: expect.any(String) });
      expect(attempts(payment)).toEqual([[ctx.processor.connector, 'succeeded', null]]);
      expect((await ctx.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
      await expectBooks(ctx, payment.id, 1, 1);
    },
  },
  { name: 'decline: failed card_declined, no fallback', needs: [], run: (ctx) => declined(ctx, ctx.harness.cards.declined, 'card_declined') },
  { name: 'insufficient funds: failed insufficient_funds, no fallback', needs: [], run: (ctx) => declined(ctx, ctx.harness.cards.insufficientFunds, 'insufficient_funds') },
  {
    name: 'refunds: partial, then the rest; more is refused before reaching the processor',
    needs: ['refund_outcome'],
    async run(ctx) {
      const { api, harness } = ctx;
      const { payment } = await orderAndPay(api, harness.cards.success, { amount: 1000 });
      expect(await refund(ctx, payment.id, 400)).toMatchObject({ status: 'succeeded', amount: 400 });
      expect(await refund(ctx, payment.id)).toMatchObject({ status: 'succeeded', amount: 600 });
      expect((await api.get(`/v1/payments/${payment.id}`)).body.amount_refunded).toBe(1000);
      const more = await api.post('/v1/refunds', { payment: payment.id, amount: 1 });
      expect(more.status, more.text).toBe(422);
      expect(more.body.error.code).toBe('amount_above_refundable');
      if (harness.books) expect(await harness.books.refunded(payment.id)).toBe(1000);
    },
  },
  {
    name: 'pending, then settled by the processor’s webhook',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { order, payment } = await pendingThenSettled(ctx);
      expectReceipt(ctx, await send(ctx, payment, 'succeeded'), { duplicate: false, applied: true });
      expect((await ctx.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', connector: ctx.processor.connector });
      expect((await ctx.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
      await expectBooks(ctx, payment.id, 1, 1);
    },
  },
  {
    name: 'a duplicate webhook is applied once',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payment } = await pendingThenSettled(ctx);
      const webhook = ctx.harness.webhook!(ctx.processor, payment, 'succeeded')!;
      expectReceipt(ctx, await postWebhook(ctx.processor.webhookUrl, webhook), { duplicate: false, applied: true });
      expectReceipt(ctx, await postWebhook(ctx.processor.webhookUrl, webhook), { duplicate: true, applied: false });
      expect(await eventsOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    },
  },
  {
    name: 'webhooks out of order: an older state after the final one changes nothing',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payment } = await pendingThenSettled(ctx);
      expectReceipt(ctx, await send(ctx, payment, 'succeeded'), { duplicate: false, applied: true });
      const settled = (await ctx.api.get(`/v1/payments/${payment.id}`)).body;
      for (const older of ['pending', 'failed'] as const) {
        const res = await send(ctx, payment, older);
        if (res) expect(res.status, res.text).toBe(200);
      }
      expect((await ctx.api.get(`/v1/payments/${payment.id}`)).body).toEqual(settled);
      expect(await eventsOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.pending', 'payment.succeeded']);
    },
  },
  {
    name: 'webhooks signed with another secret, or with a stale timestamp, are refused and change nothing',
    needs: ['webhooks'],
    async run(ctx) {
      const { payment } = await orderAndPay(ctx.api, ctx.harness.cards.success);
      for (const [signing, code] of [['wrong_secret', 'connector_webhook_signature_invalid'], ['stale', 'connector_webhook_timestamp_stale']] as const) {
        const res = await send(ctx, payment, 'failed', signing);
        if (!res) continue;
        expect(res.status, res.text).toBe(401);
        expect(res.body.error).toMatchObject({ type: 'authentication', code });
      }
      expect((await ctx.api.get(`/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'succeeded', version: payment.version });
    },
  },
  { name: 'refused before acting (429 or its equivalent): the next connector takes it', needs: ['faults'], run: (ctx) => (ctx.harness.faults!.refuseNext(), fellBack(ctx, 'processor_error')) },
  {
    name: 'connection refused: nothing was sent, the next connector takes it',
    needs: ['faults'],
    async run(ctx) {
      const restore = await ctx.harness.faults!.refuseConnections();
      try {
        await fellBack(ctx, 'connection_refused');
      } finally {
        await restore();
      }
    },
  },
  {
    name: '500 after acting: unknown, no fallback; a same-key retry and a status check find one charge',
    needs: ['faults'],
    run: (ctx) => (ctx.harness.faults!.serverErrorAfterNext(), unknownThenVerified(ctx, 'invalid_response', 'error')),
  },
  {
    name: 'no answer before the deadline after sending: unknown, no fallback; a status check resolves it',
    needs: ['faults'],
    run: (ctx) => (ctx.harness.faults!.hangAfterNext(), unknownThenVerified(ctx, 'timeout', 'timeout')),
  },
  // ---- Customer actions (3-D Secure): requires_action → completed / failed. ----
  {
    name: 'requires action, then completed: back through the return endpoint, succeeded, the order paid',
    needs: ['customer_actions'],
    async run(ctx) {
      const { order, payment, after } = await customerAction(ctx, 'completed');
      expect(after).toMatchObject({ status: 'succeeded', next_action: null, connector: ctx.processor.connector });
      expect((await ctx.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('paid');
      expect(await eventsOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.succeeded']);
      await expectBooks(ctx, payment.id, 1, 1);
    },
  },
  {
    name: 'requires action, then failed: authentication_failed, never sent elsewhere, the order open',
    needs: ['customer_actions'],
    async run(ctx) {
      const { order, payment, after } = await customerAction(ctx, 'failed');
      expect(after).toMatchObject({ status: 'failed', failure_code: 'authentication_failed', next_action: null, connector: ctx.processor.connector });
      // One attempt, the call that asked for the action: the outcome came from the customer, not another connector.
      expect(attempts(after)).toEqual([[ctx.processor.connector, 'requires_action', null]]);
      expect((await ctx.api.get(`/v1/payment-orders/${order.id}`)).body.status).toBe('open');
      expect(await eventsOf(ctx.api, payment.id)).toEqual(['payment.created', 'payment.requires_action', 'payment.failed']);
      await expectBooks(ctx, payment.id, 1, 1);
    },
  },
];

/** The scenarios `harness` can run (a direct-debit processor runs only those about mandates). */
export const runnable = (harness: ProcessorHarness, scenario: Scenario) =>
  scenario.needs.every((need) => harness.capabilities.has(need)) && (scenario.needs.some((need) => need === 'mandates' || need === 'mandate_setup') || !harness.directDebitOnly);
