// A bank account as rows store it (the columns of storage/schema.ts `bankAccount()`, in beneficiaries
// and mandates): the non-secret fields in clear, the keyed fingerprint, the secret part sealed.
import { bankAccountView, type ValidBankAccount } from './rules.js';
import type { BankAccountView } from './schema.js';

export interface StoredBankAccount {
  bankCountry: string;
  bankCurrency: string;
  bankLast4: string;
  bankBic: string | null;
  bankSortCode: string | null;
  bankRoutingNumber: string | null;
  bankIfsc: string | null;
  bankFingerprint: string;
  bankSecretEncrypted: string;
}

/** The columns of a validated account; its fingerprint and sealed secret are the caller's, keyed and bound to its row. */
export function bankAccountColumns(account: ValidBankAccount, fingerprint: string, sealedSecret: string): StoredBankAccount {
  return {
    bankCountry: account.country,
    bankCurrency: account.currency,
    bankLast4: account.last4,
    bankBic: account.bic,
    bankSortCode: account.sortCode,
    bankRoutingNumber: account.routingNumber,
    bankIfsc: account.ifsc,
    bankFingerprint: fingerprint,
    bankSecretEncrypted: sealedSecret,
  };
}

export function bankAccountViewOfRow(row: Omit<StoredBankAccount, 'bankSecretEncrypted'>): BankAccountView {
  return bankAccountView({
    country: row.bankCountry,
    currency: row.bankCurrency,
    last4: row.bankLast4,
    bic: row.bankBic,
    sortCode: row.bankSortCode,
    routingNumber: row.bankRoutingNumber,
    ifsc: row.bankIfsc,
    fingerprint: row.bankFingerprint,
  });
}
