// The TypeScript SDK (sdk/) against the real service: a full flow through its typed client, the
// retries that reuse one Idempotency-Key (a real concurrent twin answering 409, a 429 with
// Retry-After), paging with an async iterator, and webhook verification of a delivered event.
import { describe, expect, it } from 'vitest';
import { createClient, PaymentApiError, webhooks, WebhookVerificationError, type ClientOptions, type EventOf } from '../../sdk/src/index.js';
import { MemoryRateLimiter, type Budget, type Decision } from '../../src/http/rate-limiter.js';
import { useService } from '../support/fixtures.js';
import { isPostgres } from '../support/helpers.js';
import { deliverAt, webhookOptions } from '../support/webhooks.js';

/** The service's limiter, told by a test to refuse the next request of a key once. */
class RefusingLimiter extends MemoryRateLimiter {
  refuseNext: number | undefined;
  override async take(key: string, budget: Budget): Promise<Decision> {
    const retryAfterS = this.refuseNext;
    if (retryAfterS === undefined) return super.take(key, budget);
    this.refuseNext = undefined;
    return { allowed: false, remaining: 0, resetS: retryAfterS, retryAfterS };
  }
}

const limiter = new RefusingLimiter();
const h = useService({ rateLimiter: limiter });

/** A client on the fixture's service that records every attempt it sends and every wait. */
function recordingClient(options: Partial<ClientOptions> = {}) {
  const attempts: { method: string; path: string; key: string | null; status: number }[] = [];
  const waits: number[] = [];
  const po = createClient({
    apiKey: h.tenant.testKey,
    baseUrl: h.url,
    initialBackoffMs: 10,
    sleep: async (ms) => {
      waits.push(ms);
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
    fetch: async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      attempts.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key'), status: response.status });
      return response;
    },
    ...options,
  });
  return { po, attempts, waits };
}

/** A payment order's body as the typed client takes it. */
const orderBody = (extra: { amount?: number; reference?: string } = {}) => ({
  amount: 1999,
  currency: 'EUR' as const,
  reference: `sdk-${crypto.randomUUID()}`,
  customer: { email: 'jane@example.com', name: 'Jane Doe' },
  ...extra,
});

const card = { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' };

describe('SDK', () => {
  it('runs order → payment → refund through the typed client, with a key of its own on each money-moving POST', async () => {
    const { po, attempts } = recordingClient();
    const order = await po.POST('/v1/payment-orders', { body: orderBody({ amount: 2500 }) });
    expect(order).toMatchObject({ object: 'payment_order', amount: 2500, status: 'open' });
    const payment = await po.POST('/v1/payments', { body: { payment_order: order.id, payment_method: { type: 'card', card } } });
    expect(payment.status).toBe('succeeded');
    const refund = await po.POST('/v1/refunds', { body: { payment: payment.id, amount: 1000 } });
    expect(refund).toMatchObject({ object: 'refund', payment: payment.id, amount: 1000 });
    const again = await po.GET('/v1/payments/{id}', { params: { path: { id: payment.id } } });
    expect(again.amount_refunded).toBe(1000);

    const posts = attempts.filter((a) => a.method === 'POST');
    expect(posts).toHaveLength(3);
    expect(posts.every((a) => a.key !== null)).toBe(true);
    expect(new Set(posts.map((a) => a.key)).size).toBe(3);

    // A refusal is a typed error, its code from the document's closed list.
    const refused = await po.POST('/v1/refunds', { body: { payment: payment.id, amount: 999_999 } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PaymentApiError);
    expect(refused).toMatchObject({ status: 422, code: 'amount_above_refundable', type: 'eligibility' });
    expect((refused as PaymentApiError).requestId).toMatch(/^req_/);
  });

  it('iterates a list across pages with an async iterator', async () => {
    const { po } = recordingClient();
    const reference = `sdk-${crypto.randomUUID()}`;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await po.POST('/v1/payment-orders', { body: orderBody({ reference: `${reference}-${i}` }) })).id);
    const seen: string[] = [];
    for await (const order of po.list('/v1/payment-orders', { params: { query: { limit: 2 } } })) {
      if (order.reference.startsWith(reference)) seen.push(order.id);
    }
    expect(seen).toEqual([...made].reverse());
  });

  // PGlite runs one statement at a time: a twin never finds the key held, it finds the stored answer.
  it.skipIf(!isPostgres)('retries a 409 idempotency_key_in_use from a concurrent twin with the same key, and ends with the one payment', async () => {
    const { po, attempts } = recordingClient();
    let busy = 0;
    // Concurrent twins race for the key; a round where every twin arrived after the winner finished
    // shows no 409, so a few rounds are allowed to meet one.
    for (let round = 0; round < 5 && busy === 0; round++) {
      const order = await po.POST('/v1/payment-orders', { body: orderBody() });
      const key = `sdk-twin-${crypto.randomUUID()}`;
      const body = { payment_order: order.id, payment_method: { type: 'card' as const, card } };
      const twins = await Promise.all(Array.from({ length: 6 }, () => po.POST('/v1/payments', { body, params: { header: { 'idempotency-key': key } } })));
      expect(new Set(twins.map((p) => p.id)).size).toBe(1);
      const payments = await po.GET('/v1/payments', { params: { query: { payment_order: order.id } } });
      expect(payments.data).toHaveLength(1);
      const mine = attempts.filter((a) => a.key === key);
      busy += mine.filter((a) => a.status === 409).length;
      // Every attempt carried the caller's key; each 409 was followed by more attempts with it.
      expect(mine.every((a) => a.status === 201 || a.status === 409)).toBe(true);
      expect(mine.filter((a) => a.status === 201)).toHaveLength(6);
    }
    expect(busy).toBeGreaterThan(0);
  });

  it('waits what Retry-After says on a 429 and sends the same request with the same key', async () => {
    const { po, attempts, waits } = recordingClient();
    limiter.refuseNext = 1;
    const order = await po.POST('/v1/payment-orders', { body: orderBody() });
    const tries = attempts.filter((a) => a.method === 'POST');
    expect(tries.map((a) => a.status)).toEqual([429, 201]);
    expect(tries[0]!.key).toBe(tries[1]!.key);
    expect(waits).toEqual([1000]);
    expect(order.status).toBe('open');
  });

  it('gives up after maxRetries and throws the typed 429', async () => {
    const { po, attempts } = recordingClient({ maxRetries: 0 });
    limiter.refuseNext = 1;
    await expect(po.GET('/v1/payment-orders')).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(attempts).toHaveLength(1);
  });

  it('verifies a delivered webhook into a typed event, and refuses a bad signature or a stale timestamp', async () => {
    const { po } = recordingClient();
    const receiver = await h.receiver();
    const endpoint = await po.POST('/v1/webhook-endpoints', { body: { url: receiver.url, enabled_events: ['payment.succeeded'] } });
    const order = await po.POST('/v1/payment-orders', { body: orderBody() });
    const payment = await po.POST('/v1/payments', { body: { payment_order: order.id, payment_method: { type: 'card', card } } });
    await deliverAt(h.database, webhookOptions());
    const delivery = receiver.requests.find((r) => JSON.parse(r.body).data.object.id === payment.id)!;
    expect(delivery).toBeDefined();

    const event = webhooks.verify(delivery.body, delivery.headers, endpoint.secret);
    expect(event.type).toBe('payment.succeeded');
    if (event.type !== 'payment.succeeded') throw new Error('narrowed above');
    const succeeded: EventOf<'payment.succeeded'> = event;
    expect(succeeded.data.object.amount).toBe(payment.amount);

    const signature = String(delivery.headers['webhook-signature']);
    const tampered = delivery.body.replace(`"${payment.id}"`, '"pay_forged"');
    expect(() => webhooks.verify(tampered, delivery.headers, endpoint.secret)).toThrow(WebhookVerificationError);
    const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(() => webhooks.verify(delivery.body, delivery.headers, otherSecret)).toThrow(expect.objectContaining({ reason: 'signature_invalid' }));
    const sentS = Number(delivery.headers['webhook-timestamp']);
    expect(() => webhooks.verify(delivery.body, delivery.headers, endpoint.secret, { nowS: sentS + 301 })).toThrow(expect.objectContaining({ reason: 'timestamp_stale' }));
    expect(webhooks.verify(delivery.body, delivery.headers, endpoint.secret, { nowS: sentS + 299 }).id).toBe(event.id);
    expect(() => webhooks.verify(delivery.body, { ...delivery.headers, 'webhook-signature': undefined }, endpoint.secret)).toThrow(expect.objectContaining({ reason: 'headers_missing' }));
    expect(signature.startsWith('v1,')).toBe(true);
  });
});
