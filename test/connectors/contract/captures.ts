// The connector contract for authorise-now-capture-later: the scenarios every card connector with
// manual capture passes, at the connector interface (src/connectors/captures.ts), over every
// capture harness (capture-harnesses.ts) by test/connectors/contract.captures.test.ts. A scenario
// needing a capability the harness lacks is skipped for it. Where a processor confirms captures
// and voids asynchronously (Adyen), the harness settles them and the notification, read by the
// connector, must name our capture (or payment) and its outcome.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CancellationReason, CancelState, CaptureRequest, CaptureState, Connector } from '../../../src/connectors/types.js';
import { authorizationReport, type CaptureCapability, type CaptureHarness } from './capture-harnesses.js';

let n = 0;
const id = (prefix: 'pay' | 'cap' | 'void') => `${prefix}_${Date.now().toString(36)}${(n++).toString(36)}capture`;
const signal = () => AbortSignal.timeout(5000);
const card = (number: string) => ({ number, expMonth: 3, expYear: new Date().getUTCFullYear() + 2, cvc: '737' });

interface Authorised {
  reference: string;
  connectorReference: string;
}

export function describeCaptureContract(harness: CaptureHarness) {
  describe(`capture contract: ${harness.name}`, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const c = (): Connector => harness.connector();
    const can = (...needs: CaptureCapability[]) => needs.every((need) => harness.capabilities.has(need));

    async function authorise(number = harness.cards.success, amount = 1000): Promise<Authorised> {
      const reference = id('pay');
      const state = await c().charge({ reference, amount, currency: 'EUR', card: card(number), captureMethod: 'manual' }, signal());
      expect(state).toMatchObject({ kind: 'authorized' });
      return { reference, connectorReference: (state as { connectorReference: string }).connectorReference };
    }

    const captureRequest = (auth: Authorised, amount: number, finalCapture = true, reference = id('cap')): CaptureRequest => ({
      reference,
      paymentReference: auth.reference,
      connectorPaymentReference: auth.connectorReference,
      amount,
      currency: 'EUR',
      finalCapture,
    });

    /** A capture's outcome: its answer, or (processors confirming later) the notification the harness then sends. */
    async function settled(request: CaptureRequest, success = true): Promise<CaptureState> {
      const answer = await c().capture!(request, signal());
      if (answer.kind === 'error') throw new Error(`capture failed as a call: ${answer.message}`);
      if (!can('notifications')) return answer;
      expect(answer.kind).toBe('pending');
      const report = authorizationReport(harness.settle!(answer.connectorReference!, success));
      expect(report).toMatchObject({ object: 'capture', reference: request.reference, paymentConnectorReference: request.connectorPaymentReference });
      return report.state as CaptureState;
    }

    async function voided(auth: Authorised, reason: CancellationReason = 'requested_by_customer'): Promise<CancelState> {
      const request = { reference: id('void'), paymentReference: auth.reference, connectorPaymentReference: auth.connectorReference, amount: 1000, currency: 'EUR', reason };
      const answer = await c().cancelAuthorization!(request, signal());
      if (answer.kind === 'error') throw new Error(`cancel failed as a call: ${answer.message}`);
      if (!can('notifications')) return answer;
      expect(answer.kind).toBe('pending');
      const report = authorizationReport(harness.settle!(answer.connectorReference!, true));
      expect(report).toMatchObject({ object: 'void', reference: request.reference });
      return report.state as CancelState;
    }

    it('a manual charge is authorised, not captured; the same card under automatic capture succeeds', async () => {
      const auth = await authorise();
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(0);
      const automatic = await c().charge({ reference: id('pay'), amount: 1000, currency: 'EUR', card: card(harness.cards.success), captureMethod: 'automatic' }, signal());
      expect(automatic.kind).toBe('succeeded');
    });

    it('authorise, then capture it all', async () => {
      const auth = await authorise();
      expect(await settled(captureRequest(auth, 1000))).toMatchObject({ kind: 'succeeded' });
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(1000);
    });

    it('a partial final capture takes that part only', async () => {
      const auth = await authorise();
      expect(await settled(captureRequest(auth, 600))).toMatchObject({ kind: 'succeeded' });
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(600);
      if (can('notifications')) return;
      // The rest was released: nothing more can be captured.
      expect(await c().capture!(captureRequest(auth, 100), signal())).toMatchObject({ kind: 'failed' });
    });

    it.skipIf(!can('multiple_captures'))('multiple partial captures, the last one final, take the whole authorisation', async () => {
      const auth = await authorise();
      expect(await settled(captureRequest(auth, 300, false))).toMatchObject({ kind: 'succeeded' });
      expect(await settled(captureRequest(auth, 300, false))).toMatchObject({ kind: 'succeeded' });
      expect(await settled(captureRequest(auth, 400, true))).toMatchObject({ kind: 'succeeded' });
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(1000);
    });

    it.skipIf(can('multiple_captures'))('a non-final capture is refused before anything is sent where the connector captures once', async () => {
      const auth = await authorise();
      expect(await c().capture!(captureRequest(auth, 300, false), signal())).toMatchObject({ kind: 'error', code: 'request_rejected' });
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(0);
    });

    it.skipIf(!can('capture_declined'))('a card that authorises, then has its capture declined: capture_declined, nothing taken', async () => {
      const auth = await authorise(harness.cards.captureDeclined);
      expect(await settled(captureRequest(auth, 1000))).toMatchObject({ kind: 'failed', failureCode: 'capture_declined' });
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(0);
    });

    it.skipIf(!can('notifications'))('a capture the scheme refuses after the processor took it: CAPTURE_FAILED read as a failed capture of ours', async () => {
      const auth = await authorise();
      expect(await settled(captureRequest(auth, 1000), false)).toMatchObject({ kind: 'failed', failureCode: 'capture_declined' });
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(0);
    });

    it('a void releases the authorisation; a capture after it takes nothing', async () => {
      const auth = await authorise();
      expect(await voided(auth)).toMatchObject({ kind: 'canceled' });
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(0);
      if (can('notifications')) return;
      expect(await c().capture!(captureRequest(auth, 1000), signal())).toMatchObject({ kind: 'failed', failureCode: 'authorization_expired' });
    });

    it.skipIf(!harness.voidReason)('a void tells the processor why, in its words (a lapsed authorisation: abandoned)', async () => {
      for (const [ours, theirs] of [['fraudulent', 'fraudulent'], ['expired', 'abandoned']] as const) {
        const auth = await authorise();
        expect(await voided(auth, ours)).toMatchObject({ kind: 'canceled' });
        expect(harness.voidReason!(auth.connectorReference)).toBe(theirs);
      }
    });

    it('a capture is idempotent by our capture id: sent twice, it captures once, and its status is found', async () => {
      const auth = await authorise();
      const request = captureRequest(auth, 700);
      const first = await c().capture!(request, signal());
      const again = await c().capture!(request, signal());
      expect(again).toEqual(first);
      if (can('notifications')) harness.settle!((first as CaptureState).connectorReference!, true);
      expect(await harness.captured(auth.reference, auth.connectorReference)).toBe(700);
      const status = await c().captureStatus!({ reference: request.reference, connectorReference: (first as CaptureState).connectorReference, paymentReference: auth.reference, connectorPaymentReference: auth.connectorReference }, signal());
      expect(status).toMatchObject({ kind: can('notifications') ? 'pending' : 'succeeded' });
    });

    it('a capture never sent is not found by its status, so it can be sent', async () => {
      const auth = await authorise();
      const status = await c().captureStatus!({ reference: id('cap'), connectorReference: null, paymentReference: auth.reference, connectorPaymentReference: auth.connectorReference }, signal());
      expect(status).toEqual({ kind: 'not_found' });
    });
  });
}
