// Test-mode accounts (docs/test-mode.md): the account number, or the IBAN's account part, ends in the
// scenario's digits.
import type { BankAccountInput } from './schema.js';
import { ibanWithCheckDigits, type BankAccountFormat } from './rules.js';

export const TEST_BANK_ACCOUNT_SCENARIOS = {
  success: '0000',
  account_closed: '0002',
  pending: '0003',
  timeout: '0004',
  processor_error: '0005',
} as const;
export type TestBankAccountEnding = (typeof TEST_BANK_ACCOUNT_SCENARIOS)[keyof typeof TEST_BANK_ACCOUNT_SCENARIOS];

function testAccounts(ending: string): Record<BankAccountFormat, BankAccountInput> {
  return {
    // Commerzbank's bank code 370 400 44; the IBAN ends in the scenario digits.
    iban: { country: 'DE', currency: 'EUR', iban: ibanWithCheckDigits('DE', `37040044053201${ending}`) },
    gb: { country: 'GB', currency: 'GBP', sort_code: '200000', account_number: `5577${ending}` },
    us: { country: 'US', currency: 'USD', routing_number: '110000000', account_number: `00012345${ending}` },
    in: { country: 'IN', currency: 'INR', ifsc: 'HDFC0000001', account_number: `12345678${ending}` },
  };
}

/** A valid test account per format for every scenario ending: `TEST_BANK_ACCOUNTS['0002'].iban` is a DE IBAN whose account is closed. */
export const TEST_BANK_ACCOUNTS: Readonly<Record<TestBankAccountEnding, Readonly<Record<BankAccountFormat, BankAccountInput>>>> = {
  '0000': testAccounts('0000'),
  '0002': testAccounts('0002'),
  '0003': testAccounts('0003'),
  '0004': testAccounts('0004'),
  '0005': testAccounts('0005'),
};
