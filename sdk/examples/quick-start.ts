// The SDK's quick start as an integrator writes it, against the installed package: a payment
// order, a payment with the test success card, and the order read back as paid. Run with
// PAYMENTS_API_KEY (an sk_test_… key) and PAYMENTS_BASE_URL (e.g. http://127.0.0.1:3000);
// scripts/sdk-pack-check.ts type-checks it and runs it against a packed, installed SDK.
import { createClient, PaymentApiError } from '@payment-orchestrator/sdk';

const apiKey = process.env.PAYMENTS_API_KEY;
const baseUrl = process.env.PAYMENTS_BASE_URL;
if (!apiKey || !baseUrl) throw new Error('set PAYMENTS_API_KEY and PAYMENTS_BASE_URL');

const payments = createClient({ apiKey, baseUrl });

// Each POST carries an Idempotency-Key the client makes (and reuses on a retry).
const order = await payments.POST('/v1/payment-orders', {
  body: { amount: 1999, currency: 'EUR', reference: `order-${Date.now()}`, customer: { email: 'jane@example.com', name: 'Jane Doe' } },
});
const payment = await payments.POST('/v1/payments', {
  body: { payment_order: order.id, payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' } } },
});
const paid = await payments.GET('/v1/payment-orders/{id}', { params: { path: { id: order.id } } });

// A refusal is a typed error whose code comes from the API's closed list.
const refused = await payments.POST('/v1/refunds', { body: { payment: payment.id, amount: 1_000_000 } }).catch((e: unknown) => e);
const refusedCode = refused instanceof PaymentApiError ? refused.code : undefined;

console.log(JSON.stringify({ order: paid.id, order_status: paid.status, payment_status: payment.status, refused: refusedCode }));
if (paid.status !== 'paid' || payment.status !== 'succeeded' || refusedCode !== 'amount_above_refundable') process.exit(1);
