// Saving a card while paying, over every card connector (docs/customers.md): the payment names
// its saved pm_, and, where the harness runs against a fake that answers as the processor does
// for the first payment of a stored-credential series (Stripe: the charge expanded with its
// network transaction id; Adyen: networkTxReference for a recurringProcessingModel), the method
// keeps that id; a declined payment saves nothing.
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { created } from '../../support/helpers.js';
import { newOrder, pay } from '../../support/payments.js';
import { parseId } from '../../../src/kernel/ids.js';
import type { Scenario } from './scenarios.js';

const customer = (ctx: Parameters<Scenario['run']>[0]) => created(ctx.api, '/v1/customers', { email: 'ada@example.com' });

export const SAVED_CARD_SCENARIOS: readonly Scenario[] = [
  {
    name: 'save while paying: the succeeded payment names its pm_, which keeps the network transaction id the processor answered',
    needs: [],
    async run(ctx) {
      const c = await customer(ctx);
      for (const usage of ['on_session', 'off_session']) {
        const res = await pay(ctx.api, (await newOrder(ctx.api)).id, ctx.harness.cards.success, { customer: c.id, setup_future_usage: usage });
        expect(res.body).toMatchObject({ status: 'succeeded', connector: ctx.processor.connector });
        const pm = (await ctx.api.get(`/v1/payment-methods/${res.body.payment_method_saved}`)).body;
        expect(pm).toMatchObject({ customer: c.id, usage, status: 'active', card: { last4: ctx.harness.cards.success.slice(-4) } });
        if (!ctx.harness.books || !ctx.query) continue;
        const [row] = await ctx.query(sql`SELECT network_transaction_id FROM payment_methods WHERE id = ${parseId('pm', pm.id)}`);
        expect(row!.network_transaction_id).toEqual(expect.stringMatching(/^\w{8,}$/));
      }
    },
  },
  {
    name: 'save while paying, declined: nothing saved',
    needs: [],
    async run(ctx) {
      const c = await customer(ctx);
      const res = await pay(ctx.api, (await newOrder(ctx.api)).id, ctx.harness.cards.declined, { customer: c.id, setup_future_usage: 'off_session' });
      expect(res.body).toMatchObject({ status: 'failed', failure_code: 'card_declined', payment_method_saved: null });
      expect((await ctx.api.get(`/v1/payment-methods?customer=${c.id}`)).body.data).toEqual([]);
    },
  },
];
