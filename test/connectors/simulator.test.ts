// The simulator connector at the connector level, against each simulated processor in process and
// over HTTP: idempotency by our reference, its refusal codes mapped onto ours, status, refunds
// idempotent by their reference, webhook verification; how its answers and transport failures are
// classified (the in-process timeout played at once). What every processor must do through the
// service (fallback, unknown outcomes, webhooks applied once) is the connector contract suite:
// test/connectors/contract.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { routeCall } from '../../src/movement/calls.js';
import { paymentKind } from '../../src/domain/payments/kind.js';
import { createSimulatorConnector, httpTransport, inProcessTransport } from '../../src/connectors/simulator/connector.js';
import { SIM_SIGNATURE_HEADER } from '../../src/connectors/simulator/protocol.js';
import { processorSecret, signPayload } from '../../src/connectors/simulator/signing.js';
import { isRetryable, WebhookVerificationError, type Connector, type ConnectorErrorCode } from '../../src/connectors/types.js';
import type { TestControls } from '../../src/connectors/test-controls.js';
import { chargeAnswers } from '../../src/connectors/simulator/transformers.js';
import { CARDS, useSimulatorFamily } from '../support/payments.js';
import { callDepsFor } from '../support/connectors.js';

const { answer: chargeAnswer } = chargeAnswers(() => '');


const SECRET = 'contract-family-secret';
const { family, connectors } = useSimulatorFamily(SECRET);

let counter = 0;
const reference = () => `pay_contract${Date.now()}${counter++}`;
const card = (number: string) => ({ number, expMonth: 12, expYear: new Date().getUTCFullYear() + 1, cvc: '123' });
const signal = () => AbortSignal.timeout(2000);


describe.each(connectors)('connector contract: %s', (_label, make) => {
  let connector: Connector & TestControls;
  beforeAll(() => {
    connector = make();
  });

  it('charges a success card, and a repeated charge with the same reference returns the same charge', async () => {
    const ref = reference();
    const first = await connector.charge({ reference: ref, amount: 1000, currency: 'EUR', card: card(CARDS.success) }, signal());
    expect(first).toMatchObject({ kind: 'succeeded', connectorReference: expect.stringContaining(`${connector.name}_ch_`) });
    const again = await connector.charge({ reference: ref, amount: 1000, currency: 'EUR', card: card(CARDS.success) }, signal());
    expect(again).toEqual(first);
    expect(await connector.chargeStatus({ reference: ref, connectorReference: null }, signal())).toEqual(first);
    // The same reference for another amount is refused, not charged — and not taken as a failure
    // either (the processor holds a charge under it), so it is not retried elsewhere.
    expect(await connector.charge({ reference: ref, amount: 999, currency: 'EUR', card: card(CARDS.success) }, signal())).toMatchObject({
      kind: 'error',
      code: 'invalid_response',
    });
  });

  it('maps declines onto our failure codes', async () => {
    for (const [number, failureCode] of [
      [CARDS.declined, 'card_declined'],
      [CARDS.insufficientFunds, 'insufficient_funds'],
      ['4000056655665556', 'card_declined'],
    ] as const) {
      const result = await connector.charge({ reference: reference(), amount: 1000, currency: 'EUR', card: card(number) }, signal());
      expect(result).toMatchObject({ kind: 'declined', failureCode, message: expect.any(String) });
    }
    const expired = await connector.charge(
      { reference: reference(), amount: 1000, currency: 'EUR', card: { ...card(CARDS.success), expYear: 2001 } },
      signal(),
    );
    expect(expired).toMatchObject({ kind: 'declined', failureCode: 'expired_card' });
  });

  it('answers pending for the pending card, and settles it when told to', async () => {
    const ref = reference();
    expect(await connector.charge({ reference: ref, amount: 500, currency: 'EUR', card: card(CARDS.pending) }, signal())).toMatchObject({ kind: 'pending' });
    expect(await connector.chargeStatus({ reference: ref, connectorReference: null }, signal())).toMatchObject({ kind: 'pending' });
    expect(await connector.resolvePendingCharge!(ref, 'succeeded', signal())).toMatchObject({ kind: 'succeeded' });
    expect(await connector.chargeStatus({ reference: ref, connectorReference: null }, signal())).toMatchObject({ kind: 'succeeded' });
  });

  it('does not know a reference it never charged', async () => {
    expect(await connector.chargeStatus({ reference: reference(), connectorReference: null }, signal())).toEqual({ kind: 'not_found' });
    expect(await connector.refundStatus({ reference: 'ref_none', connectorReference: null }, signal())).toEqual({ kind: 'not_found' });
  });

  it('refunds up to the charge, idempotently by the refund reference', async () => {
    const ref = reference();
    await connector.charge({ reference: ref, amount: 1000, currency: 'EUR', card: card(CARDS.success) }, signal());
    const refund = (r: string, amount: number) =>
      connector.refund({ reference: r, paymentReference: ref, connectorPaymentReference: null, amount, currency: 'EUR' }, signal());
    const first = await refund(`${ref}_r1`, 600);
    expect(first).toMatchObject({ kind: 'succeeded' });
    expect(await refund(`${ref}_r1`, 600)).toEqual(first);
    expect(await refund(`${ref}_r2`, 500)).toMatchObject({ kind: 'failed', failureCode: 'amount_above_refundable' });
    expect(await refund(`${ref}_r3`, 400)).toMatchObject({ kind: 'succeeded' });
    expect(await connector.refundStatus({ reference: `${ref}_r1`, connectorReference: null }, signal())).toEqual(first);
  });

  it('verifies webhooks with its own secret only, and refuses stale ones', () => {
    const body = JSON.stringify({
      event_id: 'evt_contract_1',
      event_type: 'charge.state_changed',
      occurred_at: new Date().toISOString(),
      charge: {
        charge_id: 'c1',
        merchant_reference: 'pay_x',
        amount_minor: 100,
        currency: 'EUR',
        state: 'CAPTURED',
        refusal: null,
        refunded_minor: 0,
        created_at: new Date().toISOString(),
      },
    });
    const now = new Date();
    const ts = Math.floor(now.getTime() / 1000);
    const own = processorSecret(SECRET, connector.name);
    const parse = (header: string | undefined, raw = body, at = now) => connector.parseWebhook({ headers: { [SIM_SIGNATURE_HEADER]: header }, rawBody: raw, now: at });
    expect(parse(signPayload(own, ts, body))).toEqual({ eventId: 'evt_contract_1', object: 'payment', reference: 'pay_x', state: { kind: 'succeeded', connectorReference: 'c1' } });
    const reason = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err instanceof WebhookVerificationError ? err.reason : String(err);
      }
      return 'accepted';
    };
    const other = processorSecret(SECRET, connector.name === 'simulator_a' ? 'simulator_b' : 'simulator_a');
    expect(reason(() => parse(signPayload(other, ts, body)))).toBe('signature_invalid');
    expect(reason(() => parse(undefined))).toBe('signature_invalid');
    expect(reason(() => parse('garbage'))).toBe('signature_invalid');
    expect(reason(() => parse(signPayload(own, ts, body), body.replace('CAPTURED', 'REFUSED')))).toBe('signature_invalid');
    expect(reason(() => parse(signPayload(own, ts - 301, body)))).toBe('timestamp_stale');
    expect(reason(() => parse(signPayload(own, ts + 301, body)))).toBe('timestamp_stale');
    expect(reason(() => parse(signPayload(own, ts - 299, body)))).toBe('accepted');
    expect(reason(() => parse(signPayload(own, ts, '{"event_id":"x"}'), '{"event_id":"x"}'))).toBe('payload_invalid');
  });
});

describe('network failures, classified by whether the processor can have acted', () => {
  const deps = callDepsFor;


  it('no answer after the request went out is a timeout (not retryable), over HTTP and in process', async () => {
    // Over HTTP the deadline is really waited for; in process the simulator plays the timeout at once.
    for (const [transport, waitsMs] of [[httpTransport(family.server.url, family.http), 195], [inProcessTransport(family.host), 0]] as const) {
      const connector = createSimulatorConnector({ name: 'simulator_b', transport, familySecret: SECRET });
      const ref = reference();
      const started = Date.now();
      const execution = await routeCall(deps(connector, 200), paymentKind, ['simulator_b'], { reference: ref, amount: 700, currency: 'EUR', card: card(CARDS.timeout) });
      expect(Date.now() - started).toBeGreaterThanOrEqual(waitsMs);
      expect(execution).toMatchObject({ connector: 'simulator_b', result: { kind: 'error', code: 'timeout' } });
      expect(execution.attempts).toEqual([expect.objectContaining({ outcome: 'timeout', error_code: 'timeout' })]);
      // The processor did charge: asking tells the truth.
      expect(await connector.chargeStatus({ reference: ref, connectorReference: null }, signal())).toMatchObject({ kind: 'succeeded' });
    }
  });

  it("a 5xx is retryable elsewhere only when the processor says it did nothing (its INTERNAL_ERROR)", () => {
    expect(chargeAnswer(500, { error: { code: 'INTERNAL_ERROR', message: 'x' } })).toMatchObject({ kind: 'error', code: 'processor_error' });
    for (const status of [500, 502, 503, 504]) {
      const result = chargeAnswer(status, '<html>Bad Gateway</html>');
      expect(result).toMatchObject({ kind: 'error', code: 'invalid_response' });
      expect(isRetryable(result as { kind: string; code?: ConnectorErrorCode })).toBe(false);
    }
  });

  it('an unreadable answer is invalid_response (not retryable)', async () => {
    const broken: Connector = {
      ...createSimulatorConnector({ name: 'broken', transport: inProcessTransport(family.host), familySecret: SECRET }),
      charge: async () => {
        throw new Error('cannot parse');
      },
    };
    const execution = await routeCall(deps(broken), paymentKind, ['broken'], { reference: reference(), amount: 1, currency: 'EUR', card: card(CARDS.success) });
    expect(execution).toMatchObject({ connector: 'broken', result: { kind: 'error', code: 'invalid_response' } });
  });
});
