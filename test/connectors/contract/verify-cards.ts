// Saving a card without paying (POST /v1/payment-methods), over every card connector: the zero-amount
// verification at the processor itself (the route narrowed to it for the scenario), declined,
// with 3-D Secure completed or failed through our return endpoint, or without a way back; and the
// route preferring a connector whose verification answers a network transaction id (Stripe's
// SetupIntent answers none, so the backup verifies instead).
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { created } from '../../support/helpers.js';
import { browse } from '../../support/payments.actions.js';
import { parseId } from '../../../src/kernel/ids.js';
import { verificationGivesNetworkId } from '../../../src/connectors/catalogue.js';
import { BACKUP, routeThrough, type Scenario, type ScenarioContext } from './scenarios.js';

const nextYear = new Date().getUTCFullYear() + 1;
const RETURN = 'https://shop.example.com/cards?step=2';

async function verify(ctx: ScenarioContext, number: string, extra: Record<string, unknown> = {}) {
  const c = await created(ctx.api, '/v1/customers', { email: 'ada@example.com' });
  const card = { number, exp_month: 12, exp_year: nextYear, cvc: '123' };
  const res = await ctx.api.post('/v1/payment-methods', { customer: c.id, card, usage: 'off_session', ...extra }, { idempotencyKey: `verify-${Math.random()}` });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const rowOf = async (ctx: ScenarioContext, id: string) => (await ctx.query!(sql`SELECT * FROM payment_methods WHERE id = ${parseId('pm', id)}`))[0]!;

/** Runs `body` with the route narrowed to the processor alone, then puts the contract's route back. */
async function atProcessorAlone(ctx: ScenarioContext, body: () => Promise<void>) {
  const res = await ctx.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [ctx.processor.route] }] } });
  expect(res.status, res.text).toBe(200);
  try {
    await body();
  } finally {
    await routeThrough(ctx.api, ctx.processor);
  }
}

/** Whether the processor's verification answers a network transaction id (the catalogue says; a sandbox harness is named after its processor). */
const givesNetworkId = (ctx: ScenarioContext) => verificationGivesNetworkId(ctx.harness.name.split(' ')[0]!);

async function challenged(ctx: ScenarioContext, outcome: 'completed' | 'failed') {
  await atProcessorAlone(ctx, async () => {
    const pm = await verify(ctx, ctx.harness.actions!.card, { return_url: RETURN });
    expect(pm).toMatchObject({ status: 'requires_action', next_action: { type: 'redirect_to_url', return_url: RETURN } });
    const action = { ...pm, amount: 0, currency: 'USD', connector_reference: null, next_action: { url: new URL(pm.next_action.url, ctx.url).toString() } };
    const back = new URL(await ctx.harness.actions!.answer(action, outcome), ctx.url).toString();
    expect(new URL(back).pathname).toMatch(new RegExp(`^/v1/payment-methods/${pm.id}/return/`));
    const landed = await browse(back);
    expect(landed.status, landed.text).toBe(303);
    expect(Object.fromEntries(new URL(landed.location!).searchParams)).toEqual({ step: '2', payment_method: pm.id });
    const after = (await ctx.api.get(`/v1/payment-methods/${pm.id}`)).body;
    if (outcome === 'completed') expect(after).toMatchObject({ status: 'active', next_action: null, failure_code: null });
    else expect(after).toMatchObject({ status: 'failed', next_action: null, failure_code: 'authentication_failed' });
    if (!ctx.query) return;
    const row = await rowOf(ctx, pm.id);
    expect(row.connector).toBe(ctx.processor.connector);
    if (outcome === 'failed') expect(row.vault_record_id).toBeNull();
    else if (ctx.harness.books && givesNetworkId(ctx)) expect(row.network_transaction_id).toEqual(expect.stringMatching(/^\w{8,}$/));
  });
}

export const VERIFY_CARD_SCENARIOS: readonly Scenario[] = [
  {
    name: 'verify without paying: a zero-amount verification at the processor saves the card active, with the network transaction id it answers (none from Stripe)',
    needs: [],
    async run(ctx) {
      await atProcessorAlone(ctx, async () => {
        const pm = await verify(ctx, ctx.harness.cards.success);
        expect(pm).toMatchObject({ status: 'active', usage: 'off_session', failure_code: null, next_action: null, card: { last4: ctx.harness.cards.success.slice(-4) } });
        if (!ctx.query) return;
        const row = await rowOf(ctx, pm.id);
        expect(row.connector).toBe(ctx.processor.connector);
        if (ctx.harness.books) expect(row.network_transaction_id).toEqual(givesNetworkId(ctx) ? expect.stringMatching(/^\w{8,}$/) : null);
      });
    },
  },
  {
    name: 'verify without paying, declined: failed with failure_code, its sealed card erased, never sent to the next connector',
    needs: [],
    async run(ctx) {
      await atProcessorAlone(ctx, async () => {
        const pm = await verify(ctx, ctx.harness.cards.declined);
        expect(pm).toMatchObject({ status: 'failed', failure_code: 'card_declined' });
        if (ctx.query) expect(await rowOf(ctx, pm.id)).toMatchObject({ connector: ctx.processor.connector, vault_record_id: null, network_transaction_id: null });
      });
    },
  },
  {
    name: 'verify without paying, 3-D Secure completed: requires_action, then active through the return endpoint',
    needs: ['customer_actions'],
    run: (ctx) => challenged(ctx, 'completed'),
  },
  {
    name: 'verify without paying, 3-D Secure failed: requires_action, then failed authentication_failed, the card erased',
    needs: ['customer_actions'],
    run: (ctx) => challenged(ctx, 'failed'),
  },
  {
    name: 'verify without paying, 3-D Secure asked with no way back to the customer: failed authentication_required',
    needs: ['customer_actions'],
    async run(ctx) {
      await atProcessorAlone(ctx, async () => {
        expect(await verify(ctx, ctx.harness.actions!.card)).toMatchObject({ status: 'failed', failure_code: 'authentication_required', next_action: null });
      });
    },
  },
  {
    name: 'verify without paying: the route prefers a connector whose verification answers a network transaction id',
    needs: ['books'],
    async run(ctx) {
      const pm = await verify(ctx, ctx.harness.cards.success);
      expect(pm.status).toBe('active');
      const row = await rowOf(ctx, pm.id);
      expect(row.connector).toBe(givesNetworkId(ctx) ? ctx.processor.connector : BACKUP);
      expect(row.network_transaction_id).toEqual(expect.stringMatching(/^\w{8,}$/));
    },
  },
];
