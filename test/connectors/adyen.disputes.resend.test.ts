// A resend of a dispute answer after a lost answer, at Adyen's Disputes API (src/connectors/adyen/dispute-defense.ts):
// whether Adyen honours Idempotency-Key there is not documented, so the fake plays both. Either way the
// resend of the same answer is taken (the dispute already defended or accepted our way), while a different
// answer to a dispute already answered is still refused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAdyenDisputes } from '../../src/connectors/adyen/dispute-defense.js';
import { createHttpClient } from '../../src/connectors/http.js';
import type { DisputeResponseRequest } from '../../src/connectors/types.js';
import { FakeAdyenDisputes } from '../support/fakes/adyen-disputes.js';

const fake = new FakeAdyenDisputes();
beforeAll(() => fake.start());
afterEach(() => {
  expect(fake.invalid).toEqual([]);
  fake.honoursIdempotencyKeys = true;
});
afterAll(() => fake.close());

const MERCHANT = 'ResendECOM';
let n = 0;
const connector = () => createAdyenDisputes({ apiKey: `AQE_resend_${'k'.repeat(16)}`, merchantAccount: MERCHANT, livemode: false, disputeBaseUrl: fake.url, http: createHttpClient() });
const signal = () => AbortSignal.timeout(5000);

function answer(action: 'submit' | 'accept'): DisputeResponseRequest {
  const psp = `RESEND${String(++n).padStart(10, '0')}`;
  fake.open(psp, MERCHANT);
  return { reference: `dpr_resend_${n}`, action, disputeReference: psp, evidence: { uncategorized_text: 'Delivered' }, defenseReason: null };
}

describe('Adyen dispute answers sent again after a lost answer', () => {
  for (const honours of [true, false]) {
    it(`a defense sent twice is taken once (Idempotency-Key ${honours ? 'honoured' : 'ignored'})`, async () => {
      fake.honoursIdempotencyKeys = honours;
      const request = answer('submit');
      const adyen = connector();
      const first = await adyen.respondToDispute(request, signal());
      expect(first).toEqual({ kind: 'succeeded', connectorReference: request.disputeReference });
      // The first answer was lost: the same answer is sent again.
      expect(await adyen.respondToDispute(request, signal())).toEqual(first);
      expect(fake.disputes.get(request.disputeReference)).toMatchObject({ state: 'defended' });
      expect(fake.disputes.get(request.disputeReference)!.documents).toHaveLength(1);
    });

    it(`an acceptance sent twice is taken once (Idempotency-Key ${honours ? 'honoured' : 'ignored'})`, async () => {
      fake.honoursIdempotencyKeys = honours;
      const request = answer('accept');
      const adyen = connector();
      const first = await adyen.respondToDispute(request, signal());
      expect(first).toMatchObject({ kind: 'succeeded' });
      expect(await adyen.respondToDispute(request, signal())).toEqual(first);
      expect(fake.disputes.get(request.disputeReference)!.state).toBe('accepted');
    });
  }

  it('a defense of a dispute already accepted is still refused', async () => {
    fake.honoursIdempotencyKeys = false;
    const accept = answer('accept');
    const adyen = connector();
    expect(await adyen.respondToDispute(accept, signal())).toMatchObject({ kind: 'succeeded' });
    const defend = { ...accept, reference: `${accept.reference}-defense`, action: 'submit' as const };
    expect(await adyen.respondToDispute(defend, signal())).toMatchObject({ kind: 'failed', failureCode: 'dispute_response_refused', message: expect.stringContaining('already accepted') });
  });
});
