// Mastercard's merchant advice 24–30 (retry after 1 hour … 10 days) through the service against
// the processors' fakes (docs/declines.md "Reattempt limits"): Adyen passes the advice on in
// `additionalData.merchantAdviceCode`, Stripe in `network_advice_code`. The decline is recorded
// with its advice on the card's reattempt record, and no reattempt of the card — a cascaded
// attempt, an off-session payment — is sent before the advised wait has passed: the payment fails
// retry_limit_reached and no connector is called. Once the wait has passed the card may be tried.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { newCustomer, savedCard, sealedCard } from '../support/customers.js';
import { newOrder, pay } from '../support/payments.js';
import { ADYEN_CARDS } from '../support/fakes/adyen.js';
import { STRIPE_CARDS } from '../support/fakes/stripe.js';
import type { Connected } from './contract/harness.js';
import { useServiceOnStripeAndAdyen } from './contract/stripe-and-adyen.js';

describe('merchant advice 24–30: no reattempt before the advised wait (Stripe and Adyen fakes)', () => {
  const { h, stripe, adyen, connected } = useServiceOnStripeAndAdyen();
  const route = async (connectors: Connected[], cascade?: unknown) => {
    const body = { rules: [{ connectors: connectors.map((c) => c.route), ...(cascade ? { cascade } : {}) }] };
    expect((await h.api.request('PUT', '/v1/routing', { body })).status).toBe(200);
  };
  const cascading = { on: ['retry_later'], max_attempts: 2 };
  const advice = (paymentId: string) => h.query(sql`SELECT kind, decline_type, merchant_advice FROM card_reattempts WHERE payment_id = ${parseId('pay', paymentId)!}`);

  it('Adyen advice 24 (retry after 1 hour): the cascade is refused unsent, as is an off-session payment within the hour; after it, the card is tried', async () => {
    await route([connected.adyen, connected.stripe], cascading);
    const first = await pay(h.api, (await newOrder(h.api)).id, ADYEN_CARDS.adviceRetryLater);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ status: 'failed', failure_code: 'retry_limit_reached', decline_type: 'retry_later', connector: connected.adyen.connector });
    expect(first.body.failure_message).toMatch(/merchant advice 24 \(retry after 1 hour\)/);
    expect(first.body.attempts).toHaveLength(1);
    expect(await stripe.books!.chargeRequests(`${first.body.id}_2`)).toBe(0);
    expect(await advice(first.body.id)).toEqual([{ kind: 'declined', decline_type: 'retry_later', merchant_advice: '24' }]);

    await offSessionWithinTheWait(first.body.id);
  });

  it('Adyen advice 24 on a payment without a cascade: recorded with the decline, and an off-session payment within the hour is refused unsent', async () => {
    await route([connected.adyen]);
    const first = await pay(h.api, (await newOrder(h.api)).id, ADYEN_CARDS.adviceRetryLater);
    expect(first.body, first.text).toMatchObject({ status: 'failed', failure_code: 'card_declined', decline_type: 'retry_later', connector: connected.adyen.connector });
    expect(await advice(first.body.id)).toEqual([{ kind: 'declined', decline_type: 'retry_later', merchant_advice: '24' }]);
    await offSessionWithinTheWait(first.body.id);
  });

  it('advice 24 on a Visa card holds nothing back: the advice codes are Mastercard\'s', async () => {
    await route([connected.adyen]);
    const owner = { accountId: h.tenant.accountId, livemode: false };
    const fingerprint = `fp_visa_${crypto.randomBytes(6).toString('hex')}`;
    await h.query(
      sql`INSERT INTO card_reattempts (account_id, livemode, card_fingerprint, brand, kind, decline_type, merchant_advice, payment_id, created_at)
          VALUES (${parseId('acct', h.tenant.accountId)!}, false, ${fingerprint}, 'visa', 'declined', 'retry_later', '24', ${crypto.randomUUID()}, ${h.service.clock.now()})`,
    );
    const pm = await savedCard(h.db, owner, (await newCustomer(h.api)).id, {
      vaultRecordId: await sealedCard(h.db, owner, ADYEN_CARDS.success),
      card: { brand: 'visa', last4: '1142', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, fingerprint, funding: 'credit' },
      networkTransactionId: `ntid${crypto.randomBytes(6).toString('hex')}`,
    });
    const res = await h.api.post('/v1/payments', { payment_order: (await newOrder(h.api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm.id } }, off_session: true });
    expect(res.body, res.text).toMatchObject({ status: 'succeeded' });
    expect(await adyen.books!.chargeRequests(res.body.id)).toBe(1);
  });

  /** The card `paymentId` charged, saved and charged off session (a reattempt: it was declined lately): refused within the hour, sent after it. */
  async function offSessionWithinTheWait(paymentId: string) {
    const owner = { accountId: h.tenant.accountId, livemode: false };
    const [card] = await h.query(sql`SELECT payment_method->'card' AS card FROM payments WHERE id = ${parseId('pay', paymentId)!}`);
    const { brand, last4, fingerprint } = card!.card as { brand: 'mastercard'; last4: string; fingerprint: string };
    expect(brand).toBe('mastercard');
    const pm = await savedCard(h.db, owner, (await newCustomer(h.api)).id, {
      vaultRecordId: await sealedCard(h.db, owner, ADYEN_CARDS.adviceRetryLater),
      card: { brand, last4, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, fingerprint, funding: 'credit' },
      networkTransactionId: `ntid${crypto.randomBytes(6).toString('hex')}`,
    });
    await route([connected.adyen]);
    const offSession = async () => {
      const res = await h.api.post('/v1/payments', { payment_order: (await newOrder(h.api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm.id } }, off_session: true });
      expect(res.status, res.text).toBe(201);
      return res.body;
    };
    const early = await offSession();
    expect(early).toMatchObject({ status: 'failed', failure_code: 'retry_limit_reached' });
    expect(early.failure_message).toMatch(/merchant advice 24/);
    expect(await adyen.books!.chargeRequests(early.id)).toBe(0);

    h.service.clock.advance(61 * 60_000);
    const later = await offSession();
    // Sent, and declined by the issuer again: the advice no longer holds it back.
    expect(later).toMatchObject({ status: 'failed', failure_code: 'card_declined', decline_type: 'retry_later' });
    expect(await adyen.books!.chargeRequests(later.id)).toBe(1);
  }

  it('Stripe network_advice_code 25 (retry after 24 hours): the cascade to Adyen is refused unsent', async () => {
    await route([connected.stripe, connected.adyen], cascading);
    const res = await pay(h.api, (await newOrder(h.api)).id, STRIPE_CARDS.adviceRetryIn24Hours);
    expect(res.body, res.text).toMatchObject({ status: 'failed', failure_code: 'retry_limit_reached', decline_type: 'retry_later', connector: connected.stripe.connector });
    expect(res.body.failure_message).toMatch(/merchant advice 25 \(retry after 24 hours\)/);
    expect(await adyen.books!.chargeRequests(`${res.body.id}_2`)).toBe(0);
    expect(await advice(res.body.id)).toEqual([{ kind: 'declined', decline_type: 'retry_later', merchant_advice: '25' }]);
  });
});
