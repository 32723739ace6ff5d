// The GoCardless connector on its own, against the fake GoCardless: every status of the SDK's
// enums mapped, a set-up or debit sent twice adopted (409 idempotent_creation_conflict) rather
// than created twice, an object whose answer was lost found by its metadata, webhooks verified
// with the current or previous secret and read as one report per event. Its behaviour through
// the service is the contract suite's (test/connectors/contract/mandates.ts).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/connectors/http.js';
import { createGoCardlessConnector } from '../../src/connectors/gocardless/connector.js';
import { mandateStateOf, paymentStateOf } from '../../src/connectors/gocardless/mapping.js';
import { WebhookVerificationError, type Connector, type MandateSetupRequest } from '../../src/connectors/types.js';
import { FakeGoCardless, gocardlessWebhook } from '../support/fakes/gocardless.js';

const fake = new FakeGoCardless();
const http = createHttpClient();
let gc: Connector;
const signal = () => AbortSignal.timeout(5000);
beforeAll(async () => {
  await fake.start();
  gc = createGoCardlessConnector({ accessToken: 'sandbox_unit', webhookSecrets: ['current', 'previous'], livemode: false, apiBaseUrl: fake.url, http });
});
afterAll(async () => {
  http.close();
  await fake.close();
});

const setup = (reference: string): MandateSetupRequest => ({
  reference,
  scheme: 'bacs',
  currency: 'GBP',
  account: { country: 'GB', currency: 'GBP', secret: '55779911', bic: null, sortCode: '200000', routingNumber: null },
  customer: { email: 'payer@example.com', name: null },
});

describe('GoCardless statuses in our words', () => {
  it('maps every mandate status of the SDK', () => {
    const of = (status: string, cause?: { cause?: string; origin?: string }) => mandateStateOf({ id: 'MD1', status: status as never }, cause);
    expect(
      ['pending_customer_approval', 'pending_submission', 'submitted', 'active', 'failed', 'cancelled', 'expired', 'consumed', 'blocked', 'suspended_by_payer'].map((s) => of(s).kind),
    ).toEqual(['pending', 'pending', 'pending', 'active', 'failed', 'revoked', 'expired', 'expired', 'failed', 'revoked']);
    expect(of('failed', { cause: 'bank_account_closed' })).toMatchObject({ failureCode: 'account_closed' });
    expect(of('cancelled', { origin: 'api' })).toMatchObject({ by: 'merchant' });
    expect(of('cancelled', { origin: 'bank' })).toMatchObject({ by: 'bank' });
    expect(of('a_status_of_a_later_version').kind).toBe('pending');
  });

  it('maps every payment status of the SDK; failures after confirmation read as reversals', () => {
    const of = (status: string, cause?: { cause?: string }) => paymentStateOf({ id: 'PM1', status: status as never }, cause);
    const all = ['pending_customer_approval', 'pending_submission', 'submitted', 'confirmed', 'paid_out', 'cancelled', 'customer_approval_denied', 'failed', 'charged_back'];
    expect(all.map((s) => [of(s).kind, (of(s) as { failureCode?: string }).failureCode])).toEqual([
      ['pending', undefined],
      ['pending', undefined],
      ['pending', undefined],
      ['succeeded', undefined],
      ['succeeded', undefined],
      ['declined', 'mandate_invalid'],
      ['declined', 'debit_declined'],
      ['reversed', 'debit_declined'],
      ['reversed', 'charged_back'],
    ]);
    expect(of('cancelled', { cause: 'payment_cancelled' })).toMatchObject({ failureCode: 'debit_declined' });
  });
});

describe('the connector against the fake GoCardless', () => {
  it('sets a mandate up once: a repeat under the same key adopts what GoCardless holds', async () => {
    const reference = `mdt_${crypto.randomUUID()}`;
    const first = await gc.setupMandate!(setup(reference), signal());
    expect(first).toMatchObject({ kind: 'pending', connectorReference: expect.stringMatching(/^MD/) });
    const again = await gc.setupMandate!(setup(reference), signal());
    expect(again).toEqual(first);
    expect(fake.requests.get(reference)).toBe(2);
    expect([...fake.objects.mandates.values()].filter((m) => m.metadata?.mandate_id === reference)).toHaveLength(1);
    expect([...fake.objects.customers.values()].filter((c) => c.metadata?.mandate_id === reference)).toHaveLength(1);
    // Found by its metadata when no GoCardless id was stored.
    expect(await gc.mandateStatus!({ reference, connectorReference: null }, signal())).toEqual(first);
    expect(await gc.mandateStatus!({ reference: 'mdt_unknown', connectorReference: null }, signal())).toEqual({ kind: 'not_found' });
  });

  it('debits an active mandate; a debit of a cancelled one is declined mandate_invalid; cancel is revocation by the merchant', async () => {
    const reference = `mdt_${crypto.randomUUID()}`;
    const mandate = (await gc.setupMandate!(setup(reference), signal())) as { connectorReference: string };
    fake.setMandate(mandate.connectorReference, 'active');
    const charge = { reference: `pay_${crypto.randomUUID()}`, amount: 1234, currency: 'GBP', mandate: { connectorReference: mandate.connectorReference, scheme: 'bacs' as const } };
    const debited = await gc.charge(charge, signal());
    expect(debited).toMatchObject({ kind: 'pending', connectorReference: expect.stringMatching(/^PM/) });
    expect(await gc.charge(charge, signal())).toEqual(debited);
    expect(await gc.chargeStatus({ reference: charge.reference, connectorReference: null }, signal())).toEqual(debited);

    expect(await gc.cancelMandate!({ reference, connectorReference: mandate.connectorReference }, signal())).toMatchObject({ kind: 'revoked', by: 'merchant' });
    const refused = await gc.charge({ ...charge, reference: `pay_${crypto.randomUUID()}` }, signal());
    expect(refused).toMatchObject({ kind: 'declined', failureCode: 'mandate_invalid' });
    expect(await gc.charge({ ...charge, mandate: undefined }, signal())).toMatchObject({ kind: 'error', code: 'request_rejected' });
  });

  it('classifies faults: 429 retryable, 500 after acting unknown', async () => {
    fake.inject('429');
    expect(await gc.setupMandate!(setup(`mdt_${crypto.randomUUID()}`), signal())).toMatchObject({ kind: 'error', code: 'processor_error' });
    fake.inject('500_after');
    expect(await gc.setupMandate!(setup(`mdt_${crypto.randomUUID()}`), signal())).toMatchObject({ kind: 'error', code: 'invalid_response' });
  });
});

describe('GoCardless webhooks', () => {
  const input = (webhook: { body: string; headers: Record<string, string> }) => ({ headers: webhook.headers, rawBody: webhook.body, now: new Date() });
  const mandateEvent = fake.event('mandates', 'active', { mandate: 'MD1' }, { mandate_id: 'mdt_a' });
  const paymentEvent = fake.event('payments', 'charged_back', { payment: 'PM1' }, { payment_id: 'pay_b' }, { origin: 'bank', cause: 'authorisation_disputed' });

  it('reads a batch as one report per event; other resources and actions are reports about nothing', () => {
    const other = fake.event('payments', 'resubmission_requested', { payment: 'PM1' }, { payment_id: 'pay_b' });
    const events = [gc.parseWebhook(input(gocardlessWebhook([mandateEvent, paymentEvent, other], 'current')))].flat();
    expect(events).toEqual([
      { eventId: mandateEvent.id, object: 'mandate', reference: 'mdt_a', state: { kind: 'active', connectorReference: 'MD1' } },
      { eventId: paymentEvent.id, object: 'payment', reference: 'pay_b', state: expect.objectContaining({ kind: 'reversed', failureCode: 'charged_back' }) },
      expect.objectContaining({ eventId: other.id, reference: '' }),
    ]);
  });

  it('verifies with the current or the previous secret, and nothing else', () => {
    expect([gc.parseWebhook(input(gocardlessWebhook([mandateEvent], 'previous')))].flat()).toHaveLength(1);
    const forged = gocardlessWebhook([mandateEvent], 'someone-else');
    expect(() => gc.parseWebhook(input(forged))).toThrow(WebhookVerificationError);
    expect(() => gc.parseWebhook({ headers: {}, rawBody: forged.body, now: new Date() })).toThrow(/missing/);
    const notBatch = '{"event":{}}';
    const signed = crypto.createHmac('sha256', 'current').update(notBatch).digest('hex');
    expect(() => gc.parseWebhook({ headers: { 'webhook-signature': signed }, rawBody: notBatch, now: new Date() })).toThrow(/batch/);
  });
});
