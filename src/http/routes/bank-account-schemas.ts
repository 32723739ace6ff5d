// The bank account schemas (src/lib/bank-account-schemas.ts) are shared by beneficiaries and mandates;
// whichever module registers first adds them, the other finds them there (fastify refuses a
// schema id added twice).
import type { App } from '../types.js';
import { addSharedSchema } from '../validation.js';
import { BankAccountInput, BankAccountView } from '../../lib/bank-account-schemas.js';

export function registerBankAccountSchemas(app: App): void {
  for (const schema of [BankAccountInput, BankAccountView]) {
    if (!Object.hasOwn(app.getSchemas(), (schema as { $id?: string }).$id as string)) app.addSchema(schema);
    addSharedSchema(schema);
  }
}
