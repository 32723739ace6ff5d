// Helpers of the mandate tests: bank accounts per scheme whose ending picks the test scenario
// (API.md §6), mandate bodies, and a mandate created and checked in one call.
import { expect } from 'vitest';
import { ibanWithCheckDigits } from '../src/lib/bank-accounts.js';
import type { Api } from './payments.helpers.js';

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

export async function newMandate(api: Api, scheme: 'sepa_core' | 'bacs' | 'ach' = 'sepa_core', ending: string = ENDINGS.success, overrides: Record<string, unknown> = {}) {
  const res = await api.post('/v1/mandates', mandateBody(scheme, ending, overrides));
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export function mandateMethod(mandate: string) {
  return { type: 'mandate', mandate };
}
