// Bank account rules shared by beneficiaries (payouts) and mandates (direct debits): semantic
// validation beyond the request schema (IBAN checksum and length, BIC, GB sort code, US ABA
// routing checksum, IN IFSC, country ↔ currency fit), normalisation, a keyed fingerprint and the
// sealed column form of the secret part (IBAN or account number).
//
// The secret part is never put in an error message, a log line or an API answer: only `last4`,
// the keyed fingerprint and the non-secret routing fields (BIC, sort code, routing number, IFSC)
// leave this module in clear.
import crypto from 'node:crypto';
import { composeIBAN, extractIBAN, getCountrySpecifications, isValidBIC, validateIBAN, ValidationErrorsIBAN } from 'ibantools';
import { ApiError } from '../../kernel/errors.js';
import { CURRENCY_EXPONENTS } from '../../kernel/currencies.js';
import type { Encryptor } from '../../kernel/encryption.js';
import type { BankAccountInput, BankAccountView } from './schema.js';

// ---------------------------------------------------------------------------------------------
// Countries and currencies

export type BankAccountFormat = 'iban' | 'gb' | 'us' | 'in';

export interface ValidBankAccount {
  country: string;
  currency: string;
  format: BankAccountFormat;
  /** The secret part: the IBAN (electronic format) or the account number. Encrypt it; never log or return it. */
  secret: string;
  bic: string | null;
  sortCode: string | null;
  routingNumber: string | null;
  ifsc: string | null;
  last4: string;
  /** The last 4 digits of the account number part (for IBANs: of the BBAN), which pick the test-mode scenario (docs/test-mode.md). */
  scenarioDigits: string;
}

/**
 * Countries of the SEPA scheme (EPC list): the EEA (EU + IS, LI, NO) plus CH, GB, SM, VA, MC, AD
 * and GI. Listed by hand rather than taken from ibantools so that a library upgrade cannot
 * silently widen which accounts a `sepa_core` mandate accepts.
 */
export const SEPA_COUNTRIES: ReadonlySet<string> = new Set(
  (
    'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK ' + // EU
    'IS LI NO ' + // rest of the EEA
    'CH GB SM VA MC AD GI'
  ).split(' '),
);

// National currencies of the countries that use IBANs (ibantools' list) plus US and IN. Bulgaria
// and Croatia are in the euro area (BGN and HRK are gone, see currencies.ts).
const NATIONAL_CURRENCIES: Readonly<Record<string, readonly string[]>> = {
  AD: ['EUR'], AE: ['AED'], AL: ['ALL'], AO: ['AOA'], AT: ['EUR'], AX: ['EUR'], AZ: ['AZN'], BA: ['BAM'],
  BE: ['EUR'], BF: ['XOF'], BG: ['EUR'], BH: ['BHD'], BI: ['BIF'], BJ: ['XOF'], BL: ['EUR'], BR: ['BRL'],
  BY: ['BYN'], CF: ['XAF'], CG: ['XAF'], CH: ['CHF'], CI: ['XOF'], CM: ['XAF'], CR: ['CRC'], CV: ['CVE'],
  CY: ['EUR'], CZ: ['CZK'], DE: ['EUR'], DJ: ['DJF'], DK: ['DKK'], DO: ['DOP'], DZ: ['DZD'], EE: ['EUR'],
  EG: ['EGP'], ES: ['EUR'], FI: ['EUR'], FK: ['FKP'], FO: ['DKK'], FR: ['EUR'], GA: ['XAF'], GB: ['GBP'],
  GE: ['GEL'], GF: ['EUR'], GI: ['GIP'], GL: ['DKK'], GP: ['EUR'], GQ: ['XAF'], GR: ['EUR'], GT: ['GTQ'],
  GW: ['XOF'], HN: ['HNL'], HR: ['EUR'], HU: ['HUF'], IE: ['EUR'], IL: ['ILS'], IN: ['INR'], IQ: ['IQD'],
  IR: ['IRR'], IS: ['ISK'], IT: ['EUR'], JO: ['JOD'], KM: ['KMF'], KW: ['KWD'], KZ: ['KZT'], LB: ['LBP'],
  LC: ['XCD'], LI: ['CHF'], LT: ['EUR'], LU: ['EUR'], LV: ['EUR'], LY: ['LYD'], MA: ['MAD'], MC: ['EUR'],
  MD: ['MDL'], ME: ['EUR'], MF: ['EUR'], MG: ['MGA'], MK: ['MKD'], ML: ['XOF'], MN: ['MNT'], MQ: ['EUR'],
  MR: ['MRU'], MT: ['EUR'], MU: ['MUR'], MZ: ['MZN'], NC: ['XPF'], NE: ['XOF'], NI: ['NIO'], NL: ['EUR'],
  NO: ['NOK'], OM: ['OMR'], PF: ['XPF'], PK: ['PKR'], PL: ['PLN'], PM: ['EUR'], PS: ['ILS', 'JOD', 'USD'],
  PT: ['EUR'], QA: ['QAR'], RE: ['EUR'], RO: ['RON'], RS: ['RSD'], RU: ['RUB'], SA: ['SAR'], SC: ['SCR'],
  SD: ['SDG'], SE: ['SEK'], SI: ['EUR'], SK: ['EUR'], SM: ['EUR'], SN: ['XOF'], SO: ['SOS'], ST: ['STN'],
  SV: ['USD'], TD: ['XAF'], TF: ['EUR'], TG: ['XOF'], TL: ['USD'], TN: ['TND'], TR: ['TRY'], UA: ['UAH'],
  US: ['USD'], VA: ['EUR'], VG: ['USD'], WF: ['XPF'], XK: ['EUR'], YE: ['YER'], YT: ['EUR'],
};

// Territories whose banks commonly carry the parent country's BIC (French overseas, Åland).
const BIC_PARENT: Readonly<Record<string, string>> = {
  BL: 'FR', GF: 'FR', GP: 'FR', MF: 'FR', MQ: 'FR', NC: 'FR', PF: 'FR', PM: 'FR', RE: 'FR', TF: 'FR', WF: 'FR', YT: 'FR',
  AX: 'FI',
};

const IBAN_SPECS = getCountrySpecifications();

export function isIbanCountry(country: string): boolean {
  return Boolean(IBAN_SPECS[country]?.chars) && Object.hasOwn(NATIONAL_CURRENCIES, country);
}

/** The currencies an account in `country` may hold (national, plus EUR in SEPA); null if the country is unsupported. */
export function currenciesForCountry(country: string): readonly string[] | null {
  const national = NATIONAL_CURRENCIES[country];
  if (!national || !(country === 'US' || country === 'IN' || isIbanCountry(country))) return null;
  return SEPA_COUNTRIES.has(country) && !national.includes('EUR') ? [...national, 'EUR'] : national;
}

/** Formats an account of `country` may be given in; empty if the country is unsupported. */
export function formatsForCountry(country: string): readonly BankAccountFormat[] {
  if (country === 'US') return ['us'];
  if (country === 'IN') return ['in'];
  if (country === 'GB') return ['iban', 'gb'];
  return isIbanCountry(country) ? ['iban'] : [];
}

// ---------------------------------------------------------------------------------------------
// Checks

/** ABA routing number checksum: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10). */
export function abaChecksumValid(routing: string): boolean {
  if (!/^[0-9]{9}$/.test(routing)) return false;
  const d = [...routing].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

/** An IBAN of `country` with `bban` and the right check digits (ISO 13616 mod 97). Throws if the BBAN does not fit the country. */
export function ibanWithCheckDigits(country: string, bban: string): string {
  const iban = composeIBAN({ countryCode: country, bban });
  if (!iban) throw new Error(`${bban.length} characters are not a ${country} BBAN`);
  return iban;
}

const IFSC = /^[A-Z]{4}0[A-Z0-9]{6}$/;
const BIC = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;
const ROUTING_FIELDS = ['sort_code', 'routing_number', 'ifsc'] as const;

type Field = keyof BankAccountInput;

/** Throws ApiError('parameter_invalid' | 'parameter_missing', { param: `${paramPrefix}.<field>` , message }) for the first bad field. */
export function validateBankAccount(input: BankAccountInput, paramPrefix = 'bank_account'): ValidBankAccount {
  const param = (field: Field) => `${paramPrefix}.${field}`;
  const invalid = (field: Field, message: string) => new ApiError('parameter_invalid', { param: param(field), message: `${param(field)} ${message}` });
  const missing = (field: Field, message: string) => new ApiError('parameter_missing', { param: param(field), message: `${param(field)} ${message}` });
  const given = (field: Field) => input[field] !== undefined && input[field] !== null;
  // Whitespace is formatting, never part of an identifier.
  const clean = (field: Field) => (given(field) ? String(input[field]).replace(/\s+/g, '') : undefined);

  if (!given('country')) throw missing('country', 'is required.');
  const country = String(input.country);
  if (!/^[A-Z]{2}$/.test(country)) throw invalid('country', 'must be an ISO 3166-1 alpha-2 code in upper case.');
  const formats = formatsForCountry(country);
  const allowedCurrencies = currenciesForCountry(country);
  if (formats.length === 0 || !allowedCurrencies) {
    throw invalid('country', `${country} is not supported: bank accounts are accepted for IBAN countries, US and IN.`);
  }

  if (!given('currency')) throw missing('currency', 'is required.');
  const currency = String(input.currency);
  if (!/^[A-Z]{3}$/.test(currency) || !CURRENCY_EXPONENTS.has(currency)) {
    throw invalid('currency', 'must be an ISO 4217 currency code in upper case.');
  }
  if (!allowedCurrencies.includes(currency)) {
    throw invalid('currency', `${currency} does not fit a ${country} account; allowed: ${allowedCurrencies.join(', ')}.`);
  }

  let format: BankAccountFormat;
  if (formats.length === 1) format = formats[0]!;
  else format = given('iban') ? 'iban' : given('account_number') || given('sort_code') ? 'gb' : 'iban';

  // Fields of another format are refused rather than ignored: a caller sending them believes
  // they count, and silently dropping a routing field could pay the wrong bank.
  const belongs: Record<BankAccountFormat, readonly Field[]> = {
    iban: ['iban'],
    gb: ['account_number', 'sort_code'],
    us: ['account_number', 'routing_number'],
    in: ['account_number', 'ifsc'],
  };
  for (const field of ['iban', 'account_number', ...ROUTING_FIELDS] as const) {
    if (given(field) && !belongs[format].includes(field)) {
      throw invalid(field, `does not belong to a ${country} account given ${describe(format)}.`);
    }
  }
  for (const field of belongs[format]) {
    if (!given(field)) {
      const message =
        format === 'iban' && formats.includes('gb')
          ? `is required for a ${country} account (or sort_code and account_number).`
          : `is required for a ${country} account.`;
      throw missing(field, message);
    }
  }

  const bic = clean('bic')?.toUpperCase() ?? null;
  if (bic !== null) {
    if (!BIC.test(bic) || !isValidBIC(bic)) throw invalid('bic', 'is not a valid BIC: 8 or 11 letters and digits (bank, country, location, branch).');
    const bicCountry = bic.slice(4, 6);
    if (bicCountry !== country && BIC_PARENT[country] !== bicCountry) {
      throw invalid('bic', `belongs to a bank in ${bicCountry}, not in ${country}.`);
    }
  }

  const base = { country, currency, bic, sortCode: null, routingNumber: null, ifsc: null };
  if (format === 'iban') {
    const iban = clean('iban')!.toUpperCase();
    if (iban.slice(0, 2) !== country) throw invalid('iban', `does not start with the country code ${country} of ${param('country')}.`);
    const result = validateIBAN(iban);
    if (!result.valid) throw invalid('iban', ibanProblem(result.errorCodes, country));
    const bbanDigits = (extractIBAN(iban).bban ?? iban.slice(4)).replace(/[^0-9]/g, '');
    return { ...base, format, secret: iban, last4: iban.slice(-4), scenarioDigits: bbanDigits.slice(-4).padStart(4, '0') };
  }

  const accountNumber = clean('account_number')!;
  const account = (secret: string, extra: Partial<ValidBankAccount>): ValidBankAccount => ({
    ...base,
    ...extra,
    format,
    secret,
    last4: secret.slice(-4),
    scenarioDigits: secret.slice(-4),
  });
  if (format === 'gb') {
    const sortCode = String(input.sort_code).replace(/[\s-]+/g, '');
    if (!/^[0-9]{6}$/.test(sortCode)) throw invalid('sort_code', 'must be 6 digits (dashes allowed: 12-34-56).');
    if (!/^[0-9]{8}$/.test(accountNumber)) throw invalid('account_number', 'must be exactly 8 digits for a GB account.');
    return account(accountNumber, { sortCode });
  }
  if (format === 'us') {
    const routing = clean('routing_number')!;
    if (!/^[0-9]{9}$/.test(routing)) throw invalid('routing_number', 'must be 9 digits.');
    if (!abaChecksumValid(routing)) throw invalid('routing_number', 'is not a valid ABA routing number (checksum).');
    if (!/^[0-9]{4,17}$/.test(accountNumber)) throw invalid('account_number', 'must be 4 to 17 digits for a US account.');
    return account(accountNumber, { routingNumber: routing });
  }
  const ifsc = clean('ifsc')!.toUpperCase();
  if (!IFSC.test(ifsc)) throw invalid('ifsc', 'must be an IFSC: 4 letters, a zero, then 6 letters or digits (HDFC0000001).');
  if (!/^[0-9]{9,18}$/.test(accountNumber)) throw invalid('account_number', 'must be 9 to 18 digits for an IN account.');
  return account(accountNumber, { ifsc });
}

function describe(format: BankAccountFormat): string {
  return { iban: 'by IBAN', gb: 'by sort code and account number', us: 'by routing and account number', in: 'by IFSC and account number' }[format];
}

// Messages name the problem and never repeat the IBAN.
function ibanProblem(codes: readonly ValidationErrorsIBAN[], country: string): string {
  const length = IBAN_SPECS[country]?.chars;
  if (codes.includes(ValidationErrorsIBAN.NoIBANCountry)) return `is not an IBAN (unknown country code).`;
  if (codes.includes(ValidationErrorsIBAN.WrongBBANLength)) return `has the wrong length: a ${country} IBAN has ${length} characters.`;
  if (codes.includes(ValidationErrorsIBAN.WrongBBANFormat)) return `does not have the format of a ${country} IBAN.`;
  if (codes.includes(ValidationErrorsIBAN.WrongAccountBankBranchChecksum)) return 'has wrong national check digits.';
  return 'is not a valid IBAN (check digits).';
}

// ---------------------------------------------------------------------------------------------
// Fingerprint and sealing

/**
 * Keyed (HMAC-SHA256) fingerprint of country + routing + secret: equal for the same account,
 * useless without the key. Keyed because account numbers are short and structured (a GB account
 * is 6 + 8 digits, a US one often under 12): a plain hash of them is reversed by trying every
 * value, so an unkeyed fingerprint would be the account number in disguise. A GB account given
 * as IBAN and as sort code + account number gets the same fingerprint (the IBAN holds both).
 * Base64url, 22 characters (132 bits).
 */
export function bankAccountFingerprint(account: ValidBankAccount, key: Buffer): string {
  return crypto.createHmac('sha256', key).update(canonicalAccount(account)).digest('base64url').slice(0, 22);
}

function canonicalAccount(account: ValidBankAccount): string {
  // A domain label, so that the same key used for card fingerprints never yields equal digests.
  const label = 'bank_account.v1';
  switch (account.format) {
    case 'iban':
      if (account.country === 'GB') {
        // GB BBAN: 4-letter bank code, 6-digit sort code, 8-digit account number.
        const bban = account.secret.slice(4);
        return [label, 'GB', bban.slice(4, 10), bban.slice(10)].join('|');
      }
      return [label, account.country, '', account.secret].join('|');
    case 'gb':
      return [label, 'GB', account.sortCode, account.secret].join('|');
    case 'us':
      return [label, 'US', account.routingNumber, account.secret].join('|');
    case 'in':
      return [label, 'IN', account.ifsc, account.secret].join('|');
  }
}

// The context gets a label of its own, so a bank account ciphertext never opens where another
// kind of sealed value with the same row id (e.g. a webhook secret) is expected.
const sealContext = (context: string) => `bank_account:${context}`;

/** Sealed form for a column; context binds it to its row (e.g. the beneficiary id). Uses src/kernel/encryption.ts. */
export function sealBankAccountSecret(encryptor: Encryptor, account: ValidBankAccount, context: string): string {
  return encryptor.encrypt(account.secret, sealContext(context));
}

export function openBankAccountSecret(encryptor: Encryptor, sealed: string, context: string): string {
  return encryptor.decrypt(sealed, sealContext(context));
}

/** The view returned by the API from stored columns. */
export function bankAccountView(stored: {
  country: string;
  currency: string;
  last4: string;
  bic: string | null;
  sortCode: string | null;
  routingNumber: string | null;
  ifsc: string | null;
  fingerprint: string;
}): BankAccountView {
  return {
    country: stored.country,
    currency: stored.currency,
    last4: stored.last4,
    bic: stored.bic,
    sort_code: stored.sortCode,
    routing_number: stored.routingNumber,
    ifsc: stored.ifsc,
    fingerprint: stored.fingerprint,
  };
}

