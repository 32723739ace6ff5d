// Bank account rules (src/domain/bank-accounts/rules.ts): pure unit tests, no database.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { ApiError } from '../../src/kernel/errors.js';
import { createEncryptor, EncryptionError } from '../../src/kernel/encryption.js';
import {
  abaChecksumValid,
  bankAccountFingerprint,
  bankAccountView,
  currenciesForCountry,
  ibanWithCheckDigits,
  openBankAccountSecret,
  SEPA_COUNTRIES,
  sealBankAccountSecret,
  validateBankAccount,
} from '../../src/domain/bank-accounts/rules.js';
import { BankAccountInput, BankAccountView } from '../../src/domain/bank-accounts/schema.js';
import { TEST_BANK_ACCOUNT_SCENARIOS, TEST_BANK_ACCOUNTS } from '../../src/domain/bank-accounts/test-accounts.js';

const DE = 'DE89370400440532013000';
const ajv = new Ajv({ strict: false });
const check = ajv.compile(BankAccountInput);

function rejection(input: Record<string, unknown>, prefix?: string): ApiError {
  try {
    validateBankAccount(input as BankAccountInput, prefix);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

function expectRejected(input: Record<string, unknown>, code: 'parameter_invalid' | 'parameter_missing', param: string) {
  const err = rejection(input);
  expect({ code: err.code, param: err.param }).toEqual({ code, param: `bank_account.${param}` });
  expect(err.status).toBe(400);
  expect(err.message).toContain(`bank_account.${param}`);
  // The secret part is never echoed back.
  for (const secret of [input.iban, input.account_number]) {
    if (typeof secret === 'string' && secret.replace(/\s/g, '').length >= 6) expect(err.message).not.toContain(secret.replace(/\s/g, '').toUpperCase());
  }
  return err;
}

describe('IBAN accounts', () => {
  it('accepts a valid IBAN with spaces and lower case, normalised to electronic format', () => {
    const v = validateBankAccount({ country: 'DE', currency: 'EUR', iban: 'de89 3704 0044 0532 0130 00', bic: 'cobadeff xxx' });
    expect(v).toEqual({
      country: 'DE',
      currency: 'EUR',
      format: 'iban',
      secret: DE,
      bic: 'COBADEFFXXX',
      sortCode: null,
      routingNumber: null,
      ifsc: null,
      last4: '3000',
      scenarioDigits: '3000',
    });
  });

  it('accepts valid IBANs of other countries', () => {
    const samples: [string, string, string][] = [
      ['FR', 'EUR', 'FR1420041010050500013M02606'],
      ['NL', 'EUR', 'NL91ABNA0417164300'],
      ['CH', 'CHF', 'CH9300762011623852957'],
      ['CH', 'EUR', 'CH9300762011623852957'],
      ['SE', 'SEK', 'SE4550000000058398257466'],
      ['NO', 'NOK', 'NO9386011117947'],
      ['PL', 'PLN', 'PL61109010140000071219812874'],
      ['GB', 'GBP', 'GB82WEST12345698765432'],
    ];
    for (const [country, currency, iban] of samples) {
      const v = validateBankAccount({ country, currency, iban });
      expect(v.format).toBe('iban');
      expect(v.secret).toBe(iban);
      expect(v.last4).toBe(iban.slice(-4));
    }
    // The scenario digits are digits of the account part even when the IBAN ends in a letter or a national key.
    expect(validateBankAccount({ country: 'FR', currency: 'EUR', iban: 'FR1420041010050500013M02606' }).scenarioDigits).toBe('2606');
  });

  it('rejects a wrong checksum, a wrong length and a wrong format, naming iban', () => {
    expect(expectRejected({ country: 'DE', currency: 'EUR', iban: 'DE89370400440532013001' }, 'parameter_invalid', 'iban').message).toMatch(/check digits/);
    expect(expectRejected({ country: 'DE', currency: 'EUR', iban: 'DE8937040044053201300' }, 'parameter_invalid', 'iban').message).toMatch(/22 characters/);
    expect(expectRejected({ country: 'DE', currency: 'EUR', iban: 'DE893704004405320130000' }, 'parameter_invalid', 'iban').message).toMatch(/length/);
    expectRejected({ country: 'DE', currency: 'EUR', iban: 'DE89ABCD00440532013000' }, 'parameter_invalid', 'iban');
    expectRejected({ country: 'DE', currency: 'EUR', iban: 'DEXX370400440532013000' }, 'parameter_invalid', 'iban');
  });

  it('rejects an IBAN of another country than the account', () => {
    const err = expectRejected({ country: 'FR', currency: 'EUR', iban: DE }, 'parameter_invalid', 'iban');
    expect(err.message).toContain('FR');
  });

  it('validates the BIC: format, known country, and the same country as the account', () => {
    expect(validateBankAccount({ country: 'DE', currency: 'EUR', iban: DE, bic: 'DEUTDEFF' }).bic).toBe('DEUTDEFF');
    expectRejected({ country: 'DE', currency: 'EUR', iban: DE, bic: 'DEUTDEF' }, 'parameter_invalid', 'bic');
    expectRejected({ country: 'DE', currency: 'EUR', iban: DE, bic: 'DEUTDEFF12' }, 'parameter_invalid', 'bic');
    expectRejected({ country: 'DE', currency: 'EUR', iban: DE, bic: 'DEUTQQFF' }, 'parameter_invalid', 'bic');
    expectRejected({ country: 'DE', currency: 'EUR', iban: DE, bic: '1EUTDEFF' }, 'parameter_invalid', 'bic');
    const mismatch = expectRejected({ country: 'DE', currency: 'EUR', iban: DE, bic: 'BNPAFRPP' }, 'parameter_invalid', 'bic');
    expect(mismatch.message).toMatch(/FR.*DE/);
    // A BIC is optional for every format and checked for the country there too.
    expect(validateBankAccount({ country: 'US', currency: 'USD', routing_number: '021000021', account_number: '123456789', bic: 'CHASUS33' }).bic).toBe('CHASUS33');
    expectRejected({ country: 'US', currency: 'USD', routing_number: '021000021', account_number: '123456789', bic: 'NWBKGB2L' }, 'parameter_invalid', 'bic');
  });

  it('refuses account-number fields beside an IBAN, and needs the IBAN in IBAN countries', () => {
    expectRejected({ country: 'DE', currency: 'EUR', iban: DE, account_number: '0532013000' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'DE', currency: 'EUR', iban: DE, routing_number: '110000000' }, 'parameter_invalid', 'routing_number');
    expectRejected({ country: 'GB', currency: 'GBP', iban: 'GB82WEST12345698765432', sort_code: '123456' }, 'parameter_invalid', 'sort_code');
    expectRejected({ country: 'DE', currency: 'EUR', account_number: '0532013000' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'DE', currency: 'EUR' }, 'parameter_missing', 'iban');
    expectRejected({ country: 'DE', currency: 'EUR', bic: 'DEUTDEFF' }, 'parameter_missing', 'iban');
  });
});

describe('GB accounts by sort code', () => {
  it('accepts 6-digit sort codes (with dashes) and 8-digit account numbers', () => {
    const v = validateBankAccount({ country: 'GB', currency: 'GBP', sort_code: '12-34-56', account_number: '1234 5678' });
    expect(v).toMatchObject({ format: 'gb', sortCode: '123456', secret: '12345678', last4: '5678', scenarioDigits: '5678', routingNumber: null, ifsc: null, bic: null });
  });

  it('rejects bad sort codes and account numbers', () => {
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '12345', account_number: '12345678' }, 'parameter_invalid', 'sort_code');
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '12-34-5X', account_number: '12345678' }, 'parameter_invalid', 'sort_code');
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '123456', account_number: '1234567' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '123456', account_number: '123456789' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '123456', account_number: '1234567a' }, 'parameter_invalid', 'account_number');
  });

  it('names the missing half, and refuses other countries’ routing fields', () => {
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '123456' }, 'parameter_missing', 'account_number');
    expectRejected({ country: 'GB', currency: 'GBP', account_number: '12345678' }, 'parameter_missing', 'sort_code');
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '123456', account_number: '12345678', routing_number: '110000000' }, 'parameter_invalid', 'routing_number');
    expectRejected({ country: 'GB', currency: 'GBP', sort_code: '123456', account_number: '12345678', ifsc: 'HDFC0000001' }, 'parameter_invalid', 'ifsc');
    expect(expectRejected({ country: 'GB', currency: 'GBP' }, 'parameter_missing', 'iban').message).toMatch(/sort_code/);
  });
});

describe('US accounts', () => {
  it('checks the ABA checksum', () => {
    for (const good of ['110000000', '021000021', '011000015', '121000358']) expect(abaChecksumValid(good)).toBe(true);
    for (const bad of ['021000022', '110000001', '12100035', '12100035x']) expect(abaChecksumValid(bad)).toBe(false);
  });

  it('accepts routing + 4 to 17 digit account numbers', () => {
    const v = validateBankAccount({ country: 'US', currency: 'USD', routing_number: '021000021', account_number: '000123456789' });
    expect(v).toMatchObject({ format: 'us', routingNumber: '021000021', secret: '000123456789', last4: '6789', scenarioDigits: '6789', sortCode: null });
    expect(validateBankAccount({ country: 'US', currency: 'USD', routing_number: '110000000', account_number: '1234' }).secret).toBe('1234');
    expect(validateBankAccount({ country: 'US', currency: 'USD', routing_number: '110000000', account_number: '12345678901234567' }).last4).toBe('4567');
  });

  it('rejects bad routing numbers and account numbers, and foreign fields', () => {
    expect(expectRejected({ country: 'US', currency: 'USD', routing_number: '021000022', account_number: '123456789' }, 'parameter_invalid', 'routing_number').message).toMatch(/checksum/);
    expectRejected({ country: 'US', currency: 'USD', routing_number: '02100002', account_number: '123456789' }, 'parameter_invalid', 'routing_number');
    expectRejected({ country: 'US', currency: 'USD', routing_number: '110000000', account_number: '123' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'US', currency: 'USD', routing_number: '110000000', account_number: '123456789012345678' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'US', currency: 'USD', routing_number: '110000000', account_number: '12345678', sort_code: '123456' }, 'parameter_invalid', 'sort_code');
    expectRejected({ country: 'US', currency: 'USD', iban: DE }, 'parameter_invalid', 'iban');
    expectRejected({ country: 'US', currency: 'USD', account_number: '12345678' }, 'parameter_missing', 'routing_number');
    expectRejected({ country: 'US', currency: 'USD', routing_number: '110000000' }, 'parameter_missing', 'account_number');
  });
});

describe('IN accounts', () => {
  it('accepts an IFSC (any case) and a 9 to 18 digit account number', () => {
    const v = validateBankAccount({ country: 'IN', currency: 'INR', ifsc: 'sbin0001234', account_number: '123456789012' });
    expect(v).toMatchObject({ format: 'in', ifsc: 'SBIN0001234', secret: '123456789012', last4: '9012', scenarioDigits: '9012' });
  });

  it('rejects bad IFSCs and account numbers', () => {
    for (const ifsc of ['SBIN1001234', 'SBI00001234', 'SBIN000123', 'SBIN00012345', 'SB1N0001234']) {
      expectRejected({ country: 'IN', currency: 'INR', ifsc, account_number: '123456789012' }, 'parameter_invalid', 'ifsc');
    }
    expectRejected({ country: 'IN', currency: 'INR', ifsc: 'SBIN0001234', account_number: '12345678' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'IN', currency: 'INR', ifsc: 'SBIN0001234', account_number: '1234567890123456789' }, 'parameter_invalid', 'account_number');
    expectRejected({ country: 'IN', currency: 'INR', account_number: '123456789012' }, 'parameter_missing', 'ifsc');
    expectRejected({ country: 'IN', currency: 'INR', ifsc: 'SBIN0001234', account_number: '123456789012', routing_number: '110000000' }, 'parameter_invalid', 'routing_number');
  });
});

describe('country and currency', () => {
  it('refuses countries without a supported format', () => {
    expect(expectRejected({ country: 'CA', currency: 'CAD', account_number: '1234567' }, 'parameter_invalid', 'country').message).toMatch(/not supported/);
    expectRejected({ country: 'ZZ', currency: 'EUR', iban: DE }, 'parameter_invalid', 'country');
    expectRejected({ country: 'de', currency: 'EUR', iban: DE }, 'parameter_invalid', 'country');
    expectRejected({ currency: 'EUR', iban: DE }, 'parameter_missing', 'country');
  });

  it('needs a known currency that fits the country', () => {
    expectRejected({ country: 'DE', iban: DE }, 'parameter_missing', 'currency');
    expectRejected({ country: 'DE', currency: 'XXX', iban: DE }, 'parameter_invalid', 'currency');
    const err = expectRejected({ country: 'DE', currency: 'USD', iban: DE }, 'parameter_invalid', 'currency');
    expect(err.message).toContain('EUR');
    expect(expectRejected({ country: 'SE', currency: 'USD', iban: 'SE4550000000058398257466' }, 'parameter_invalid', 'currency').message).toMatch(/SEK, EUR/);
    expectRejected({ country: 'GB', currency: 'USD', sort_code: '123456', account_number: '12345678' }, 'parameter_invalid', 'currency');
    expectRejected({ country: 'US', currency: 'EUR', routing_number: '110000000', account_number: '12345678' }, 'parameter_invalid', 'currency');
    expectRejected({ country: 'IN', currency: 'USD', ifsc: 'SBIN0001234', account_number: '123456789012' }, 'parameter_invalid', 'currency');
    // SEPA countries outside the euro area also take EUR.
    expect(validateBankAccount({ country: 'GB', currency: 'EUR', iban: 'GB82WEST12345698765432' }).currency).toBe('EUR');
    expect(validateBankAccount({ country: 'PL', currency: 'EUR', iban: 'PL61109010140000071219812874' }).currency).toBe('EUR');
  });

  it('has the expected currency table and SEPA list', () => {
    expect(currenciesForCountry('DE')).toEqual(['EUR']);
    expect(currenciesForCountry('SE')).toEqual(['SEK', 'EUR']);
    expect(currenciesForCountry('CH')).toEqual(['CHF', 'EUR']);
    expect(currenciesForCountry('DK')).toEqual(['DKK', 'EUR']);
    expect(currenciesForCountry('NO')).toEqual(['NOK', 'EUR']);
    expect(currenciesForCountry('GB')).toEqual(['GBP', 'EUR']);
    expect(currenciesForCountry('US')).toEqual(['USD']);
    expect(currenciesForCountry('IN')).toEqual(['INR']);
    expect(currenciesForCountry('TR')).toEqual(['TRY']);
    expect(currenciesForCountry('CA')).toBeNull();
    for (const c of ['DE', 'FR', 'IS', 'LI', 'NO', 'CH', 'GB', 'SM', 'VA', 'MC', 'AD']) expect(SEPA_COUNTRIES.has(c)).toBe(true);
    for (const c of ['US', 'TR', 'RS', 'IN']) expect(SEPA_COUNTRIES.has(c)).toBe(false);
    expect(SEPA_COUNTRIES.size).toBe(37);
  });

  it('names the param with the given prefix', () => {
    const err = rejection({ country: 'DE', currency: 'EUR', iban: 'DE00370400440532013000' }, 'customer.bank_account');
    expect(err.param).toBe('customer.bank_account.iban');
  });
});

describe('fingerprint', () => {
  const key = crypto.randomBytes(32);
  const fp = (input: BankAccountInput, k = key) => bankAccountFingerprint(validateBankAccount(input), k);

  it('is equal across formatting variants and stable', () => {
    const a = fp({ country: 'DE', currency: 'EUR', iban: DE });
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(fp({ country: 'DE', currency: 'EUR', iban: 'de89 3704 0044 0532 0130 00' })).toBe(a);
    expect(fp({ country: 'DE', currency: 'EUR', iban: DE, bic: 'COBADEFF' })).toBe(a);
    expect(fp({ country: 'GB', currency: 'GBP', sort_code: '12-34-56', account_number: '12345678' })).toBe(
      fp({ country: 'GB', currency: 'GBP', sort_code: '123456', account_number: '1234 5678' }),
    );
    // The same GB account given by IBAN or by sort code + account number.
    expect(fp({ country: 'GB', currency: 'GBP', iban: 'GB82WEST12345698765432' })).toBe(fp({ country: 'GB', currency: 'GBP', sort_code: '123456', account_number: '98765432' }));
  });

  it('differs across accounts, routing and keys', () => {
    const a = fp({ country: 'DE', currency: 'EUR', iban: DE });
    expect(fp({ country: 'DE', currency: 'EUR', iban: ibanWithCheckDigits('DE', '370400440532013001') })).not.toBe(a);
    expect(fp({ country: 'DE', currency: 'EUR', iban: DE }, crypto.randomBytes(32))).not.toBe(a);
    const us = fp({ country: 'US', currency: 'USD', routing_number: '110000000', account_number: '123456789' });
    expect(fp({ country: 'US', currency: 'USD', routing_number: '021000021', account_number: '123456789' })).not.toBe(us);
    expect(fp({ country: 'IN', currency: 'INR', ifsc: 'SBIN0001234', account_number: '123456789' })).not.toBe(us);
    expect(us).not.toContain('123456789');
  });
});

describe('sealing', () => {
  const encryptor = createEncryptor([{ id: 'k1', key: crypto.randomBytes(32) }]);

  it('round-trips, hides the secret and binds the context', () => {
    for (const input of [{ country: 'DE', currency: 'EUR', iban: DE }, TEST_BANK_ACCOUNTS['0000'].us]) {
      const account = validateBankAccount(input);
      const sealed = sealBankAccountSecret(encryptor, account, 'ben_1');
      expect(sealed).not.toContain(account.secret);
      expect(sealed).not.toContain(account.secret.slice(-8));
      expect(Buffer.from(sealed.split('.')[3]!, 'base64url').toString('latin1')).not.toContain(account.secret.slice(-6));
      expect(openBankAccountSecret(encryptor, sealed, 'ben_1')).toBe(account.secret);
      expect(() => openBankAccountSecret(encryptor, sealed, 'ben_2')).toThrow(EncryptionError);
      // Not a bare encryption under the row id: a value sealed for another purpose does not open.
      expect(() => encryptor.decrypt(sealed, 'ben_1')).toThrow(EncryptionError);
      expect(sealBankAccountSecret(encryptor, account, 'ben_1')).not.toBe(sealed);
    }
  });
});

describe('schemas and view', () => {

  it('the input schema takes the documented fields only', () => {
    expect(check({ country: 'DE', currency: 'EUR', iban: DE, bic: 'COBADEFF' })).toBe(true);
    expect(check({ country: 'DE', currency: 'EUR', iban: DE, extra: 'x' })).toBe(false);
    expect(check({ country: 'de', currency: 'EUR', iban: DE })).toBe(false);
    expect(check({ country: 'DE', currency: 'eur', iban: DE })).toBe(false);
    expect(check({ country: 'DE', currency: 'EUR', iban: 'X'.repeat(51) })).toBe(false);
    expect((BankAccountInput as { $id?: string }).$id).toBe('BankAccountInput');
    expect((BankAccountView as { $id?: string }).$id).toBe('BankAccount');
  });

  it('the view maps stored columns and never holds the secret', () => {
    const account = validateBankAccount(TEST_BANK_ACCOUNTS['0002'].gb);
    const view = bankAccountView({ ...account, fingerprint: bankAccountFingerprint(account, Buffer.alloc(32, 1)) });
    expect(view).toEqual({ country: 'GB', currency: 'GBP', last4: '0002', bic: null, sort_code: '200000', routing_number: null, ifsc: null, fingerprint: view.fingerprint });
    expect(ajv.compile(BankAccountView)(view)).toBe(true);
    expect(JSON.stringify(view)).not.toContain(account.secret);
  });
});

describe('test-mode accounts', () => {
  it('are valid in every format and pick their scenario', () => {
    expect(Object.keys(TEST_BANK_ACCOUNTS).sort()).toEqual(Object.values(TEST_BANK_ACCOUNT_SCENARIOS).sort());
    for (const [ending, byFormat] of Object.entries(TEST_BANK_ACCOUNTS)) {
      for (const [format, input] of Object.entries(byFormat)) {
        const v = validateBankAccount(input);
        expect(v.format).toBe(format);
        expect(v.scenarioDigits).toBe(ending);
        expect(v.last4).toBe(ending);
        expect(check(input)).toBe(true);
      }
    }
  });

  it('ibanWithCheckDigits computes valid check digits', () => {
    expect(ibanWithCheckDigits('DE', '370400440532013000')).toBe(DE);
    expect(ibanWithCheckDigits('GB', 'WEST12345698765432')).toBe('GB82WEST12345698765432');
    expect(() => ibanWithCheckDigits('DE', '123')).toThrow();
  });
});
