// Helpers of the customer and payment-method tests: customers over the API, and saved cards put in
// place through the internal attach function (sealed in the vault as the saving payment or verification seals it).
import crypto from 'node:crypto';
import { parseId } from '../../src/kernel/ids.js';
import type { Db } from '../../src/storage/db.js';
import { attachPaymentMethod, paymentMethodView, type AttachPaymentMethodInput } from '../../src/domain/payment-methods/service.js';
import type { PaymentMethodView } from '../../src/domain/payment-methods/schema.js';
import { created, type Api } from './helpers.js';
import { DEVELOPMENT_VAULT_KEY } from '../../src/kernel/encryption.js';
import { createVault } from '../../src/vault/vault.js';

/** The vault as a test service without VAULT_KEYS has it (the development key). */
export const testVault = createVault([DEVELOPMENT_VAULT_KEY]);

/** A card sealed in the vault for `owner`, as a saved method keeps it: its record id (vr_). */
export const sealedCard = (db: Db, owner: Owner, number = '4242424242424242') =>
  testVault.seal(db, contextOf(owner), { number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2 }, 'payment_method');

export const newCustomer = (api: Api, extra: Record<string, unknown> = {}) =>
  created(api, '/v1/customers', { email: 'ada@example.com', name: 'Ada Lovelace', ...extra });

export interface Owner {
  /** The account's public id (acct_), as a tenant carries it. */
  accountId: string;
  livemode: boolean;
}

/** The request context of `owner` as a service function takes it. */
export const contextOf = (owner: Owner) => ({ accountId: parseId('acct', owner.accountId)!, livemode: owner.livemode, requestId: `req_test_${crypto.randomUUID()}` });

/**
 * A saved card of `customer` (a cus_ id) as the verification or a saving payment will store it:
 * through attachPaymentMethod, in a transaction of its own, with a request id like an API call's.
 */
export async function savedCard(db: Db, owner: Owner, customer: string, overrides: Partial<AttachPaymentMethodInput> = {}): Promise<PaymentMethodView> {
  const vaultRecordId = 'vaultRecordId' in overrides ? overrides.vaultRecordId! : await sealedCard(db, owner);
  const row = await db.transaction((tx) =>
    attachPaymentMethod(tx, contextOf(owner), {
      customerId: parseId('cus', customer) ?? customer,
      usage: 'off_session',
      card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, fingerprint: 'fp_test_4242', funding: 'credit' },
      vaultRecordId,
      networkTransactionId: `ntid-${crypto.randomUUID()}`,
      status: 'active',
      ...overrides,
    }),
  );
  return paymentMethodView(row);
}
