// Helpers of the mandate tests: bank accounts per scheme whose ending picks the test scenario
// (docs/test-mode.md), mandate bodies, a mandate created and checked in one call, and a mandate booked at
// a simulated processor as a lost answer leaves it.
import { sql } from 'drizzle-orm';
import type { SimulatedProcessor } from '../../src/connectors/simulator/processor.js';
import { toPublicId } from '../../src/kernel/ids.js';
import { ibanWithCheckDigits } from '../../src/domain/bank-accounts/rules.js';
import type { DatabaseFixture } from './fixtures.js';
import { created, type Api } from './helpers.js';

export const ENDINGS = { success: '0000', closed: '0002', pending: '0003', timeout: '0004', processorError: '0005' } as const;
export type Ending = (typeof ENDINGS)[keyof typeof ENDINGS];

/** A valid account for each scheme, its account number ending in `ending`. */
export function accountFor(scheme: 'sepa_core' | 'bacs' | 'ach', ending: string = ENDINGS.success) {
  switch (scheme) {
    case 'sepa_core':
      return { country: 'DE', currency: 'EUR', iban: ibanWithCheckDigits('DE', `37040044053201${ending}`) };
    case 'bacs':
      return { country: 'GB', currency: 'GBP', sort_code: '20-00-00', account_number: `5577${ending}` };
    case 'ach':
      return { country: 'US', currency: 'USD', routing_number: '110000000', account_number: `00012345${ending}` };
  }
}

export const CURRENCY_OF = { sepa_core: 'EUR', bacs: 'GBP', ach: 'USD' } as const;

export function mandateBody(scheme: 'sepa_core' | 'bacs' | 'ach' = 'sepa_core', ending: string = ENDINGS.success, overrides: Record<string, unknown> = {}) {
  return {
    customer: { email: 'payer@example.com', name: 'Erika Mustermann' },
    bank_account: accountFor(scheme, ending),
    scheme,
    currency: CURRENCY_OF[scheme],
    reference: `mandate-${Math.random().toString(36).slice(2)}`,
    ...overrides,
  };
}

export const newMandate = (api: Api, scheme: 'sepa_core' | 'bacs' | 'ach' = 'sepa_core', ending: string = ENDINGS.success, overrides: Record<string, unknown> = {}) =>
  created(api, '/v1/mandates', mandateBody(scheme, ending, overrides));

export function mandateMethod(mandate: string) {
  return { type: 'mandate', mandate };
}

/** A direct debit of the order against the mandate. */
export function debit(api: Api, orderId: string, mandateId: string, opts: { idempotencyKey?: string } = {}) {
  return api.post('/v1/payments', { payment_order: orderId, payment_method: mandateMethod(mandateId) }, opts);
}

/** The public id of the mandate created under `reference` (one a crashed request left behind). */
export async function mandateIdByReference(h: DatabaseFixture, reference: string) {
  const [row] = await h.query(sql`SELECT id FROM mandates WHERE reference = ${reference}`);
  return toPublicId('mdt', String(row!.id));
}

/** Registers the mandate at a simulated processor, as a set-up whose answer was lost would have left it. */
export function bookMandate(processor: SimulatedProcessor, id: string, body: ReturnType<typeof mandateBody> | Record<string, unknown>) {
  const account = body.bank_account as { country: string; iban?: string; account_number?: string; routing_number?: string };
  return processor.mandates.create({
    merchant_reference: id,
    scheme: String(body.scheme).toUpperCase(),
    currency: body.currency,
    account: { country: account.country, number: account.iban?.slice(4) ?? account.account_number, bank_code: account.routing_number ?? null },
    payer: { email: 'payer@example.com', name: null },
  });
}
