// What the beneficiary and mandate routes share about the bank account in their requests: its
// schemas (src/domain/bank-accounts/schema.ts) — whichever module registers first adds them, the other
// finds them there (fastify refuses a schema id added twice) — and how its secret part is kept out
// of the stored idempotency fingerprint.
import crypto from 'node:crypto';
import type { App } from '../types.js';
import { addSharedSchema } from '../validation.js';
import { BankAccountInput, BankAccountView } from '../../domain/bank-accounts/schema.js';

export function registerBankAccountSchemas(app: App): void {
  for (const schema of [BankAccountInput, BankAccountView]) {
    if (!Object.hasOwn(app.getSchemas(), (schema as { $id?: string }).$id as string)) app.addSchema(schema);
    addSharedSchema(schema);
  }
}

/**
 * What the idempotency fingerprint sees of a request with a bank account: the IBAN and account
 * number as keyed digests, so that the stored request fingerprint is no unkeyed hash of them.
 */
export function redactBankAccountForFingerprint(key: Buffer) {
  return (body: unknown): unknown => {
    const account = (body as { bank_account?: Record<string, unknown> } | undefined)?.bank_account;
    if (!account || typeof account !== 'object') return body;
    const digest = (value: unknown) => crypto.createHmac('sha256', key).update(`idempotency:${String(value)}`).digest('base64url');
    const redacted = { ...account };
    for (const field of ['iban', 'account_number'] as const) if (field in redacted) redacted[field] = digest(redacted[field]);
    return { ...(body as object), bank_account: redacted };
  };
}
