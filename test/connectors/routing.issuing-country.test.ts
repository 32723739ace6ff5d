// The issuing country of a payment's routing segment (docs/routing.md "Segments"): there is no BIN
// table, so a typed card is routed in the unknown segment; the processor's answer names the
// country (Stripe's card.country, Adyen's additionalData.issuerCountry), which is recorded on the
// payment and learnt by the saved card (pm_) it was or is charged with, whose later payments are
// routed — and counted in GET /v1/routing/stats — in that country's segment.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { newCustomer, savedCard } from '../support/customers.js';
import { newOrder, pay } from '../support/payments.js';
import { ISSUER_COUNTRY } from '../support/fakes/adyen.js';
import { ISSUING_COUNTRY } from '../support/fakes/stripe.js';
import type { Connected } from './contract/harness.js';
import { useServiceOnStripeAndAdyen } from './contract/stripe-and-adyen.js';

describe('the issuing country: reported by the processor, learnt by the saved card, its segment', () => {
  const { h, connected } = useServiceOnStripeAndAdyen();
  const routeTo = async (at: Connected) => {
    expect((await h.api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [at.route] }] } })).status).toBe(200);
  };
  const cardOf = async (paymentId: string) =>
    (await h.query(sql`SELECT payment_method->'card' AS card FROM payments WHERE id = ${parseId('pay', paymentId)!}`))[0]!.card as Record<string, unknown>;
  const countryOf = async (pm: string) => (await h.query(sql`SELECT card_issuing_country FROM payment_methods WHERE id = ${parseId('pm', pm)!}`))[0]!.card_issuing_country;
  const payWith = async (pm: string) => h.api.post('/v1/payments', { payment_order: (await newOrder(h.api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm } } });

  it('Stripe: a typed card is routed as unknown, its country recorded; the card it saves knows it, and its next payment is in that segment', async () => {
    await routeTo(connected.stripe);
    const customer = await newCustomer(h.api);
    const first = await pay(h.api, (await newOrder(h.api)).id, '4242424242424242', { customer: customer.id, setup_future_usage: 'off_session' });
    expect(first.body, first.text).toMatchObject({ status: 'succeeded', connector: connected.stripe.connector });
    const typed = await cardOf(first.body.id);
    expect(typed.issuing_country).toBeUndefined();
    expect(typed.reported_issuing_country).toBe(ISSUING_COUNTRY);
    const pm = first.body.payment_method_saved as string;
    expect(await countryOf(pm)).toBe(ISSUING_COUNTRY);

    const again = await payWith(pm);
    expect(again.body, again.text).toMatchObject({ status: 'succeeded' });
    expect((await cardOf(again.body.id)).issuing_country).toBe(ISSUING_COUNTRY);
    const stats = await h.api.get('/v1/routing/stats');
    const rows = (stats.body.data as { connector: string; issuing_country: string | null; attempts: number }[]).filter((r) => r.connector === connected.stripe.connector);
    expect(rows).toEqual(
      expect.arrayContaining([expect.objectContaining({ issuing_country: null, attempts: 1 }), expect.objectContaining({ issuing_country: ISSUING_COUNTRY, attempts: 1 })]),
    );
  });

  it("Adyen: a saved card that did not know its country learns it from its first payment's answer, declined or not", async () => {
    await routeTo(connected.adyen);
    const owner = { accountId: h.tenant.accountId, livemode: false };
    const pm = await savedCard(h.db, owner, (await newCustomer(h.api)).id);
    expect(await countryOf(pm.id)).toBeNull();
    const res = await payWith(pm.id);
    expect(res.body, res.text).toMatchObject({ status: 'succeeded', connector: connected.adyen.connector });
    expect((await cardOf(res.body.id)).issuing_country).toBeUndefined();
    expect(await countryOf(pm.id)).toBe(ISSUER_COUNTRY);
    expect((await cardOf((await payWith(pm.id)).body.id)).issuing_country).toBe(ISSUER_COUNTRY);
  });
});
