// The mandate side of the connector contract, run against each simulated processor in process and
// over HTTP: set-up by account ending (docs/test-mode.md), idempotency by our reference, status, the test
// controls, cancellation, debits against a mandate, and the processor's signed mandate webhooks.
import { beforeAll, describe, expect, it } from 'vitest';
import { SIM_SIGNATURE_HEADER } from '../../src/connectors/simulator/protocol.js';
import { processorSecret, signPayload } from '../../src/connectors/simulator/signing.js';
import { TransportError, type Connector, type MandateSetupRequest } from '../../src/connectors/types.js';
import type { TestControls } from '../../src/connectors/test-controls.js';
import { useSimulatorFamily } from '../support/payments.js';

const SECRET = 'mandate-contract-secret';
const { connectors } = useSimulatorFamily(SECRET);

let counter = 0;
const signal = (ms = 2000) => AbortSignal.timeout(ms);
function setup(ending: string, overrides: Partial<MandateSetupRequest> = {}): MandateSetupRequest {
  return {
    reference: `mdt_contract${Date.now()}${counter++}`,
    scheme: 'sepa_core',
    currency: 'EUR',
    account: { country: 'DE', currency: 'EUR', secret: `DE0037040044053201${ending}`, bic: null, sortCode: null, routingNumber: null },
    customer: { email: 'payer@example.com', name: 'Erika Mustermann' },
    ...overrides,
  };
}


describe.each(connectors)('mandate contract: %s', (_label, make) => {
  let c: Connector & TestControls;
  beforeAll(() => {
    c = make();
    expect(c.paymentMethodTypes).toContain('mandate');
  });

  it('0000: active; a repeated set-up returns the same mandate; status finds it; an unknown one is not_found', async () => {
    const request = setup('0000');
    const first = await c.setupMandate!(request, signal());
    expect(first).toEqual({ kind: 'active', connectorReference: expect.stringContaining(`${c.name}_md_`) });
    expect(await c.setupMandate!(request, signal())).toEqual(first);
    expect(await c.mandateStatus!({ reference: request.reference, connectorReference: null }, signal())).toEqual(first);
    expect(await c.mandateStatus!({ reference: 'mdt_never', connectorReference: null }, signal())).toEqual({ kind: 'not_found' });
  });

  it('0002: failed, account_closed', async () => {
    expect(await c.setupMandate!(setup('0002'), signal())).toMatchObject({ kind: 'failed', failureCode: 'account_closed' });
  });

  it('0003: pending until resolved (active or failed), reported in our words', async () => {
    const a = setup('0003');
    expect(await c.setupMandate!(a, signal())).toMatchObject({ kind: 'pending' });
    expect(await c.resolveTestMandate!(a.reference, 'active', signal())).toMatchObject({ kind: 'active' });
    const b = setup('0003');
    await c.setupMandate!(b, signal());
    expect(await c.resolveTestMandate!(b.reference, 'failed', signal())).toMatchObject({ kind: 'failed', failureCode: 'mandate_declined' });
  });

  it('0004: registered but never answered in time; status tells it is active', async () => {
    const request = setup('0004');
    await expect(c.setupMandate!(request, signal(200))).rejects.toBeInstanceOf(TransportError);
    expect(await c.mandateStatus!({ reference: request.reference, connectorReference: null }, signal())).toMatchObject({ kind: 'active' });
  });

  it('0005: simulator_a answers a processor error (retryable), simulator_b registers it', async () => {
    const result = await c.setupMandate!(setup('0005'), signal());
    if (c.name === 'simulator_a') expect(result).toMatchObject({ kind: 'error', code: 'processor_error' });
    else expect(result).toMatchObject({ kind: 'active' });
  });

  it('debits an active mandate: pending, idempotent by our reference, settled by the control; refused once cancelled', async () => {
    const request = setup('0000');
    const mandate = await c.setupMandate!(request, signal());
    const connectorReference = (mandate as { connectorReference: string }).connectorReference;
    const debit = { reference: `pay_contract${counter++}`, amount: 1500, currency: 'EUR', mandate: { connectorReference, scheme: 'sepa_core' as const } };
    const first = await c.charge(debit, signal());
    expect(first).toMatchObject({ kind: 'pending' });
    expect(await c.charge(debit, signal())).toEqual(first);
    expect(await c.resolvePendingCharge!(debit.reference, 'failed', signal())).toMatchObject({ kind: 'declined', failureCode: 'debit_declined' });

    // The bank revokes: the processor reports it; new debits are refused as mandate_invalid.
    expect(await c.resolveTestMandate!(request.reference, 'revoked', signal())).toEqual({ kind: 'revoked', by: 'bank', connectorReference });
    const refused = await c.charge({ ...debit, reference: `pay_contract${counter++}` }, signal());
    expect(refused).toMatchObject({ kind: 'declined', failureCode: 'mandate_invalid' });

    // The merchant cancels another: revoked by the merchant.
    const other = setup('0000');
    await c.setupMandate!(other, signal());
    expect(await c.cancelMandate!({ reference: other.reference, connectorReference: null }, signal())).toMatchObject({ kind: 'revoked', by: 'merchant' });
  });

  it('verifies and reads its signed mandate webhooks; refuses a forged one', () => {
    const body = JSON.stringify({
      event_id: `${c.name}_evt_x1`,
      event_type: 'mandate.state_changed',
      occurred_at: new Date().toISOString(),
      mandate: {
        mandate_id: `${c.name}_md_1`,
        merchant_reference: 'mdt_abc',
        scheme: 'BACS',
        currency: 'GBP',
        account_last4: '0000',
        state: 'REVOKED_BY_PAYER',
        rejection: null,
        created_at: new Date().toISOString(),
      },
    });
    const now = new Date();
    const header = signPayload(processorSecret(SECRET, c.name), Math.floor(now.getTime() / 1000), body);
    expect(c.parseWebhook({ headers: { [SIM_SIGNATURE_HEADER]: header }, rawBody: body, now })).toEqual({
      eventId: `${c.name}_evt_x1`,
      object: 'mandate',
      reference: 'mdt_abc',
      state: { kind: 'revoked', by: 'bank', connectorReference: `${c.name}_md_1` },
    });
    const forged = signPayload('another secret', Math.floor(now.getTime() / 1000), body);
    expect(() => c.parseWebhook({ headers: { [SIM_SIGNATURE_HEADER]: forged }, rawBody: body, now })).toThrow();
  });
});
