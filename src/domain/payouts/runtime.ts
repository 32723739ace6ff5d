// What beneficiaries and payouts need besides the database: the payments runtime (connectors,
// router, clock), the encryptor of bank account numbers and the fingerprint key. Stateless, so the
// api and the worker may each build their own from the same configuration.
import type { Config, PayoutsConfig } from '../../config.js';
import { createEncryptor, type Encryptor } from '../../lib/encryption.js';
import type { PaymentsRuntime } from '../payments/runtime.js';

export interface PayoutsRuntime {
  payments: PaymentsRuntime;
  config: PayoutsConfig;
  /** Seals and opens IBANs and account numbers (ENCRYPTION_KEYS, as webhook secrets). */
  encryptor: Encryptor;
  /** HMAC key of bank account fingerprints: CARD_FINGERPRINT_KEY, derived per merchant account. */
  fingerprintKey: Buffer;
}

export function createPayoutsRuntime(config: Pick<Config, 'encryptionKeys' | 'payouts' | 'payments'>, payments: PaymentsRuntime): PayoutsRuntime {
  return {
    payments,
    config: config.payouts,
    encryptor: createEncryptor(config.encryptionKeys),
    fingerprintKey: config.payments.cardFingerprintKey,
  };
}
