// The contract of cascading retries across two processors' fakes (docs/declines.md): a payment
// declined at Stripe with a type its rule cascades becomes attempt 2 at Adyen, sent under
// `pay_…_2`; Adyen's do_not_retry (Blocked Card) stops the cascade before Stripe is called. Each
// fake's own books show what it holds under which reference: one authorisation per payment. The
// issuer's soft decline (authentication_required) of a customer present is retried at the same
// processor with 3-D Secure requested; what follows the attempt that took the payment (a capture
// whose answer was lost, checked by the worker) names it by that attempt's reference.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { newOrder, pay } from '../support/payments.js';
import { MERCHANT_RETURN } from '../support/payments.actions.js';
import { ADYEN_CARDS } from '../support/fakes/adyen.js';
import { STRIPE_CARDS } from '../support/fakes/stripe.js';
import type { Connected } from './contract/harness.js';
import { useServiceOnStripeAndAdyen } from './contract/stripe-and-adyen.js';

describe('cascade across Stripe and Adyen (fakes)', () => {
  const { h, stripe, adyen, connected } = useServiceOnStripeAndAdyen();
  const route = async (first: Connected, second: Connected) => {
    const body = { rules: [{ connectors: [first.route, second.route], cascade: { on: ['generic', 'retry_later'], max_attempts: 2 } }] };
    const res = await h.api.request('PUT', '/v1/routing', { body });
    expect(res.status, res.text).toBe(200);
  };

  it('Stripe declines (card_velocity_exceeded: retry_later), Adyen approves attempt 2 under pay_…_2: one authorisation in all', async () => {
    await route(connected.stripe, connected.adyen);
    const res = await pay(h.api, (await newOrder(h.api)).id, STRIPE_CARDS.velocity);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'succeeded', connector: connected.adyen.connector, decline_type: null });
    expect(res.body.attempts).toEqual([
      expect.objectContaining({ connector: connected.stripe.connector, outcome: 'declined', decline_type: 'retry_later' }),
      expect.objectContaining({ connector: connected.adyen.connector, outcome: 'succeeded' }),
    ]);
    const id = res.body.id as string;
    // Stripe holds the declined attempt 1 under the payment's id, Adyen the authorised attempt 2 under id_2; nothing else.
    expect(await stripe.books!.chargesHeld(id)).toBe(1);
    expect(await stripe.books!.chargesHeld(`${id}_2`)).toBe(0);
    expect(await adyen.books!.chargesHeld(id)).toBe(0);
    expect(await adyen.books!.chargesHeld(`${id}_2`)).toBe(1);
    expect(await adyen.books!.chargeRequests(`${id}_2`)).toBe(1);
  });

  it('a generic decline at both: attempt 2 declined at Adyen, the payment failed with the last attempt', async () => {
    await route(connected.stripe, connected.adyen);
    const res = await pay(h.api, (await newOrder(h.api)).id, STRIPE_CARDS.doNotHonor);
    expect(res.body).toMatchObject({ status: 'failed', connector: connected.adyen.connector, decline_type: 'generic', failure_code: 'card_declined' });
    expect(res.body.attempts.map((a: { outcome: string; decline_type: string }) => [a.outcome, a.decline_type])).toEqual([
      ['declined', 'generic'],
      ['declined', 'generic'],
    ]);
  });

  it('Adyen first: Blocked Card (do_not_retry) stops the cascade, Stripe is never called', async () => {
    await route(connected.adyen, connected.stripe);
    const res = await pay(h.api, (await newOrder(h.api)).id, '4000000000000853');
    expect(res.body).toMatchObject({ status: 'failed', connector: connected.adyen.connector, decline_type: 'do_not_retry' });
    expect(res.body.attempts).toHaveLength(1);
    const id = res.body.id as string;
    expect(await stripe.books!.chargeRequests(id)).toBe(0);
    expect(await stripe.books!.chargeRequests(`${id}_2`)).toBe(0);
  });

  const threeDsRetry = async (at: Connected) => {
    const body = { rules: [{ connectors: [at.route], cascade: { on: ['authentication_required'], max_attempts: 2 } }] };
    expect((await h.api.request('PUT', '/v1/routing', { body })).status).toBe(200);
  };

  it.each(['stripe', 'adyen'] as const)('%s: the soft decline retried at the same processor with 3-D Secure requested (pay_…_2): requires_action', async (name) => {
    const at = name === 'stripe' ? connected.stripe : connected.adyen;
    const books = (name === 'stripe' ? stripe : adyen).books!;
    await threeDsRetry(at);
    const res = await pay(h.api, (await newOrder(h.api)).id, STRIPE_CARDS.softDecline, { return_url: MERCHANT_RETURN });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'requires_action', connector: at.connector, next_action: { type: 'redirect_to_url' } });
    expect(res.body.attempts.map((a: { outcome: string; decline_type: string | null }) => [a.outcome, a.decline_type])).toEqual([
      ['declined', 'authentication_required'],
      ['requires_action', null],
    ]);
    const id = res.body.id as string;
    expect([await books.chargeRequests(id), await books.chargeRequests(`${id}_2`)]).toEqual([1, 1]);
    // Without a return_url nobody can authenticate: the decline stands, nothing more is sent.
    const alone = await pay(h.api, (await newOrder(h.api)).id, STRIPE_CARDS.softDecline);
    expect(alone.body).toMatchObject({ status: 'failed', failure_code: 'authentication_required', decline_type: 'authentication_required' });
    expect(await books.chargeRequests(`${alone.body.id}_2`)).toBe(0);
  });

  /** Stripe captures and its answer is lost (a 500 after acting): the capture stays pending until the worker's check. */
  const captureLostThenChecked = async (paymentId: string, beforeCheck?: (captureId: string) => Promise<unknown>) => {
    stripe.faults!.serverErrorAfterNext();
    const capture = await h.api.post(`/v1/payments/${paymentId}/capture`, {});
    expect(capture.body, capture.text).toMatchObject({ status: 'pending' });
    await beforeCheck?.(capture.body.id);
    h.service.clock.advance(15 * 60_000);
    await h.service.runWorker();
    return capture;
  };

  it('a capture of attempt 2 whose answer was lost: the worker asks Stripe about pay_…_2, the authorisation that took it, and finds it captured', async () => {
    await threeDsRetry(connected.stripe);
    const order = await newOrder(h.api, { capture_method: 'manual' });
    const res = await pay(h.api, order.id, STRIPE_CARDS.softDecline, { return_url: MERCHANT_RETURN });
    expect(res.body, res.text).toMatchObject({ status: 'requires_action', connector: connected.stripe.connector });
    // The customer authenticates: Stripe holds attempt 2 authorised (requires_capture).
    await stripe.settle!(res.body, 'succeeded');
    const authorised = await h.api.get(`/v1/payments/${res.body.id}?refresh=true`);
    expect(authorised.body, authorised.text).toMatchObject({ status: 'requires_capture', amount_capturable: order.amount });
    const capture = await captureLostThenChecked(res.body.id);
    // Found captured where attempt 2 is (not the declined attempt 1 under the payment's id), without sending it again.
    expect((await h.api.get(`/v1/captures/${capture.body.id}`)).body).toMatchObject({ status: 'succeeded', amount: order.amount });
    expect(await stripe.books!.chargeRequests(capture.body.id)).toBe(1);
    expect((await h.api.get(`/v1/payments/${res.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: order.amount });
  });

  it('Adyen declines, Stripe authorises attempt 2: a lost capture answer is settled by asking Stripe about pay_…_2, never sent twice', async () => {
    await route(connected.adyen, connected.stripe);
    const order = await newOrder(h.api, { capture_method: 'manual' });
    const res = await pay(h.api, order.id, ADYEN_CARDS.refused(2));
    expect(res.body, res.text).toMatchObject({ status: 'requires_capture', connector: connected.stripe.connector });
    const capture = await captureLostThenChecked(res.body.id);
    expect((await h.api.get(`/v1/captures/${capture.body.id}`)).body).toMatchObject({ status: 'succeeded' });
    expect(await stripe.books!.chargeRequests(capture.body.id)).toBe(1);
  });

  it('a capture made before its authorisation reference was recorded (payment_reference NULL) is asked about under the payment\'s attempt, pay_…_2', async () => {
    await route(connected.adyen, connected.stripe);
    const order = await newOrder(h.api, { capture_method: 'manual' });
    const res = await pay(h.api, order.id, ADYEN_CARDS.refused(2));
    expect(res.body, res.text).toMatchObject({ status: 'requires_capture', connector: connected.stripe.connector });
    const capture = await captureLostThenChecked(res.body.id, (id) => h.query(sql`UPDATE captures SET payment_reference = NULL WHERE id = ${parseId('cap', id)!}`));
    expect((await h.api.get(`/v1/captures/${capture.body.id}`)).body).toMatchObject({ status: 'succeeded' });
    expect(await stripe.books!.chargeRequests(capture.body.id)).toBe(1);
    expect((await h.api.get(`/v1/payments/${res.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_captured: order.amount });
  });
});
