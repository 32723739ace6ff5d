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
import { BACKUP, type Scenario } from './scenarios.js';
import { savedCard, sealedCard } from '../../support/customers.js';

type Ctx = Parameters<Scenario['run']>[0];
const customer = (ctx: Ctx) => created(ctx.api, '/v1/customers', { email: 'ada@example.com' });

/** A card saved for off_session by a succeeded payment at the processor: its pm_. */
async function saveByPaying(ctx: Ctx, number = ctx.harness.cards.success): Promise<string> {
  const res = await pay(ctx.api, (await newOrder(ctx.api)).id, number, { customer: (await customer(ctx)).id, setup_future_usage: 'off_session' });
  expect(res.body.payment_method_saved, res.text).toMatch(/^pm_/);
  return res.body.payment_method_saved;
}

/** A card of any number saved as a payment saves it, citing the network transaction id of one the processor answered. */
async function savedAs(ctx: Ctx, number: string): Promise<string> {
  const { db, owner } = ctx.saving!;
  const first = await saveByPaying(ctx);
  const [row] = await ctx.query!(sql`SELECT network_transaction_id FROM payment_methods WHERE id = ${parseId('pm', first)}`);
  const c = await customer(ctx);
  const pm = await savedCard(db, owner, c.id, { vaultRecordId: await sealedCard(db, owner, number), networkTransactionId: row!.network_transaction_id as string });
  return pm.id;
}

const payOffSession = async (ctx: Ctx, pm: string, reason = 'unscheduled') =>
  ctx.api.post('/v1/payments', { payment_order: (await newOrder(ctx.api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm } }, off_session: true, off_session_reason: reason });

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
    name: 'off session: a card saved here is charged without the customer, with the merchant-initiated fields the fake checks',
    needs: [],
    async run(ctx) {
      const pm = await saveByPaying(ctx);
      for (const reason of ['unscheduled', 'subscription']) {
        const res = await payOffSession(ctx, pm, reason);
        expect(res.body).toMatchObject({ status: 'succeeded', connector: ctx.processor.connector, attempts: [{ connector: ctx.processor.connector, outcome: 'succeeded' }] });
      }
    },
  },
  {
    name: 'off session, declined: failed card_declined, no fallback, the card stays saved',
    needs: ['books'],
    async run(ctx) {
      const pm = await savedAs(ctx, ctx.harness.cards.declined);
      const res = await payOffSession(ctx, pm);
      expect(res.body).toMatchObject({ status: 'failed', failure_code: 'card_declined', attempts: [{ connector: ctx.processor.connector, outcome: 'declined' }] });
      expect((await ctx.api.get(`/v1/payment-methods/${pm}`)).body.status).toBe('active');
    },
  },
  {
    name: 'off session, the processor asks for 3-D Secure: failed authentication_required, never a customer action',
    needs: ['books', 'customer_actions'],
    async run(ctx) {
      const pm = await savedAs(ctx, ctx.harness.actions!.card);
      const res = await payOffSession(ctx, pm);
      expect(res.body).toMatchObject({ status: 'failed', failure_code: 'authentication_required', next_action: null, connector: ctx.processor.connector });
    },
  },
  {
    name: 'off session, fallback: the processor refuses before acting, the saved card is charged by the next card connector',
    needs: ['faults'],
    async run(ctx) {
      const pm = await saveByPaying(ctx);
      ctx.harness.faults!.refuseNext();
      const res = await payOffSession(ctx, pm);
      expect(res.body).toMatchObject({ status: 'succeeded', connector: BACKUP });
      expect(res.body.attempts.map((a: { connector: string }) => a.connector)).toEqual([ctx.processor.connector, BACKUP]);
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
